"""Mish (x * tanh(softplus(x))) on an NCHW map: exp, log1p and tanh in one elementwise map."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.mish(x)


BATCH = 32
CHANNELS = 192
HEIGHT = 512
WIDTH = 512


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 3.0]


def get_init_inputs():
    return []
