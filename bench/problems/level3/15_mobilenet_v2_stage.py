"""A MobileNetV2 stage: three inverted-residual blocks (1x1 expand x6-BN-ReLU6, depthwise 3x3-BN-ReLU6,
1x1 project-BN), the first with stride 2 and a channel change (no residual), the other two with residuals."""
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


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expansion: int):
        super().__init__()
        wide = cin * expansion
        self.residual = stride == 1 and cin == cout
        self.expand = nn.Conv2d(cin, wide, 1, bias=False)
        self.bn1 = _bn(wide)
        self.dw = nn.Conv2d(wide, wide, 3, stride=stride, padding=1, groups=wide, bias=False)
        self.bn2 = _bn(wide)
        self.project = nn.Conv2d(wide, cout, 1, bias=False)
        self.bn3 = _bn(cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu6(self.bn1(self.expand(x)))
        y = F.relu6(self.bn2(self.dw(y)))
        y = self.bn3(self.project(y))
        return x + y if self.residual else y


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, expansion: int):
        super().__init__()
        self.blocks = nn.Sequential(
            InvertedResidual(in_channels, out_channels, 2, expansion),
            InvertedResidual(out_channels, out_channels, 1, expansion),
            InvertedResidual(out_channels, out_channels, 1, expansion),
        )
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


BATCH = 128
IN_CHANNELS = 24
OUT_CHANNELS = 32
EXPANSION = 6
HEIGHT = 112
WIDTH = 112


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, EXPANSION]
