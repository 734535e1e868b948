"""GEMV as gpt-fast's gemv experiment writes it, `W.to(x.dtype) @ x`: the function the `inductor` backend
compiles. The C++ family (gemv.cpp) passes the same inputs in the same order."""
import torch


class Gemv(torch.nn.Module):
    def forward(self, w, x):
        return w.to(x.dtype) @ x


def weights(shape, dtype, device):
    """Random weights, never zeros: int8 uniform in [-127, 127], else randn (as the C++ family)."""
    if dtype == torch.int8:
        return torch.randint(-127, 128, shape, dtype=torch.int8, device=device)
    return torch.randn(shape, dtype=dtype, device=device)


def case(dtype, dims, device):
    """The module and example inputs of Gemv/<dtype>/<d>: W (d x d, dtype), x (d, bf16)."""
    d = dims[0]
    return Gemv(), (weights((d, d), dtype, device), torch.randn(d, dtype=torch.bfloat16, device=device))
