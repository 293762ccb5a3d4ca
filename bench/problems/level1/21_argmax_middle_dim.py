"""Argmax over the middle dimension of a 3-D tensor: an index-producing reduction (int64 output)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=1)


BATCH = 2048
REDUCE = 2048
INNER = 384


def get_inputs():
    return [torch.randn(BATCH, REDUCE, INNER)]


def get_init_inputs():
    return []
