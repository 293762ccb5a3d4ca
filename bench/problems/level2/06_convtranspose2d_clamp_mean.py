"""Stride-2 ConvTranspose2d (2x upsample), clamp to [-0.25, 0.25], then mean over channels."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, lo: float, hi: float):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size=4, stride=2, padding=1)
        self.lo = lo
        self.hi = hi

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.clamp(self.deconv(x), min=self.lo, max=self.hi)
        return y.mean(dim=1, keepdim=True)


BATCH = 64
IN_CHANNELS = 64
OUT_CHANNELS = 32
HEIGHT = 128
WIDTH = 128
LO = -0.25
HI = 0.25


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, LO, HI]
