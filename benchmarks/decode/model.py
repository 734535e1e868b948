"""The decode models of the Llama2 and Mixtral families in PyTorch, as gpt-fast's model.py writes them: the
one-token decode step that the `inductor` backend compiles and that the compiled-Python reference
(gpu_checks) runs under torch.compile(mode="reduce-overhead").

Same architecture, configurations, layouts and byte count as the C++ model (model.h): wqkv = [q heads |
k heads | v heads] x dim, w13 = [w1 | w3] x dim (experts [E, 2 ffn, dim]), int8 weight-only linears
y = (x . W^T) * scale (gpt-fast's WeightOnlyInt8Linear), int4 weight-only linears (dense models, every
linear and the output head; not compiled by bench_ops' inductor backend) by _weight_int4pack_mm as
gpt-fast's WeightOnlyInt4Linear, a static KV cache per layer [kv_heads, max_len,
head_dim] written in place (mutable state), RoPE on pairs (2i, 2i+1). Weights and caches are buffers:
the package leaves them out, and bench_ops loads the C++ model's tensors under these names.
"""
import math

import torch
import torch.nn.functional as F

CONFIGS = {  # as model.cpp's model_config; the order is bench_ops' shape index (dims[0])
    "7b": dict(dim=4096, n_layers=32, n_heads=32, n_kv_heads=32, ffn=11008, vocab=32000, experts=0, top_k=0,
               rope_base=1e4, new_tokens=200),
    "8x7b": dict(dim=4096, n_layers=16, n_heads=32, n_kv_heads=8, ffn=14336, vocab=32000, experts=8, top_k=2,
                 rope_base=1e6, new_tokens=200),
    "tiny": dict(dim=256, n_layers=2, n_heads=4, n_kv_heads=4, ffn=512, vocab=512, experts=0, top_k=0,
                 rope_base=1e4, new_tokens=16),
    "tiny-moe": dict(dim=256, n_layers=2, n_heads=4, n_kv_heads=2, ffn=384, vocab=512, experts=8, top_k=2,
                     rope_base=1e6, new_tokens=16),
    "70b": dict(dim=8192, n_layers=80, n_heads=64, n_kv_heads=8, ffn=28672, vocab=32000, experts=0, top_k=0,
                rope_base=1e4, new_tokens=200),
    "tiny-gqa": dict(dim=256, n_layers=2, n_heads=4, n_kv_heads=2, ffn=512, vocab=512, experts=0, top_k=0,
                     rope_base=1e4, new_tokens=16),
    "8b": dict(dim=4096, n_layers=32, n_heads=32, n_kv_heads=8, ffn=14336, vocab=128256, experts=0, top_k=0,
               rope_base=5e5, new_tokens=200),
}
PROMPT_LEN = 6


GROUP = 128  # int4: gpt-fast's group size along the input dimension
INNER_K_TILES = 8  # int4: gpt-fast's default inner-k tiles for _convert_weight_to_int4pack


def streamed_bytes_per_token(c, int8, int4=False):
    """Bytes one decode step streams (model.h): linear weights (+ int8 scales; int4: half a byte a weight
    and a bf16 scale and zero per group), norms and the output head; not the embedding table; experts:
    top_k of them."""
    a = 2.0

    def lin(out, inp):
        if int4:
            return out * inp * (0.5 + 4.0 / GROUP)
        return out * inp * (1.0 if int8 else a) + (out * a if int8 else 0.0)
    hd = c["dim"] // c["n_heads"]
    ffn = lin(2 * c["ffn"], c["dim"]) + lin(c["dim"], c["ffn"])
    if c["experts"]:
        ffn = lin(c["experts"], c["dim"]) + c["top_k"] * ffn
    layer = 2 * c["dim"] * a + lin((c["n_heads"] + 2 * c["n_kv_heads"]) * hd, c["dim"]) + \
        lin(c["dim"], c["n_heads"] * hd) + ffn
    return c["n_layers"] * layer + c["dim"] * a + lin(c["vocab"], c["dim"])


def pack_int4(q):
    """q (values 0..15, [..., 2n]) -> uint8 [..., n], the even column in the high nibble (the bytes
    _convert_weight_to_int4pack takes on CUDA, and the own GEMV's layout)."""
    q = q.to(torch.int32)
    return (q[..., ::2] * 16 + q[..., 1::2]).to(torch.uint8)


def int4_weights(shape, device):
    """Random int4 weights as bench_ops' model makes them (model.h): q uniform in [0, 15], per group of 128
    inputs scale (0.5..1.5) / (4.8 sqrt(fan_in)) and zero 0.5 scale randn in bf16; returns the weights in
    PyTorch's int4 layout (gpt-fast's prepare_int4_weight_and_scales_and_zeros) and scales_and_zeros
    [in / 128, out, 2]."""
    out_f, in_f = shape
    q = torch.randint(0, 16, shape, dtype=torch.int32, device=device)
    s = (torch.rand(out_f, in_f // GROUP, device=device) + 0.5) / (4.8 * math.sqrt(in_f))
    z = torch.randn(out_f, in_f // GROUP, device=device) * 0.5 * s
    scales_and_zeros = torch.stack([s, z], -1).to(torch.bfloat16).transpose(0, 1).contiguous()
    if q.is_cuda:
        return torch.ops.aten._convert_weight_to_int4pack(pack_int4(q), INNER_K_TILES), scales_and_zeros
    return torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, INNER_K_TILES), scales_and_zeros


class Linear(torch.nn.Module):
    """Weights as buffers, so torch.compile's CUDA graphs treat them as static (nothing copied per call).
    int4: gpt-fast's WeightOnlyInt4Linear, x @ W^T by torch.ops.aten._weight_int4pack_mm (dense layers only)."""

    def __init__(self, shape, int8, device, int4=False):
        super().__init__()
        fan_in = shape[-1]
        self.int4 = int4
        if int4:
            if len(shape) != 2:
                raise ValueError("int4 weights for dense layers only")
            self.out_features = shape[0]
            w, scales_and_zeros = int4_weights(shape, device)
            self.register_buffer("w", w)
            self.register_buffer("scales_and_zeros", scales_and_zeros)
            self.scale = None
        elif int8:
            self.register_buffer("w", torch.randint(-127, 128, shape, dtype=torch.int8, device=device))
            scale = (torch.rand(shape[:-1], device=device) + 0.5) / (73.3 * math.sqrt(fan_in))
            self.register_buffer("scale", scale.to(torch.bfloat16))
        else:
            self.register_buffer("w", torch.randn(shape, dtype=torch.bfloat16, device=device).mul_(1 / math.sqrt(fan_in)))
            self.scale = None

    def forward(self, x):
        if self.int4:
            mm = torch.ops.aten._weight_int4pack_mm if x.is_cuda else torch.ops.aten._weight_int4pack_mm_for_cpu
            y = mm(x.reshape(-1, x.shape[-1]), self.w, GROUP, self.scales_and_zeros)
            return y.reshape(x.shape[:-1] + (self.out_features,))
        if self.scale is None:
            return F.linear(x, self.w)
        return F.linear(x, self.w.to(x.dtype)) * self.scale

    def experts(self, x, idx):  # x [k, in], idx [k]: y[j] = W[idx[j]] . x[j]
        w = self.w[idx].to(x.dtype)
        y = torch.einsum("ki,koi->ko", x, w)
        return y if self.scale is None else y * self.scale[idx]


class Layer(torch.nn.Module):
    def __init__(self, c, int8, device, max_len, int4=False):
        super().__init__()
        hd, e = c["dim"] // c["n_heads"], c["experts"]
        bf = dict(dtype=torch.bfloat16, device=device)
        shape = (lambda o, i: (e, o, i) if e else (o, i))
        self.register_buffer("attn_norm", torch.randn(c["dim"], **bf) * 0.1 + 1)
        self.register_buffer("ffn_norm", torch.randn(c["dim"], **bf) * 0.1 + 1)
        self.wqkv = Linear(((c["n_heads"] + 2 * c["n_kv_heads"]) * hd, c["dim"]), int8, device, int4)
        self.wo = Linear((c["dim"], c["n_heads"] * hd), int8, device, int4)
        self.w13 = Linear(shape(2 * c["ffn"], c["dim"]), int8, device, int4)
        self.w2 = Linear(shape(c["dim"], c["ffn"]), int8, device, int4)
        self.gate = Linear((e, c["dim"]), int8, device) if e else None
        self.register_buffer("k_cache", torch.zeros(c["n_kv_heads"], max_len, hd, **bf))
        self.register_buffer("v_cache", torch.zeros(c["n_kv_heads"], max_len, hd, **bf))


class Model(torch.nn.Module):
    def __init__(self, c, int8, device, int4=False):
        super().__init__()
        self.c, self.hd = c, c["dim"] // c["n_heads"]
        self.max_len = PROMPT_LEN + c["new_tokens"]
        bf = dict(dtype=torch.bfloat16, device=device)
        self.register_buffer("tok_emb", torch.randn(c["vocab"], c["dim"], **bf))
        self.register_buffer("norm", torch.randn(c["dim"], **bf) * 0.1 + 1)
        self.output = Linear((c["vocab"], c["dim"]), int8, device, int4)  # gpt-fast's int4 handler takes it too
        self.layers = torch.nn.ModuleList(Layer(c, int8, device, self.max_len, int4) for _ in range(c["n_layers"]))
        inv_freq = 1.0 / (c["rope_base"] ** (torch.arange(0, self.hd, 2, dtype=torch.float64, device=device) / self.hd))
        angles = torch.outer(torch.arange(self.max_len, dtype=torch.float64, device=device), inv_freq)
        self.register_buffer("cos", angles.cos().float())
        self.register_buffer("sin", angles.sin().float())


def rms_norm(x, w, eps=1e-5):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).type_as(x) * w


def rope(x, cos, sin):  # x [heads, hd], pairs (2i, 2i+1)
    xf = x.float().view(x.shape[0], -1, 2)
    x0, x1 = xf[..., 0], xf[..., 1]
    return torch.stack([x0 * cos - x1 * sin, x1 * cos + x0 * sin], -1).flatten(1).type_as(x)


def feed_forward(layer, c, xn):
    """The FFN's output [1, dim], and for experts the route: indices [top_k] and weights [top_k] (fp32)."""
    if not c["experts"]:
        h13 = layer.w13(xn)
        return layer.w2(F.silu(h13[:, :c["ffn"]]) * h13[:, c["ffn"]:]), None
    probs = torch.softmax(layer.gate(xn).float(), -1)[0]
    weights, idx = torch.topk(probs, c["top_k"])
    weights = weights / weights.sum()
    h13 = layer.w13.experts(xn.expand(c["top_k"], -1), idx)
    a = F.silu(h13[:, :c["ffn"]]) * h13[:, c["ffn"]:]
    return (layer.w2.experts(a, idx) * weights.to(xn.dtype).unsqueeze(1)).sum(0, keepdim=True), (idx, weights)


def decode_logits(m, token, pos):
    """Logits [1, vocab] after token [1] at position pos [1], and the experts' routes of each layer
    (empty for a dense model); writes the KV cache."""
    c, hd = m.c, m.hd
    h = m.tok_emb[token]  # [1, dim]
    cos, sin = m.cos[pos], m.sin[pos]
    mask = (torch.arange(m.max_len, device=token.device) <= pos).view(1, 1, 1, -1)
    routes = []
    for layer in m.layers:
        qkv = layer.wqkv(rms_norm(h, layer.attn_norm))[0]
        q = rope(qkv[:c["n_heads"] * hd].view(c["n_heads"], hd), cos, sin)
        k = rope(qkv[c["n_heads"] * hd:(c["n_heads"] + c["n_kv_heads"]) * hd].view(c["n_kv_heads"], hd), cos, sin)
        v = qkv[(c["n_heads"] + c["n_kv_heads"]) * hd:].view(c["n_kv_heads"], hd)
        layer.k_cache.index_copy_(1, pos, k.unsqueeze(1))
        layer.v_cache.index_copy_(1, pos, v.unsqueeze(1))
        att = F.scaled_dot_product_attention(q.view(1, c["n_heads"], 1, hd), layer.k_cache.unsqueeze(0),
                                             layer.v_cache.unsqueeze(0), attn_mask=mask,
                                             enable_gqa=c["n_kv_heads"] != c["n_heads"])
        h = h + layer.wo(att.view(1, -1))
        ffn, route = feed_forward(layer, c, rms_norm(h, layer.ffn_norm))
        h = h + ffn
        if route is not None:
            routes.append(route)
    return m.output(rms_norm(h, m.norm)), routes


def decode_one_token(m, token, pos):
    """The greedy next token [1] after token [1] at position pos [1]; writes the KV cache."""
    return torch.argmax(decode_logits(m, token, pos)[0], -1)


class DecodeStep(torch.nn.Module):
    """The step bench_ops' inductor backend runs: logits of one token (the C++ generation picks the next)
    and, for experts, the routes it took -- indices [layers, 1, top_k] and weights [layers, 1, top_k]
    (fp32) -- which bench_ops' check makes the ATen forward follow, as it does for its own kernels."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, token, pos):
        logits, routes = decode_logits(self.model, token, pos)
        if not routes:
            return logits
        idx = torch.stack([i for i, _ in routes]).unsqueeze(1)
        return logits, idx, torch.stack([w for _, w in routes]).unsqueeze(1)


def config_of(dims):
    """bench_ops' dims {configuration index, layers} as a configuration."""
    c = dict(CONFIGS[list(CONFIGS)[dims[0]]])
    c["n_layers"] = dims[1]
    return c


def case(dtype, dims, device):
    """The step and example inputs of Llama2|Mixtral/<dtype>/<config>-<layers>L: token [1], pos [1]."""
    step = DecodeStep(Model(config_of(dims), dtype == torch.int8, device))
    zero = torch.zeros(1, dtype=torch.int64, device=device)
    return step, (zero, zero.clone())
