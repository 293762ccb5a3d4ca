"""Depthwise-separable conv block: depthwise 3x3 conv-BN-ReLU6 then pointwise 1x1 conv-BN-ReLU6."""
import torch
import torch.nn as nn


def _bn(channels):
    bn = nn.BatchNorm2d(channels)
    with torch.no_grad():
        bn.running_mean.normal_(0.0, 0.1)
        bn.running_var.uniform_(0.5, 1.5)
    return bn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, 3, padding=1, groups=in_channels, bias=False)
        self.bn_dw = _bn(in_channels)
        self.pointwise = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.bn_pw = _bn(out_channels)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.clamp(self.bn_dw(self.depthwise(x)), 0.0, 6.0)
        return torch.clamp(self.bn_pw(self.pointwise(x)), 0.0, 6.0)


BATCH = 80
IN_CHANNELS = 128
OUT_CHANNELS = 256
HEIGHT = 112
WIDTH = 112


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
