"""fp16 channels-last 3x3 Conv2d, eval-mode BatchNorm2d and ReLU, with every weight and buffer in fp16: the
conv-BN-act chain as mixed-precision inference runs it (tensor-core cuDNN in NHWC, fp16 epilogue)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            self.bn.running_mean.normal_(0.0, 0.2)
            self.bn.running_var.uniform_(0.5, 1.5)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.2, 0.2)
        self.to(dtype=torch.float16, memory_format=torch.channels_last)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)))


BATCH = 128
IN_CHANNELS = 128
OUT_CHANNELS = 128
HEIGHT = 112
WIDTH = 112


def get_inputs():
    x = torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH, dtype=torch.float16)
    return [x.contiguous(memory_format=torch.channels_last)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
