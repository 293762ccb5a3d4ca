"""Reversed (suffix) cumulative sum via flip -> cumsum -> flip: a scan running right to left."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flip(torch.cumsum(torch.flip(x, dims=(self.dim,)), dim=self.dim), dims=(self.dim,))


ROWS = 24576
COLS = 12288
DIM = 1


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [DIM]
