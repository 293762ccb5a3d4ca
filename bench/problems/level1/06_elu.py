"""ELU with a non-default alpha: expm1 on the negative half, identity on the positive half."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.elu(x, alpha=self.alpha)


ROWS = 98304
COLS = 16384
ALPHA = 0.7


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [ALPHA]
