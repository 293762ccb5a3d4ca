"""MaxPool3d 3x3x3, stride 2, padding 1, on a 5-D volume: 27-point padded max windows over depth, height and width."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


BATCH = 16
CHANNELS = 32
DEPTH = 64
HEIGHT = 128
WIDTH = 128
KERNEL = 3
STRIDE = 2
PADDING = 1


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL, STRIDE, PADDING]
