"""Causal depthwise Conv1d (kernel 4, left padding only, as in Mamba-style blocks) then SiLU: a per-channel
short filter over long sequences, padded on both sides and sliced back to the input length."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel_size, groups=channels, padding=kernel_size - 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.conv(x)[..., : x.shape[-1]])


BATCH = 32
CHANNELS = 2048
LENGTH = 4096
KERNEL = 4


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL]
