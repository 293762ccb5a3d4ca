"""Each matrix of a batch divided by its Frobenius norm (torch.linalg.matrix_norm, "fro"): a 1M-value
reduction per matrix, then a broadcast division."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.linalg.matrix_norm(x, ord="fro", keepdim=True)


BATCH = 1024
ROWS = 1024
COLS = 1024


def get_inputs():
    return [torch.randn(BATCH, ROWS, COLS)]


def get_init_inputs():
    return []
