"""GRU layer written out and unrolled over 16 steps: one input projection GEMM for the whole sequence, then per
step a recurrent GEMM and the reset/update/candidate gate arithmetic; returns every hidden state."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.input_proj = nn.Linear(input_size, 3 * hidden_size)
        self.hidden_proj = nn.Linear(hidden_size, 3 * hidden_size)

    def forward(self, xs: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        gates_x = self.input_proj(xs)  # (steps, batch, 3 * hidden)
        outs = []
        for t in range(xs.shape[0]):
            xr, xz, xn = gates_x[t].chunk(3, dim=-1)
            hr, hz, hn = self.hidden_proj(h).chunk(3, dim=-1)
            r = torch.sigmoid(xr + hr)
            z = torch.sigmoid(xz + hz)
            n = torch.tanh(xn + r * hn)
            h = (1.0 - z) * n + z * h
            outs.append(h)
        return torch.stack(outs, dim=0)


STEPS = 16
BATCH = 1024
INPUT_SIZE = 1024
HIDDEN_SIZE = 1024


def get_inputs():
    return [torch.randn(STEPS, BATCH, INPUT_SIZE), torch.randn(BATCH, HIDDEN_SIZE) * 0.5]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE]
