"""Leaky ReLU with a constructor-chosen slope: a branchy elementwise map."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(x, negative_slope=self.negative_slope)


ROWS = 196608
COLS = 8192
NEGATIVE_SLOPE = 0.02


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [NEGATIVE_SLOPE]
