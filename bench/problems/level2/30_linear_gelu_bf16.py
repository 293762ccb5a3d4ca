"""bf16 Linear (4096 -> 16384, weights and activations bf16) followed by tanh-approximated GELU: a tensor-core
GEMM with a bias and activation epilogue."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.linear(x), approximate="tanh")


TOKENS = 8192
IN_FEATURES = 4096
OUT_FEATURES = 16384


def get_inputs():
    return [torch.randn(TOKENS, IN_FEATURES, dtype=torch.bfloat16)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
