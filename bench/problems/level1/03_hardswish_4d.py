"""Hardswish on an NCHW feature map: a piecewise elementwise op on a 4-D tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardswish(x)


BATCH = 64
CHANNELS = 96
HEIGHT = 512
WIDTH = 512


def get_inputs():
    # scaled so that all three pieces (0, ramp, identity) are well populated
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 4.0]


def get_init_inputs():
    return []
