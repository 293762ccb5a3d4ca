"""MLP-Mixer block: LayerNorm + token-mixing MLP across the sequence (transposed), residual;
LayerNorm + channel-mixing MLP, residual."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, tokens: int, channels: int, token_hidden: int, channel_hidden: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(channels)
        self.tok_fc1 = nn.Linear(tokens, token_hidden)
        self.tok_fc2 = nn.Linear(token_hidden, tokens)
        self.norm2 = nn.LayerNorm(channels)
        self.ch_fc1 = nn.Linear(channels, channel_hidden)
        self.ch_fc2 = nn.Linear(channel_hidden, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm1(x).transpose(1, 2)
        x = x + self.tok_fc2(F.gelu(self.tok_fc1(y))).transpose(1, 2)
        return x + self.ch_fc2(F.gelu(self.ch_fc1(self.norm2(x))))


BATCH = 96
TOKENS = 256
CHANNELS = 512
TOKEN_HIDDEN = 512
CHANNEL_HIDDEN = 2048


def get_inputs():
    return [torch.randn(BATCH, TOKENS, CHANNELS)]


def get_init_inputs():
    return [TOKENS, CHANNELS, TOKEN_HIDDEN, CHANNEL_HIDDEN]
