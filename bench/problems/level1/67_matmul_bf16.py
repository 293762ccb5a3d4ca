"""Plain bf16 matrix multiply (8192x16384 @ 16384x8192): one cuBLAS tensor-core GEMM, nothing to fuse."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


M = 8192
K = 16384
N = 8192


def get_inputs():
    return [torch.randn(M, K, dtype=torch.bfloat16), torch.randn(K, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
