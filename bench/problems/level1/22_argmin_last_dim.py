"""Argmin over the last dimension: an index-producing row reduction (int64 output)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmin(x, dim=-1)


ROWS = 262144
COLS = 6144


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
