"""One GRU cell step (nn.GRUCell) over a large batch: input and hidden GEMMs (3 gates each), then the
reset/update gate arithmetic (sigmoid, tanh, blend) as a pointwise epilogue."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.cell = nn.GRUCell(input_size, hidden_size)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return self.cell(x, h)


BATCH = 8192
INPUT_SIZE = 1024
HIDDEN_SIZE = 1024


def get_inputs():
    return [torch.randn(BATCH, INPUT_SIZE), torch.randn(BATCH, HIDDEN_SIZE) * 0.5]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE]
