"""Sum over the innermost (contiguous) dimension with keepdim: a plain row reduction."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=-1, keepdim=True)


ROWS = 65536
COLS = 32768


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
