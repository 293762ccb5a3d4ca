"""Swish with a learned per-channel slope, x * sigmoid(beta_c * x), on an NCHW map: three eager ops
(scale, sigmoid, product) that one kernel can fuse, with a broadcast per-channel parameter."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.beta = nn.Parameter(torch.rand(channels, 1, 1) * 1.5 + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.beta * x)


BATCH = 64
CHANNELS = 128
HEIGHT = 256
WIDTH = 256


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 2.0]


def get_init_inputs():
    return [CHANNELS]
