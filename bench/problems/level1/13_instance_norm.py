"""InstanceNorm2d with affine parameters: one mean/variance per (sample, channel) plane."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels, eps=1e-5, affine=True)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


BATCH = 128
CHANNELS = 64
HEIGHT = 320
WIDTH = 320


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 1.5 - 0.3]


def get_init_inputs():
    return [CHANNELS]
