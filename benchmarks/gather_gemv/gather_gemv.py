"""Gather-GEMV as gpt-fast's gather_gemv experiment writes it, `W[idx].to(x.dtype) @ x` (a mixture of
experts picking 2 of 8): the function the `inductor` backend compiles. The C++ family
(gather_gemv.cpp) passes the same inputs in the same order."""
import torch

EXPERTS = 8
CHOSEN = (3, 5)


class GatherGemv(torch.nn.Module):
    def forward(self, w, idx, x):
        return w[idx].to(x.dtype) @ x


def case(dtype, dims, device):
    """The module and example inputs of GatherGemv/<dtype>/<d>: W (8 x d x d, dtype), idx [3, 5], x (d, bf16)."""
    d = dims[0]
    if dtype == torch.int8:
        w = torch.randint(-127, 128, (EXPERTS, d, d), dtype=torch.int8, device=device)
    else:
        w = torch.randn(EXPERTS, d, d, dtype=dtype, device=device)
    idx = torch.tensor(CHOSEN, dtype=torch.int64, device=device)
    return GatherGemv(), (w, idx, torch.randn(d, dtype=torch.bfloat16, device=device))
