"""Max (values only) over the middle dimension of a 3-D tensor: an inner-strided max reduction."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x, dim=1)


BATCH = 256
REDUCE = 4096
INNER = 2048


def get_inputs():
    return [torch.randn(BATCH, REDUCE, INNER)]


def get_init_inputs():
    return []
