"""Stride-2 ConvTranspose1d (2x upsample of long sequences, as in audio decoders), tanh, then a learned
per-channel gain: a transposed cuDNN convolution and a broadcast epilogue."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose1d(in_channels, out_channels, kernel_size=4, stride=2, padding=1)
        self.gain = nn.Parameter(torch.rand(out_channels, 1) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.deconv(x)) * self.gain


BATCH = 64
IN_CHANNELS = 256
OUT_CHANNELS = 128
LENGTH = 8192


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
