"""MaxPool2d with a 4x4 window at stride 1 over a large NCHW map: 16 loads per output, neighbouring
windows overlapping in 12 of them, output about the size of the input."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride=stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


BATCH = 32
CHANNELS = 64
HEIGHT = 512
WIDTH = 512
KERNEL = 4
STRIDE = 1


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL, STRIDE]
