"""Two VGG-style stages, each conv3x3-ReLU, conv3x3-ReLU, 2x2 max pool (3 -> 64 -> 128 channels)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, widths: list):
        super().__init__()
        layers = []
        prev = in_channels
        for width in widths:
            layers += [
                nn.Conv2d(prev, width, 3, padding=1), nn.ReLU(),
                nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
                nn.MaxPool2d(2, 2),
            ]
            prev = width
        self.features = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.features(x)


BATCH = 16
IN_CHANNELS = 3
IMAGE_SIZE = 224
WIDTHS = [64, 128]


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE_SIZE, IMAGE_SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, WIDTHS]
