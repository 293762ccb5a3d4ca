"""Channels-first LayerNorm written out by hand on a contiguous NCHW map (mean and variance over dim 1,
normalize, per-channel affine): about ten eager ops, two strided reductions over the channel axis."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(channels) + 0.5)
        self.bias = nn.Parameter(torch.rand(channels) - 0.5)
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.mean(dim=1, keepdim=True)
        var = (x - mean).pow(2).mean(dim=1, keepdim=True)
        y = (x - mean) / torch.sqrt(var + self.eps)
        return self.weight[:, None, None] * y + self.bias[:, None, None]


BATCH = 32
CHANNELS = 128
HEIGHT = 256
WIDTH = 256
EPS = 1e-6


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 2.0 + 0.5]


def get_init_inputs():
    return [CHANNELS, EPS]
