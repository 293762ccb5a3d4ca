"""3x3x3 Conv3d followed by InstanceNorm3d (affine) and ReLU, as in volumetric segmentation networks: a
conv, then per-(sample, channel) statistics over a 128K-voxel volume and a map."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size=3, padding=1, bias=False)
        self.norm = nn.InstanceNorm3d(out_channels, affine=True)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.2, 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(self.conv(x)))


BATCH = 32
IN_CHANNELS = 32
OUT_CHANNELS = 64
DEPTH = 32
HEIGHT = 64
WIDTH = 64


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
