"""Mean absolute error between two 3-D tensors (F.l1_loss, mean): a two-input map fused into a full reduction."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.l1_loss(pred, target)


BATCH = 256
SEQ = 2048
DIM = 1536


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM), torch.randn(BATCH, SEQ, DIM) * 0.5]


def get_init_inputs():
    return []
