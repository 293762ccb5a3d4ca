"""Matmul with a weight matrix, row softmax of the product, then a constant scale (no dropout)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) / in_features ** 0.5)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x @ self.weight, dim=-1) * self.scale


TOKENS = 16384
IN_FEATURES = 1024
OUT_FEATURES = 4096
SCALE = 2.5


def get_inputs():
    return [torch.randn(TOKENS, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, SCALE]
