"""LayerNorm over the channels of a channels-last map, as ConvNeXt does it: permute NCHW (channels-last
strides) to NHWC, LayerNorm over C = 192, permute back; the permutes are views, the rows contiguous."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.norm = nn.LayerNorm(channels, eps=1e-6)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


BATCH = 160
CHANNELS = 192
HEIGHT = 192
WIDTH = 192


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH).contiguous(memory_format=torch.channels_last)]


def get_init_inputs():
    return [CHANNELS]
