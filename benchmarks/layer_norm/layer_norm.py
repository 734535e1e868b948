"""LayerNorm as PyTorch users write it: the function the `inductor` backend compiles (gpt-fast's
layer_norm experiment). The C++ family (layer_norm.cpp) passes the same inputs in the same order."""
import torch
import torch.nn.functional as F

EPS = 1e-5


class LayerNorm(torch.nn.Module):
    def forward(self, x, weight, bias):
        return F.layer_norm(x, (x.shape[-1],), weight, bias, EPS)


def case(dtype, dims, device):
    """The module and example inputs of LayerNorm/<dtype>/<batch>x<dim>: x, weight, bias."""
    batch, dim = dims
    make = lambda *shape: torch.randn(*shape, dtype=dtype, device=device)   # noqa: E731
    return LayerNorm(), (make(batch, dim), make(dim), make(dim))
