"""Fused residual add + layer norm as a standalone Triton kernel (kernelopt's standalone-Triton format).

h = x + y, then layer norm of h over the last dimension with weight and bias. One program
per row: the row is loaded once, mean and variance computed in float32, the normalized row
written once (and the sum h too, as a residual stream would need it).

KERNELOPT_EXAMPLE_SMALL=1 shrinks the inputs to 64 x 256 (CPU tests under TRITON_INTERPRET=1).
"""
import os

import torch
import triton
import triton.language as tl


@triton.jit
def add_layernorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, h_ptr, out_ptr, stride, n_cols, eps,
                         BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    h = x + y
    tl.store(h_ptr + row * stride + cols, h, mask=mask)
    mean = tl.sum(h, axis=0) / n_cols
    d = tl.where(mask, h - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride + cols, d * rstd * w + b, mask=mask)


EPS = 1e-5


def launch(x, y, weight, bias):
    n_cols = x.shape[-1]
    x2, y2 = x.reshape(-1, n_cols).contiguous(), y.reshape(-1, n_cols).contiguous()
    h = torch.empty_like(x2)
    out = torch.empty_like(x2)
    block = triton.next_power_of_2(n_cols)
    num_warps = 4 if block <= 2048 else 8
    add_layernorm_kernel[(x2.shape[0],)](x2, y2, weight, bias, h, out, x2.stride(0), n_cols, EPS,
                                         BLOCK=block, num_warps=num_warps)
    return out.view_as(x), h.view_as(x)


def reference(x, y, weight, bias):
    h = x + y
    return torch.nn.functional.layer_norm(h, (h.shape[-1],), weight, bias, EPS), h


SMALL = os.environ.get("KERNELOPT_EXAMPLE_SMALL") == "1"
tokens, hidden = (64, 256) if SMALL else (16384, 4096)


def get_inputs():
    return [torch.randn(tokens, hidden), torch.randn(tokens, hidden),
            1.0 + 0.1 * torch.randn(hidden), 0.1 * torch.randn(hidden)]
