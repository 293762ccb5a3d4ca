"""SiLU (x * sigmoid(x)) on a wide 2-D tensor: elementwise, memory-bound."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(x)


ROWS = 24576
COLS = 65536


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
