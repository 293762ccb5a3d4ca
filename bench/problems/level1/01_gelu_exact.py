"""Exact (erf) GELU on a large 2-D tensor: a pure elementwise, memory-bound map."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


ROWS = 49152
COLS = 32768


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
