"""A small softmax problem for the GPU tests (odd sizes: partial blocks)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(300, 1500)]


def get_init_inputs():
    return []
