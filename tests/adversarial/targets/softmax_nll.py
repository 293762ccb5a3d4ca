"""Adversarial target 1: a row softmax kernel whose output feeds an NLL loss in the launcher.

kernelopt's standalone-Triton format (README.md, "Standalone Triton kernels"). Sizes are chosen
so boundary bugs show: 7 rows (odd), 100 columns (not a power of two: BLOCK = 128, and the
CHUNK = 32 loop ends on a partial slice of 4). The output rows are padded to a pitch of 128
(`out` is a view of a larger allocation filled with NaN); the padding is never written, so a
kernel that stores past a row's end changes bytes the original leaves alone (NaN-filled, so that
even a store of zeros shows; fresh memory is often zero). The launcher turns the probabilities
into -log p[target] with torch: an error the kernel's tolerance lets through (tiny
probabilities flushed) becomes visible only in that loss (gate 3).

The kernel is deliberately naive: three passes over each row in CHUNK-wide slices (max, sum,
write). Under TRITON_INTERPRET=1 every timing is noise; this slowness makes each adversarial
candidate (one pass over the whole row) clearly faster in the screen, so it reaches gates 2-4
and the gate that rejects it is the one that saw what is wrong with it.
"""
import torch
import triton
import triton.language as tl

ROWS, COLS, PITCH = 7, 100, 128
SCALE = 3.0  # a sharp softmax: about half the probabilities are below 1e-4


@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, in_stride, out_stride, scale, BLOCK: tl.constexpr,
                   CHUNK: tl.constexpr):
    row = tl.program_id(0)
    x_row = in_ptr + row * in_stride
    o_row = out_ptr + row * out_stride
    offs = tl.arange(0, CHUNK)
    acc_max = tl.full([CHUNK], float("-inf"), tl.float32)
    for start in range(0, n_cols, CHUNK):
        x = tl.load(x_row + start + offs, mask=start + offs < n_cols, other=float("-inf")) * scale
        acc_max = tl.maximum(acc_max, x)
    m = tl.max(acc_max, axis=0)
    acc_sum = tl.zeros([CHUNK], tl.float32)
    for start in range(0, n_cols, CHUNK):
        x = tl.load(x_row + start + offs, mask=start + offs < n_cols, other=float("-inf")) * scale
        acc_sum += tl.exp(x - m)
    s = tl.sum(acc_sum, axis=0)
    for start in range(0, n_cols, CHUNK):
        mask = start + offs < n_cols
        x = tl.load(x_row + start + offs, mask=mask, other=float("-inf")) * scale
        tl.store(o_row + start + offs, tl.exp(x - m) / s, mask=mask)


def launch(x, target):
    rows, cols = x.shape
    out = torch.full((rows, PITCH), float("nan"), device=x.device)[:, :cols]
    softmax_kernel[(rows,)](out, x, cols, x.stride(0), out.stride(0), SCALE,
                            BLOCK=triton.next_power_of_2(cols), CHUNK=32)
    nll = -torch.log(out.gather(1, target[:, None]))[:, 0]
    return out, nll


def reference(x, target):
    logp = torch.log_softmax(x * SCALE, dim=-1)
    return logp.exp(), -logp.gather(1, target[:, None])[:, 0]


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randint(0, COLS, (ROWS,))]
