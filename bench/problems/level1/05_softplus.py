"""Softplus with beta and threshold: exp/log1p elementwise with a linear cut-over region."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, beta: float, threshold: float):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x, beta=self.beta, threshold=self.threshold)


ROWS = 131072
COLS = 12288
BETA = 2.0
THRESHOLD = 10.0


def get_inputs():
    # wide range so the threshold (linear) branch is exercised too
    return [torch.randn(ROWS, COLS) * 6.0]


def get_init_inputs():
    return [BETA, THRESHOLD]
