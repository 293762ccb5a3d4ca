"""A transformer-style MLP block: LayerNorm -> Linear -> GELU -> Linear -> residual add.

The two matmuls stay with cuBLAS (extern_kernels.mm/addmm); Inductor fuses the
norm, bias, GELU and residual into Triton kernels around them (KernelBench format).
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden: int, expansion: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.up = nn.Linear(hidden, hidden * expansion)
        self.down = nn.Linear(hidden * expansion, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.up(self.norm(x))
        h = torch.nn.functional.gelu(h)
        return x + self.down(h)


tokens = 8192
hidden = 1024
expansion = 4


def get_inputs():
    return [torch.randn(tokens, hidden)]


def get_init_inputs():
    return [hidden, expansion]
