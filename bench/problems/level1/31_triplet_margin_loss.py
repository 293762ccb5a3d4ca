"""Triplet margin loss (L2 distance, margin 0.5): two row-distance reductions, a hinge and a mean."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, margin: float):
        super().__init__()
        self.loss = nn.TripletMarginLoss(margin=margin, p=2.0)

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        return self.loss(anchor, positive, negative)


SAMPLES = 262144
EMBED = 1024
MARGIN = 0.5


def get_inputs():
    # positive and negative are equally noisy copies of the anchor, so the two distances
    # are close and the hinge is active for most triplets (the loss is not identically 0)
    anchor = torch.randn(SAMPLES, EMBED)
    positive = anchor + torch.randn(SAMPLES, EMBED)
    negative = anchor + torch.randn(SAMPLES, EMBED)
    return [anchor, positive, negative]


def get_init_inputs():
    return [MARGIN]
