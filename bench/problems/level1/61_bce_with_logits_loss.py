"""Multi-label binary cross-entropy on logits with a learned per-class positive weight and soft targets
(BCEWithLogitsLoss, mean): log-sigmoid terms and a weight broadcast over rows, then a full reduction."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, classes: int):
        super().__init__()
        self.pos_weight = nn.Parameter(torch.rand(classes) * 2.0 + 0.5)

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.binary_cross_entropy_with_logits(logits, targets, pos_weight=self.pos_weight)


SAMPLES = 32768
CLASSES = 8192


def get_inputs():
    return [torch.randn(SAMPLES, CLASSES) * 3.0, torch.rand(SAMPLES, CLASSES)]


def get_init_inputs():
    return [CLASSES]
