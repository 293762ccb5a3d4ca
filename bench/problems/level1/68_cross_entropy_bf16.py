"""Cross-entropy on bf16 logits over an odd-sized vocabulary (50257), with padding targets ignored
(ignore_index = -100, about 10% of tokens): a language-model loss, mean over the counted tokens."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets, ignore_index=-100)


TOKENS = 32768
VOCAB = 50257
PADDING = 0.1


def get_inputs():
    targets = torch.randint(0, VOCAB, (TOKENS,))
    targets = torch.where(torch.rand(TOKENS) < PADDING, torch.full_like(targets, -100), targets)
    return [torch.randn(TOKENS, VOCAB, dtype=torch.bfloat16) * 2.0, targets]


def get_init_inputs():
    return []
