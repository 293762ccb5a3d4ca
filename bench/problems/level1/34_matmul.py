"""Plain fp32 matrix multiply (4096x6144 @ 6144x3072): a single cuBLAS GEMM, nothing to fuse."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


M = 4096
K = 6144
N = 3072


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
