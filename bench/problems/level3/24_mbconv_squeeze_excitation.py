"""EfficientNet MBConv block: 1x1 expand (x6)-BN-SiLU, depthwise 5x5-BN-SiLU, squeeze-and-excitation (global
pool, 1x1 reduce-SiLU, 1x1 expand-sigmoid, channel scale), 1x1 project-BN, residual."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def _bn(channels):
    bn = nn.BatchNorm2d(channels)
    with torch.no_grad():
        bn.running_mean.normal_(0.0, 0.1)
        bn.running_var.uniform_(0.5, 1.5)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.1, 0.1)
    return bn


class Model(nn.Module):
    def __init__(self, channels: int, expansion: int, se_ratio: float):
        super().__init__()
        wide = channels * expansion
        squeezed = max(1, int(channels * se_ratio))
        self.expand = nn.Conv2d(channels, wide, 1, bias=False)
        self.bn1 = _bn(wide)
        self.dw = nn.Conv2d(wide, wide, 5, padding=2, groups=wide, bias=False)
        self.bn2 = _bn(wide)
        self.se_reduce = nn.Conv2d(wide, squeezed, 1)
        self.se_expand = nn.Conv2d(squeezed, wide, 1)
        self.project = nn.Conv2d(wide, channels, 1, bias=False)
        self.bn3 = _bn(channels)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.silu(self.bn1(self.expand(x)))
        y = F.silu(self.bn2(self.dw(y)))
        gate = torch.sigmoid(self.se_expand(F.silu(self.se_reduce(y.mean(dim=(2, 3), keepdim=True)))))
        return x + self.bn3(self.project(y * gate))


BATCH = 128
CHANNELS = 40
EXPANSION = 6
SE_RATIO = 0.25
HEIGHT = 56
WIDTH = 56


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, EXPANSION, SE_RATIO]
