"""Row RMS normalization with a learned scale as a Helion kernel (a reduction).

`kernelopt optimize-helion examples/helion/rms_norm.py --out DIR` writes
DIR/optimized/rms_norm_triton.py with the optimized Triton kernel and a host function with this
kernel's call signature, `rms_norm(x, weight)`. KERNELOPT_EXAMPLE_SMALL=1 shrinks the problem for
CPU tests under TRITON_INTERPRET=1.
"""
import os

import helion
import helion.language as hl
import torch


@helion.kernel(config=helion.Config(block_sizes=[2], reduction_loops=[None], num_warps=4, num_stages=1))
def rms_norm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].to(torch.float32)
        inv_rms = torch.rsqrt(torch.mean(row * row, dim=-1) + 1e-6)
        out[tile_m, :] = (row * inv_rms[:, None] * weight[None, :].to(torch.float32)).to(out.dtype)
    return out


def reference(x, weight):
    return x * torch.rsqrt(torch.mean(x * x, dim=-1, keepdim=True) + 1e-6) * weight


SMALL = os.environ.get("KERNELOPT_EXAMPLE_SMALL") == "1"
ROWS, COLS = (16, 200) if SMALL else (8192, 8192)


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.rand(COLS) + 0.5]
