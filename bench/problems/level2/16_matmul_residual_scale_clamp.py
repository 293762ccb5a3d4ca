"""Square matmul plus a scaled residual of its input (x @ W + alpha * x), clamped to [-3, 3]."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden: int, alpha: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden, hidden) / hidden ** 0.5)
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(torch.mm(x, self.weight) + self.alpha * x, min=-3.0, max=3.0)


TOKENS = 18432
HIDDEN = 2048
ALPHA = 0.5


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, ALPHA]
