"""MaxPool1d (window 5, stride 3, padding 2, dilation 2, ceil mode) over long sequences: a dilated, padded
window whose last output may hang past the input."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding, dilation=dilation, ceil_mode=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


BATCH = 64
CHANNELS = 256
LENGTH = 65536
KERNEL = 5
STRIDE = 3
PADDING = 2
DILATION = 2


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [KERNEL, STRIDE, PADDING, DILATION]
