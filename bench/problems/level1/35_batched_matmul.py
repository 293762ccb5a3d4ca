"""Batched fp32 matmul (192 x [512x768 @ 768x1024]): a single cuBLAS strided-batched GEMM."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


BATCH = 192
M = 512
K = 768
N = 1024


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N)]


def get_init_inputs():
    return []
