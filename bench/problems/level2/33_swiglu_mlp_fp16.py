"""fp16 SwiGLU feed-forward (gate and up projections, SiLU(gate) * up, down projection), weights and
activations fp16: three tensor-core GEMMs with a two-input pointwise product between them."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False, dtype=torch.float16)
        self.up = nn.Linear(dim, hidden, bias=False, dtype=torch.float16)
        self.down = nn.Linear(hidden, dim, bias=False, dtype=torch.float16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


TOKENS = 16384
DIM = 2048
HIDDEN = 5632


def get_inputs():
    return [torch.randn(TOKENS, DIM, dtype=torch.float16)]


def get_init_inputs():
    return [DIM, HIDDEN]
