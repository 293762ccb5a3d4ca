"""Inclusive prefix product along rows: a multiplicative scan on values near 1 (no under/overflow)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=self.dim)


ROWS = 65536
COLS = 8192
DIM = 1


def get_inputs():
    # uniform in [0.99, 1.01]: products over 8192 steps stay O(1)
    return [torch.rand(ROWS, COLS) * 0.02 + 0.99]


def get_init_inputs():
    return [DIM]
