"""AdaptiveAvgPool2d from 64 x 64 down to 7 x 7: windows of 9 or 10 rows and columns that overlap and
differ in size, one 4096-value plane per (sample, channel)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, output_size: int):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


BATCH = 512
CHANNELS = 512
HEIGHT = 64
WIDTH = 64
OUTPUT_SIZE = 7


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [OUTPUT_SIZE]
