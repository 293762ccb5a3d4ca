"""AvgPool2d 3x3, stride 2, padding 1, ceil mode, padding not counted, on an odd-sized (223 x 223) map:
each window's divisor depends on how much of it lies inside the input."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size, stride=stride, padding=padding, ceil_mode=True,
                                 count_include_pad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


BATCH = 128
CHANNELS = 128
HEIGHT = 223
WIDTH = 223
KERNEL = 3
STRIDE = 2
PADDING = 1


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL, STRIDE, PADDING]
