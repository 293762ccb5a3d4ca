"""Argmin over the middle dimension of a 3-D tensor (512 candidates, inner stride 4096): an index-producing
strided reduction, first index on ties."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmin(x, dim=1)


BATCH = 1024
REDUCE = 512
INNER = 4096


def get_inputs():
    return [torch.randn(BATCH, REDUCE, INNER)]


def get_init_inputs():
    return []
