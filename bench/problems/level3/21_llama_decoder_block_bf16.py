"""Llama-style decoder block in bf16: RMSNorm (fp32 inside), Q/K/V projections with grouped-query attention
(16 query heads sharing 4 key/value heads), rotary position embedding computed in the forward, causal
scaled_dot_product_attention, output projection, residual; RMSNorm, SwiGLU MLP, residual."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def _rms_norm(x, weight, eps):
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + eps)
    return weight * h.to(x.dtype)


def _rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


class Model(nn.Module):
    def __init__(self, dim: int, heads: int, kv_heads: int, hidden: int, rope_theta: float):
        super().__init__()
        bf16 = torch.bfloat16
        self.heads, self.kv_heads, self.head_dim, self.rope_theta = heads, kv_heads, dim // heads, rope_theta
        self.attn_norm = nn.Parameter(torch.ones(dim, dtype=bf16))
        self.wq = nn.Linear(dim, dim, bias=False, dtype=bf16)
        self.wk = nn.Linear(dim, kv_heads * self.head_dim, bias=False, dtype=bf16)
        self.wv = nn.Linear(dim, kv_heads * self.head_dim, bias=False, dtype=bf16)
        self.wo = nn.Linear(dim, dim, bias=False, dtype=bf16)
        self.mlp_norm = nn.Parameter(torch.ones(dim, dtype=bf16))
        self.w_gate = nn.Linear(dim, hidden, bias=False, dtype=bf16)
        self.w_up = nn.Linear(dim, hidden, bias=False, dtype=bf16)
        self.w_down = nn.Linear(hidden, dim, bias=False, dtype=bf16)

    def _rope(self, t, device, dtype):
        inv_freq = 1.0 / (self.rope_theta ** (torch.arange(0, self.head_dim, 2, device=device).float() / self.head_dim))
        angles = torch.outer(torch.arange(t, device=device).float(), inv_freq)
        angles = torch.cat([angles, angles], dim=-1)
        return angles.cos().to(dtype), angles.sin().to(dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        h = _rms_norm(x, self.attn_norm, 1e-5)
        q = self.wq(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        cos, sin = self._rope(t, x.device, x.dtype)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        group = self.heads // self.kv_heads
        k = k[:, :, None].expand(b, self.kv_heads, group, t, self.head_dim).reshape(b, self.heads, t, self.head_dim)
        v = v[:, :, None].expand(b, self.kv_heads, group, t, self.head_dim).reshape(b, self.heads, t, self.head_dim)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(attn.transpose(1, 2).reshape(b, t, d))
        h = _rms_norm(x, self.mlp_norm, 1e-5)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


BATCH = 8
SEQ = 2048
DIM = 2048
HEADS = 16
KV_HEADS = 4
HIDDEN = 5632
ROPE_THETA = 10000.0


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM, dtype=torch.bfloat16)]


def get_init_inputs():
    return [DIM, HEADS, KV_HEADS, HIDDEN, ROPE_THETA]
