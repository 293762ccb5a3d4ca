"""Depthwise 3x3 Conv2d (one filter per channel, cuDNN) followed by eval-mode BatchNorm2d and ReLU6: a
memory-bound convolution whose epilogue Inductor fuses into one pointwise kernel."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=channels, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.bn.running_mean.normal_(0.0, 0.2)
            self.bn.running_var.uniform_(0.5, 1.5)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.2, 0.2)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(self.bn(self.conv(x)), 0.0, 6.0)


BATCH = 64
CHANNELS = 384
HEIGHT = 112
WIDTH = 112


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
