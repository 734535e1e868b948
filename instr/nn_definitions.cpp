// The instruction-count definitions that need torch::nn or torch::optim: nn modules at tiny sizes,
// a few ops together (mesoscale) and small training steps. definitions() appends them after the plain
// ATen statements of definitions.cpp; the rules for adding one are written there.
//
// The only translation unit that includes the torch::nn / torch::optim headers.
#include <ATen/ATen.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/modules/rnn.h>
#include <torch/optim/sgd.h>

#include <memory>

#include "definitions.h"

namespace opbench::instr {

namespace {

namespace nn = torch::nn;
using A = Autograd;

}  // namespace

std::vector<Definition> nn_definitions() {
  return {
      // ---- nn modules at tiny sizes ---------------------------------------------------------------
      {"nn", "batchnorm2d", "BatchNorm2d(4)(x)  (x 2x4x4x4, training)", A::kBackward,
       [](const Ctx& c) {
         auto m = c.module(nn::BatchNorm2d(4));
         auto x = c.input(rand({2, 4, 4, 4}));
         return Stmt([=]() mutable { return m->forward(x); });
       }},
      {"nn", "groupnorm", "GroupNorm(2, 4)(x)  (x 2x4x4x4)", A::kBackward, [](const Ctx& c) {
         auto m = c.module(nn::GroupNorm(2, 4));
         auto x = c.input(rand({2, 4, 4, 4}));
         return Stmt([=]() mutable { return m->forward(x); });
       }},
      {"nn", "layernorm", "LayerNorm(4)(x)  (x 4x4)", A::kBackward, [](const Ctx& c) {
         auto m = c.module(nn::LayerNorm(nn::LayerNormOptions({4})));
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return m->forward(x); });
       }},
      {"nn", "conv1d", "Conv1d(4, 4, 1)(x)  (x 1x4x4)", A::kBackward, [](const Ctx& c) {
         auto m = c.module(nn::Conv1d(4, 4, 1));
         auto x = c.input(rand({1, 4, 4}));
         return Stmt([=]() mutable { return m->forward(x); });
       }},
      {"nn", "conv2d", "Conv2d(4, 4, 1)(x)  (x 1x4x4x4)", A::kBackward, [](const Ctx& c) {
         auto m = c.module(nn::Conv2d(4, 4, 1));
         auto x = c.input(rand({1, 4, 4, 4}));
         return Stmt([=]() mutable { return m->forward(x); });
       }},
      {"nn", "maxpool2d", "MaxPool2d(2)(x)  (x 1x4x4x4)", A::kBackward, [](const Ctx& c) {
         auto m = nn::MaxPool2d(2);
         auto x = c.input(rand({1, 4, 4, 4}));
         return Stmt([=]() mutable { return m->forward(x); });
       }},
      {"nn", "relu", "ReLU()(x)  (x 4x4)", A::kBackward, [](const Ctx& c) {
         auto m = nn::ReLU();
         auto x = c.input(rand({4, 4}) - 0.5);
         return Stmt([=]() mutable { return m->forward(x); });
       }},
      {"nn", "sigmoid", "Sigmoid()(x)  (x 4x4)", A::kBackward, [](const Ctx& c) {
         auto m = nn::Sigmoid();
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return m->forward(x); });
       }},
      {"nn", "linear", "Linear(4, 2)(x)  (x 4x4)", A::kBackward, [](const Ctx& c) {
         auto m = c.module(nn::Linear(4, 2));
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return m->forward(x); });
       }},
      {"nn", "lstm", "std::get<0>(LSTM(4, 2)(x))  (x 2x1x4)", A::kBackward,
       [](const Ctx& c) {
         auto m = c.module(nn::LSTM(4, 2));
         auto x = c.input(rand({2, 1, 4}));
         return Stmt([=]() mutable { return std::get<0>(m->forward(x)); });
       },
       40},

      // ---- mesoscale: a few ops together ----------------------------------------------------------
      {"mesoscale", "mm_bias_relu", "at::relu(at::mm(x, w) + b)  (4x4)", A::kBackward,
       [](const Ctx& c) {
         auto x = rand({4, 4}), w = c.input(rand({4, 4})), b = c.input(rand({4}));
         return Stmt([=]() mutable { return at::relu(at::mm(x, w) + b); });
       }},
      {"mesoscale", "mm_bias_relu_64", "at::relu(at::mm(x, w) + b)  (64x64)", A::kBackward,
       [](const Ctx& c) {
         auto x = rand({64, 64}), w = c.input(rand({64, 64})), b = c.input(rand({64}));
         return Stmt([=]() mutable { return at::relu(at::mm(x, w) + b); });
       },
       20},
      {"mesoscale", "off_diagonal_indices", "at::arange(e.numel()).index({e.flatten() == 0})",
       A::kForward, [](const Ctx&) {
         auto e = at::eye(4);
         return Stmt([=]() mutable { return at::arange(e.numel()).index({e.flatten() == 0}); });
       }},

      // ---- small training graphs: each statement is a whole step, backward included ---------------
      {"training", "linear_regression_step",
       "loss = (addmm(b, x, w) - y).pow(2).mean(); loss.backward(); w -= lr * w.grad ...",
       A::kStep, [](const Ctx& c) {
         auto x = rand({8, 4}), y = rand({8, 1});
         auto w = c.input(at::zeros({4, 1})), b = c.input(at::zeros({1}));
         return Stmt([=]() mutable {
           auto loss = (at::addmm(b, x, w) - y).pow(2).mean();
           loss.backward();
           at::NoGradGuard no_grad;
           for (const auto& p : {w, b}) {
             p.sub_(p.grad(), 0.01);
             p.mutable_grad().zero_();
           }
           return at::Tensor();
         });
       },
       40},
      {"training", "mlp_sgd_step",
       "opt.zero_grad(); mse_loss(Linear(4,8) > ReLU > Linear(8,2) (x), y).backward(); opt.step()",
       A::kStep, [](const Ctx&) {
         nn::Sequential model(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 2));
         auto opt = std::make_shared<torch::optim::SGD>(model->parameters(),
                                                        torch::optim::SGDOptions(0.01));
         auto x = rand({8, 4}), y = rand({8, 2});
         return Stmt([=]() mutable {
           opt->zero_grad();
           auto loss = nn::functional::mse_loss(model->forward(x), y);
           loss.backward();
           opt->step();
           return at::Tensor();
         });
       },
       20},
      {"training", "ensemble_backward",
       "sum_i relu(mm(x, w_i) + b_i).sum() for 4 (w_i, b_i); backward; grads reset", A::kStep,
       [](const Ctx& c) {
         auto x = rand({4, 4});
         std::vector<at::Tensor> params;
         for (int i = 0; i < 4; ++i) {
           params.push_back(c.input(rand({4, 4})));
           params.push_back(c.input(rand({4})));
         }
         return Stmt([=]() mutable {
           at::Tensor loss;
           for (size_t i = 0; i < params.size(); i += 2) {
             auto term = at::relu(at::mm(x, params[i]) + params[i + 1]).sum();
             loss = loss.defined() ? loss + term : term;
           }
           loss.backward();
           for (const auto& p : params) p.mutable_grad().reset();
           return at::Tensor();
         });
       },
       40},
  };
}

}  // namespace opbench::instr
