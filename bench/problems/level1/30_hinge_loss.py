"""Hinge loss mean(clamp(1 - pred * y, min=0)) with labels y in {-1, +1} broadcast over rows."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return torch.clamp(1.0 - pred * labels.unsqueeze(1), min=0.0).mean()


ROWS = 98304
COLS = 4096


def get_inputs():
    labels = torch.randint(0, 2, (ROWS,)).float() * 2.0 - 1.0
    return [torch.randn(ROWS, COLS), labels]


def get_init_inputs():
    return []
