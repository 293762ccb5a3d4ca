"""Cosine embedding loss (margin 0.1) with +-1 pair labels: row dot/norm reductions and a branch."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, margin: float):
        super().__init__()
        self.loss = nn.CosineEmbeddingLoss(margin=margin)

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return self.loss(x1, x2, labels)


PAIRS = 196608
EMBED = 1536
MARGIN = 0.1


def get_inputs():
    labels = torch.randint(0, 2, (PAIRS,)).float() * 2.0 - 1.0
    # x2 partly correlated with x1 (per-pair strength), so cosines spread across the
    # margin and both branches of the -1 case are taken
    x1 = torch.randn(PAIRS, EMBED)
    x2 = torch.rand(PAIRS, 1) * 0.3 * x1 + torch.randn(PAIRS, EMBED)
    return [x1, x2, labels]


def get_init_inputs():
    return [MARGIN]
