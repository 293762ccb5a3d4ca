"""One LSTM cell step (nn.LSTMCell) over a large batch: input and hidden GEMMs (4 gates each), then the
gate nonlinearities and the cell update; returns the new hidden and cell states."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.cell = nn.LSTMCell(input_size, hidden_size)

    def forward(self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        h_next, c_next = self.cell(x, (h, c))
        return torch.cat([h_next, c_next], dim=-1)


BATCH = 8192
INPUT_SIZE = 1024
HIDDEN_SIZE = 1024


def get_inputs():
    return [torch.randn(BATCH, INPUT_SIZE), torch.randn(BATCH, HIDDEN_SIZE) * 0.5,
            torch.randn(BATCH, HIDDEN_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE]
