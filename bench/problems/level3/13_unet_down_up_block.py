"""One U-Net level: conv-ReLU, max-pool down, conv-ReLU at half resolution, transposed-conv up,
concatenate the skip connection, fuse conv-ReLU."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, width: int):
        super().__init__()
        self.enc = nn.Conv2d(in_channels, width, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.mid = nn.Conv2d(width, 2 * width, 3, padding=1)
        self.up = nn.ConvTranspose2d(2 * width, width, kernel_size=2, stride=2)
        self.dec = nn.Conv2d(2 * width, width, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skip = torch.relu(self.enc(x))
        y = torch.relu(self.mid(self.pool(skip)))
        y = self.up(y)
        return torch.relu(self.dec(torch.cat([y, skip], dim=1)))


BATCH = 48
IN_CHANNELS = 32
WIDTH = 64
HEIGHT = 128
IMG_WIDTH = 128


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, IMG_WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, WIDTH]
