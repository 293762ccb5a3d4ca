"""Inclusive prefix sum along rows: a scan (sequential dependency along the axis)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=self.dim)


ROWS = 4096
COLS = 16384
DIM = 1


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [DIM]
