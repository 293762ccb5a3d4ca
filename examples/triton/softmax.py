"""Row softmax as a standalone Triton kernel (kernelopt's standalone-Triton format).

One program per row; the whole row is loaded at once (BLOCK = next power of two of the
row length), so the kernel reads its input once and writes its output once.

KERNELOPT_EXAMPLE_SMALL=1 shrinks the input to 64 x 256 (CPU tests under TRITON_INTERPRET=1).
"""
import os

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


def launch(x):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    block = triton.next_power_of_2(n_cols)
    num_warps = 4 if block <= 2048 else (8 if block <= 8192 else 16)
    softmax_kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), n_cols, BLOCK=block, num_warps=num_warps)
    return out


def reference(x):
    return torch.softmax(x, dim=-1)


SMALL = os.environ.get("KERNELOPT_EXAMPLE_SMALL") == "1"
rows, cols = (64, 256) if SMALL else (4096, 8192)


def get_inputs():
    return [torch.randn(rows, cols)]
