"""Huber loss (delta = 1.5, quadratic/linear branches), mean over a 3-D tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, delta: float):
        super().__init__()
        self.delta = delta

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.huber_loss(pred, target, delta=self.delta)


BATCH = 768
ROWS = 1024
COLS = 1024
DELTA = 1.5


def get_inputs():
    return [torch.randn(BATCH, ROWS, COLS) * 2.0, torch.randn(BATCH, ROWS, COLS)]


def get_init_inputs():
    return [DELTA]
