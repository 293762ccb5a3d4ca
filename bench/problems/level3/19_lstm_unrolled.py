"""LSTM layer written out and unrolled over 12 steps: one input projection GEMM for the sequence, then per step
a recurrent GEMM, the four gates and the cell update; returns the last hidden and cell states concatenated."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.hidden_size = hidden_size
        self.input_proj = nn.Linear(input_size, 4 * hidden_size)
        self.hidden_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)
        with torch.no_grad():  # forget-gate bias of 1, as LSTMs are usually initialised
            self.input_proj.bias[hidden_size:2 * hidden_size].fill_(1.0)

    def forward(self, xs: torch.Tensor) -> torch.Tensor:
        gates_x = self.input_proj(xs)  # (steps, batch, 4 * hidden)
        h = xs.new_zeros(xs.shape[1], self.hidden_size)
        c = xs.new_zeros(xs.shape[1], self.hidden_size)
        for t in range(xs.shape[0]):
            i, f, g, o = (gates_x[t] + self.hidden_proj(h)).chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
        return torch.cat([h, c], dim=-1)


STEPS = 12
BATCH = 1024
INPUT_SIZE = 1024
HIDDEN_SIZE = 1024


def get_inputs():
    return [torch.randn(STEPS, BATCH, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE]
