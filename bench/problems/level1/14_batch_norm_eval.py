"""BatchNorm2d in eval mode with non-trivial running statistics: a per-channel affine map."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.norm = nn.BatchNorm2d(channels, eps=1e-5)
        with torch.no_grad():
            self.norm.running_mean.normal_(0.0, 0.5)
            self.norm.running_var.uniform_(0.5, 2.0)
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


BATCH = 144
CHANNELS = 128
HEIGHT = 256
WIDTH = 256


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
