"""ConvNeXt-style stem: a 4x4 stride-4 "patchify" Conv2d from RGB to 96 channels, then LayerNorm over the
channels through an NHWC permute and back: a small-channel conv and a layout change around a norm."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, dim: int, patch: int):
        super().__init__()
        self.stem = nn.Conv2d(in_channels, dim, kernel_size=patch, stride=patch)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.2, 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.stem(x).permute(0, 2, 3, 1)
        return self.norm(y).permute(0, 3, 1, 2)


BATCH = 256
IN_CHANNELS = 3
DIM = 96
PATCH = 4
IMAGE_SIZE = 512


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE_SIZE, IMAGE_SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, DIM, PATCH]
