"""Gated linear recurrence (a minimal selective-state block): input projection to gate and value,
h_t = a_t * h_{t-1} + (1 - a_t) * v_t over 32 steps in a Python loop, SiLU output gate, output projection."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim: int, state: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.in_proj = nn.Linear(dim, 3 * state)
        self.out_proj = nn.Linear(state, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, value, out_gate = self.in_proj(self.norm(x)).chunk(3, dim=-1)
        a = torch.sigmoid(gate)
        h = torch.zeros_like(value[:, 0])
        states = []
        for t in range(x.shape[1]):
            h = a[:, t] * h + (1.0 - a[:, t]) * value[:, t]
            states.append(h)
        hs = torch.stack(states, dim=1)
        return x + self.out_proj(hs * F.silu(out_gate))


BATCH = 128
SEQ = 32
DIM = 1024
STATE = 2048


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM, STATE]
