"""Softmax over the middle dimension of a 3-D tensor: a strided (non-contiguous) reduction axis."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


BATCH = 64
REDUCE = 512
INNER = 12288


def get_inputs():
    return [torch.randn(BATCH, REDUCE, INNER)]


def get_init_inputs():
    return []
