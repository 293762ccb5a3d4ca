"""MaxPool2d 3x3, stride 2, padding 1 over an NCHW map: overlapping windowed max with padding."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


BATCH = 24
CHANNELS = 64
HEIGHT = 224
WIDTH = 224
KERNEL = 3
STRIDE = 2
PADDING = 1


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL, STRIDE, PADDING]
