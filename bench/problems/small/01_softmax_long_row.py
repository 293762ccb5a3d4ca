"""Softmax over a very long row (32768): a row reduction that no longer fits one block."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


ROWS = 2048
ROW_LEN = 32768


def get_inputs():
    return [torch.randn(ROWS, ROW_LEN) * 3.0]


def get_init_inputs():
    return []
