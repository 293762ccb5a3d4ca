"""3x3 Conv2d, 2x2 max pooling, then hardtanh to [-1, 1]: conv followed by a window reduction + clamp."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardtanh(self.pool(self.conv(x)), min_val=-1.0, max_val=1.0)


BATCH = 128
IN_CHANNELS = 48
OUT_CHANNELS = 96
HEIGHT = 128
WIDTH = 128


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
