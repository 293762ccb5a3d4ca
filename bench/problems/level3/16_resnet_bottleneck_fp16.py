"""Two ResNet-50 bottleneck blocks in fp16, channels-last (1x1 reduce-BN-ReLU, 3x3-BN-ReLU, 1x1 expand-BN,
identity residual, ReLU), every weight and buffer fp16: tensor-core cuDNN convs and fp16 BN/ReLU/add epilogues."""
import torch
import torch.nn as nn


def _bn(channels):
    bn = nn.BatchNorm2d(channels)
    with torch.no_grad():
        bn.running_mean.normal_(0.0, 0.1)
        bn.running_var.uniform_(0.5, 1.5)
        bn.weight.uniform_(0.5, 1.0)
        bn.bias.uniform_(-0.1, 0.1)
    return bn


class Bottleneck(nn.Module):
    def __init__(self, channels: int, width: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, width, 1, bias=False)
        self.bn1 = _bn(width)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.bn2 = _bn(width)
        self.conv3 = nn.Conv2d(width, channels, 1, bias=False)
        self.bn3 = _bn(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)))
        return torch.relu(self.bn3(self.conv3(y)) + x)


class Model(nn.Module):
    def __init__(self, channels: int, width: int, blocks: int):
        super().__init__()
        self.blocks = nn.Sequential(*[Bottleneck(channels, width) for _ in range(blocks)])
        self.to(dtype=torch.float16, memory_format=torch.channels_last)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


BATCH = 256
CHANNELS = 256
WIDTH = 64
BLOCKS = 2
HEIGHT = 56
IMG_WIDTH = 56


def get_inputs():
    x = torch.randn(BATCH, CHANNELS, HEIGHT, IMG_WIDTH, dtype=torch.float16)
    return [x.contiguous(memory_format=torch.channels_last)]


def get_init_inputs():
    return [CHANNELS, WIDTH, BLOCKS]
