"""AvgPool1d (window 8, stride 4, padding 2, padding counted) over long sequences."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


BATCH = 64
CHANNELS = 256
LENGTH = 65536
KERNEL = 8
STRIDE = 4
PADDING = 2


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [KERNEL, STRIDE, PADDING]
