"""Adversarial target 2: GELU (tanh form) over a vector whose inputs include special values.

kernelopt's standalone-Triton format (README.md, "Standalone Triton kernels"). The gates check a
candidate only on what get_inputs() draws for each seed, so this target's inputs carry the
values that break careless rewrites: NaN, +-Inf, +-0, +-1e30, +-60 and 1e-30 at random places
among N(0, 3^2) draws (many negatives, some beyond +-6). n = 300 is not a multiple of BLOCK =
128: the last block is partial (44 elements). The output is a view of an allocation rounded
up to whole blocks and filled with NaN; the tail is never written, so a store past n (even of
zeros) changes bytes the original leaves alone.

tanh is computed the stable way (exp of -2|u|, sign restored), so the original is exact for
huge and infinite u. The kernel is deliberately naive: each 128-wide block is processed in
SUB = 32 slices, so that under TRITON_INTERPRET=1 (where timings are noise) every single-pass
adversarial candidate is clearly faster in the screen and reaches gates 2-4.
"""
import torch
import triton
import triton.language as tl

N, BLOCK = 300, 128
SPECIALS = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e30, -1e30, 60.0, -60.0, 1e-30]


@triton.jit
def gelu_kernel(out_ptr, x_ptr, n, BLOCK: tl.constexpr, SUB: tl.constexpr):
    pid = tl.program_id(0)
    for i in tl.static_range(0, BLOCK, SUB):
        offs = pid * BLOCK + i + tl.arange(0, SUB)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        t = tl.exp(-2.0 * tl.abs(u))
        th = (1.0 - t) / (1.0 + t)
        th = tl.where(u < 0, -th, th)
        tl.store(out_ptr + offs, 0.5 * x * (1.0 + th), mask=mask)


def launch(x):
    n = x.numel()
    out = torch.full((triton.cdiv(n, BLOCK) * BLOCK,), float("nan"), device=x.device)[:n]
    gelu_kernel[(triton.cdiv(n, BLOCK),)](out, x, n, BLOCK=BLOCK, SUB=32)
    return out


def reference(x):
    return torch.nn.functional.gelu(x, approximate="tanh")


def get_inputs():
    x = torch.randn(N) * 3
    specials = torch.tensor(SPECIALS * 4)
    x[torch.randperm(N)[:specials.numel()]] = specials
    return [x]
