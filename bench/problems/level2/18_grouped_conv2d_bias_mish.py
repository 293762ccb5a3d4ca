"""Grouped 3x3 Conv2d (8 groups of 32 channels, ResNeXt-style) with bias, then Mish: a grouped cuDNN
convolution and an exp/log1p/tanh epilogue."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=groups)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.mish(self.conv(x))


BATCH = 64
CHANNELS = 256
GROUPS = 8
HEIGHT = 112
WIDTH = 112


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, GROUPS]
