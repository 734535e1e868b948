"""gpt-fast's SimpleMLP (Linear -> LayerNorm -> Linear -> LayerNorm on one token): the module the
`inductor` backend compiles. Its parameters are not packaged: the C++ family (mlp.cpp) loads its own
tensors into the package under these names (layers.0.weight, layers.0.bias, ..., layers.3.bias)."""
import torch


class SimpleMLP(torch.nn.Module):
    def __init__(self, dim, hidden, dtype):
        super().__init__()
        self.layers = torch.nn.ModuleList([
            torch.nn.Linear(dim, hidden, dtype=dtype), torch.nn.LayerNorm(hidden, dtype=dtype),
            torch.nn.Linear(hidden, dim, dtype=dtype), torch.nn.LayerNorm(dim, dtype=dtype)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def case(dtype, dims, device):
    """The module and example input of MLP/<dtype>/<d> (hidden 14336) or <d>x<hidden>: x (d,)."""
    dim, hidden = dims
    return SimpleMLP(dim, hidden, dtype).to(device), (torch.randn(dim, dtype=dtype, device=device),)
