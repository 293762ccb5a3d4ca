"""MaxPool2d 3x3, stride 2, padding 1, dilation 2, ceil mode, on an odd-sized (255 x 255) NCHW map:
dilated windows, padding and a partial last row and column."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding, dilation=dilation, ceil_mode=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


BATCH = 64
CHANNELS = 128
HEIGHT = 255
WIDTH = 255
KERNEL = 3
STRIDE = 2
PADDING = 1
DILATION = 2


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL, STRIDE, PADDING, DILATION]
