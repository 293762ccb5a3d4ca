"""Elman RNN cell (h = tanh(x W_ih + h W_hh + b)) unrolled over 8 steps; returns every hidden state."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.rec_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, xs: torch.Tensor) -> torch.Tensor:
        steps, batch, _ = xs.shape
        h = xs.new_zeros(batch, self.hidden_size)
        outs = []
        for t in range(steps):
            h = torch.tanh(self.in_proj(xs[t]) + self.rec_proj(h))
            outs.append(h)
        return torch.stack(outs, dim=0)


STEPS = 8
BATCH = 2048
INPUT_SIZE = 1024
HIDDEN_SIZE = 2048


def get_inputs():
    return [torch.randn(STEPS, BATCH, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE]
