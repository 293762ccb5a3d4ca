"""LayerNorm over the last three dims of an NCHW map (C x H x W = 8M values per sample) with a learned
elementwise affine: few, very large rows, so one program per row leaves most of the GPU idle."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels: int, height: int, width: int):
        super().__init__()
        self.norm = nn.LayerNorm([channels, height, width], eps=1e-5)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


BATCH = 24  # 32 took 16.8 ms per eager forward on an H100 (bench/results/2026-12-06-suite-survey-h100)
CHANNELS = 128
HEIGHT = 256
WIDTH = 256


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 1.5 + 0.25]


def get_init_inputs():
    return [CHANNELS, HEIGHT, WIDTH]
