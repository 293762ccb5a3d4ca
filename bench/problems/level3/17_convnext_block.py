"""ConvNeXt block: depthwise 7x7 conv, permute to NHWC, LayerNorm, Linear 4x up, GELU, Linear down, learned
layer scale, permute back, residual: a depthwise conv and two GEMMs joined by layout changes and a norm."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim: int, layer_scale: float):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(torch.full((dim,), layer_scale))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.fc2(F.gelu(self.fc1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


BATCH = 64
DIM = 192
HEIGHT = 56
WIDTH = 56
LAYER_SCALE = 0.1


def get_inputs():
    return [torch.randn(BATCH, DIM, HEIGHT, WIDTH)]


def get_init_inputs():
    return [DIM, LAYER_SCALE]
