"""Cross-entropy over a 32000-token vocabulary with label smoothing 0.1 (mean): log-softmax, the target's
log-probability and the sum of every log-probability, per row."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, smoothing: float):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets, label_smoothing=self.smoothing)


TOKENS = 24576
VOCAB = 32000
SMOOTHING = 0.1


def get_inputs():
    return [torch.randn(TOKENS, VOCAB) * 2.0, torch.randint(0, VOCAB, (TOKENS,))]


def get_init_inputs():
    return [SMOOTHING]
