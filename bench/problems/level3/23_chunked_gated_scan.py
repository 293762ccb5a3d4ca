"""Mamba-like gated recurrence in chunked (state-space-duality) form: LayerNorm, input projection to a value and
an output gate, causal depthwise conv + SiLU, a data-dependent per-head decay a_t, the recurrence
h_t = a_t h_{t-1} + (1 - a_t) u_t computed within 64-step chunks as a masked decay matrix times the values
(cumsum of log-decays, exp, batched GEMM) and across the 32 chunks by a short loop over carried states, then
the SiLU-gated output projection and a residual."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim: int, heads: int, chunk: int, conv_kernel: int):
        super().__init__()
        self.heads, self.chunk = heads, chunk
        self.norm = nn.LayerNorm(dim)
        self.in_proj = nn.Linear(dim, 2 * dim)
        self.conv = nn.Conv1d(dim, dim, conv_kernel, groups=dim, padding=conv_kernel - 1)
        self.decay_proj = nn.Linear(dim, heads)
        self.out_proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        n_heads, length = self.heads, self.chunk
        chunks, head_dim = t // length, d // n_heads
        u, z = self.in_proj(self.norm(x)).chunk(2, dim=-1)
        u = F.silu(self.conv(u.transpose(1, 2))[..., :t]).transpose(1, 2)
        log_a = F.logsigmoid(self.decay_proj(u))  # (b, t, heads), log of the decay, <= 0
        v = (1.0 - log_a.exp()).unsqueeze(-1) * u.reshape(b, t, n_heads, head_dim)
        log_a = log_a.view(b, chunks, length, n_heads).permute(0, 1, 3, 2)  # (b, chunks, heads, length)
        v = v.view(b, chunks, length, n_heads, head_dim).permute(0, 1, 3, 2, 4)
        cs = torch.cumsum(log_a, dim=-1)
        # within a chunk: h_t = sum over s <= t of exp(cs_t - cs_s) v_s (every exponent <= 0)
        causal = torch.ones(length, length, dtype=torch.bool, device=x.device).tril()
        decay = torch.exp((cs[..., :, None] - cs[..., None, :]).masked_fill(~causal, float("-inf")))
        h_local = torch.matmul(decay, v)  # (b, chunks, heads, length, head_dim)
        # across chunks: the state entering chunk c, carried through each chunk's total decay
        chunk_decay = torch.exp(cs[..., -1])  # (b, chunks, heads)
        carry = x.new_zeros(b, n_heads, head_dim)
        entering = []
        for c in range(chunks):
            entering.append(carry)
            carry = chunk_decay[:, c, :, None] * carry + h_local[:, c, :, -1, :]
        h = h_local + torch.exp(cs).unsqueeze(-1) * torch.stack(entering, dim=1).unsqueeze(3)
        y = h.permute(0, 1, 3, 2, 4).reshape(b, t, d)
        return x + self.out_proj(y * F.silu(z))


BATCH = 16
SEQ = 2048
DIM = 1024
HEADS = 16
CHUNK = 64
CONV_KERNEL = 4


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM, HEADS, CHUNK, CONV_KERNEL]
