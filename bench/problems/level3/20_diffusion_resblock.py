"""Diffusion U-Net residual block: GroupNorm-SiLU-conv3x3, plus a projected timestep embedding broadcast over
the map, GroupNorm-SiLU-conv3x3, residual add: grouped reductions and convs at 64 x 64 with 256 channels."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels: int, groups: int, emb_dim: int):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, channels)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.emb_proj = nn.Linear(emb_dim, channels)
        self.norm2 = nn.GroupNorm(groups, channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.emb_proj(F.silu(emb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return x + h


BATCH = 64
CHANNELS = 256
GROUPS = 32
EMB_DIM = 1024
HEIGHT = 64
WIDTH = 64


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH), torch.randn(BATCH, EMB_DIM)]


def get_init_inputs():
    return [CHANNELS, GROUPS, EMB_DIM]
