"""3x3x3 Conv3d, leaky ReLU, a per-channel learned bias broadcast over the volume, then sigmoid."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size=3, padding=1)
        self.channel_bias = nn.Parameter(torch.randn(out_channels, 1, 1, 1) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.leaky_relu(self.conv(x), negative_slope=0.1)
        return torch.sigmoid(y + self.channel_bias)


BATCH = 32
IN_CHANNELS = 16
OUT_CHANNELS = 32
DEPTH = 32
HEIGHT = 64
WIDTH = 64


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
