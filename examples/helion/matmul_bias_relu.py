"""Matmul with a fused bias + ReLU epilogue as a Helion kernel (kernelopt's Helion format).

`kernelopt optimize-helion examples/helion/matmul_bias_relu.py --out DIR` asks Helion for the
Triton code of its configuration, optimizes that code as a standalone Triton kernel, and writes
DIR/optimized/matmul_bias_relu_triton.py: the Triton kernel plus a host function with this
kernel's call signature, `matmul_bias_relu(x, w, bias)`.

The format: one `@helion.kernel` function, `get_inputs()` (its inputs, drawn after a seed) and,
optionally, `reference(*inputs)` in PyTorch (gate 3 and the end-to-end check compare against it
in float64). KERNELOPT_EXAMPLE_SMALL=1 shrinks the problem for CPU tests under TRITON_INTERPRET=1.
"""
import os

import helion
import helion.language as hl
import torch


@helion.kernel(config=helion.Config(block_sizes=[64, 64, 32], num_warps=4, num_stages=3))
def matmul_bias_relu(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = w.size()
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, x[tile_m, tile_k], w[tile_k, tile_n])
        out[tile_m, tile_n] = torch.relu(acc + bias[tile_n])
    return out


def reference(x, w, bias):
    return torch.relu(x @ w + bias)


SMALL = os.environ.get("KERNELOPT_EXAMPLE_SMALL") == "1"
M, K, N = (64, 64, 96) if SMALL else (4096, 4096, 4096)


def get_inputs():
    return [torch.randn(M, K) / K ** 0.5, torch.randn(K, N), torch.randn(N)]
