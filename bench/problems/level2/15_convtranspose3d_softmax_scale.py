"""Stride-2 ConvTranspose3d (2x volume upsample), softmax over channels, then a learned per-channel scale."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size=3, stride=2, padding=1, output_padding=1
        )
        self.channel_scale = nn.Parameter(torch.rand(out_channels, 1, 1, 1) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.deconv(x), dim=1) * self.channel_scale


BATCH = 16
IN_CHANNELS = 32
OUT_CHANNELS = 16
DEPTH = 32
HEIGHT = 48
WIDTH = 48


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
