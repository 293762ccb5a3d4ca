"""Cross-entropy over 500 classes with integer targets, mean-reduced: log-softmax + gather + mean."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, target)


SAMPLES = 1572864
CLASSES = 500


def get_inputs():
    return [torch.randn(SAMPLES, CLASSES) * 2.0, torch.randint(0, CLASSES, (SAMPLES,))]


def get_init_inputs():
    return []
