"""MobileNetV2-style inverted residual: 1x1 expand (x6)-BN-ReLU6, depthwise 3x3-BN-ReLU6, 1x1 project-BN, residual."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def _bn(channels):
    bn = nn.BatchNorm2d(channels)
    with torch.no_grad():
        bn.running_mean.normal_(0.0, 0.1)
        bn.running_var.uniform_(0.5, 1.5)
    return bn


class Model(nn.Module):
    def __init__(self, channels: int, expansion: int):
        super().__init__()
        wide = channels * expansion
        self.expand = nn.Conv2d(channels, wide, 1, bias=False)
        self.bn1 = _bn(wide)
        self.dw = nn.Conv2d(wide, wide, 3, padding=1, groups=wide, bias=False)
        self.bn2 = _bn(wide)
        self.project = nn.Conv2d(wide, channels, 1, bias=False)
        self.bn3 = _bn(channels)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu6(self.bn1(self.expand(x)))
        y = F.relu6(self.bn2(self.dw(y)))
        return x + self.bn3(self.project(y))


BATCH = 128
CHANNELS = 64
EXPANSION = 6
HEIGHT = 56
WIDTH = 56


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, EXPANSION]
