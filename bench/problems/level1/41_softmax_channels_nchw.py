"""Softmax over the channels of an NCHW map (dim 1, 384 channels): a reduction strided by H x W per pixel."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


BATCH = 64
CHANNELS = 384
HEIGHT = 128
WIDTH = 128


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 2.0]


def get_init_inputs():
    return []
