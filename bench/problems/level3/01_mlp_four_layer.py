"""Four-layer MLP with ReLU between layers (2048 -> 4096 -> 4096 -> 2048 -> 512): GEMM chain with bias+act epilogues."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, hidden_sizes: list, out_features: int):
        super().__init__()
        layers = []
        prev = in_features
        for width in hidden_sizes:
            layers.append(nn.Linear(prev, width))
            layers.append(nn.ReLU())
            prev = width
        layers.append(nn.Linear(prev, out_features))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


BATCH = 4096
IN_FEATURES = 2048
HIDDEN_SIZES = [4096, 4096, 2048]
OUT_FEATURES = 512


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN_SIZES, OUT_FEATURES]
