"""LayerNorm over the last dimension with learned affine: mean/variance row reduction plus a map."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


TOKENS = 196608
HIDDEN = 5120


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN) * 2.0 + 0.5]


def get_init_inputs():
    return [HIDDEN]
