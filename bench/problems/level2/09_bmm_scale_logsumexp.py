"""Batched matmul, a constant scale, then logsumexp over the last dimension of each product row."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.logsumexp(torch.bmm(a, b) * self.scale, dim=-1)


BATCH = 192
M = 512
K = 512
N = 1024
SCALE = 0.125


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N)]


def get_init_inputs():
    return [SCALE]
