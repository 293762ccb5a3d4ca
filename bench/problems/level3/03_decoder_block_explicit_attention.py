"""Decoder block with hand-written causal attention (QK^T, mask, softmax, PV), RMSNorm and a SwiGLU MLP."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Model(nn.Module):
    def __init__(self, dim: int, heads: int, intermediate: int):
        super().__init__()
        self.heads = heads
        self.norm_attn = RMSNorm(dim)
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.norm_mlp = RMSNorm(dim)
        self.w_gate = nn.Linear(dim, intermediate, bias=False)
        self.w_up = nn.Linear(dim, intermediate, bias=False)
        self.w_down = nn.Linear(intermediate, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        hd = d // self.heads
        h = self.norm_attn(x)
        q = self.wq(h).view(b, t, self.heads, hd).transpose(1, 2)
        k = self.wk(h).view(b, t, self.heads, hd).transpose(1, 2)
        v = self.wv(h).view(b, t, self.heads, hd).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (hd ** -0.5)
        future = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
        attn = torch.matmul(torch.softmax(scores, dim=-1), v)
        x = x + self.wo(attn.transpose(1, 2).reshape(b, t, d))
        h = self.norm_mlp(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


BATCH = 4
SEQ = 1024
DIM = 1024
HEADS = 16
INTERMEDIATE = 2816


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM, HEADS, INTERMEDIATE]
