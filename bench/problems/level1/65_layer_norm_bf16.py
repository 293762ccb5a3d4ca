"""LayerNorm in bf16 (input, weight and bias all bf16) over 8192-wide rows: fp32 statistics inside,
bf16 in and out."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5, dtype=torch.bfloat16)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


TOKENS = 262144
HIDDEN = 8192


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN, dtype=torch.bfloat16) * 2.0 + 0.5]


def get_init_inputs():
    return [HIDDEN]
