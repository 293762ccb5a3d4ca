"""The block_online rewrite family (python/kernelopt/coder/block_online.py) on Inductor's real online-softmax
kernels, captured on an H200 (tests/fixtures/inductor/survey-h200: a bf16 cross entropy over 50257-wide rows,
masked; an fp16 softmax over 262144-wide rows, unmasked, two passes) and an H100 (survey-h100). Under
Triton's interpreter the captured kernel and its rewrite run on shrunk copies (Inductor's baked-in row
count, row length and row stride replaced), with special values in the rows."""
import glob
import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from kernelopt.artifact.inductor import parse_module  # noqa: E402  (every captured kernel, below)
from kernelopt.artifact.static import analyze_source  # noqa: E402
from kernelopt.coder.block_online import block_online, lane_online  # noqa: E402
from kernelopt.coder.rewrite import NotApplicable, op_rewrite  # noqa: E402
from kernelopt.device import kernels  # noqa: E402
import triton.language as tl  # noqa: E402

import interpreted  # noqa: E402  (tests/python/interpreted.py: captured kernels under the interpreter)
from interpreted import FIXTURES, runnable  # noqa: E402

CROSS_ENTROPY = os.path.join(FIXTURES, "survey-h200", "level1__68_cross_entropy_bf16", "module0.py")
SOFTMAX_FP16 = os.path.join(FIXTURES, "survey-h200", "level1__64_softmax_fp16_long_row", "module0.py")


def captured(path):
    """(kernel facts, kernel source as the engine sends it, its imports: what a rewritten function needs above it)."""
    k, kernel = interpreted.captured(path)
    return k, kernel, kernel[:kernel.index("@triton_heuristics.")]


def jit_of(text, name):
    """Loaded for the interpreter with triton_helpers' exp on tl.math and the GPU's NaN-keeping max2 (the
    interpreter's default max2, tl.max, drops NaN)."""
    from torch._inductor.runtime import triton_helpers
    helpers = kernels._interpreter_helpers()
    helpers.exp = lambda x, fast: tl.math.exp(x)
    helpers.max2 = triton_helpers.max2
    return interpreted.jit_of(text, name, helpers=helpers)


@pytest.fixture(autouse=True)
def interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def special_rows(rows, cols, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=g) * 3.0
    x[0] = float("-inf")                       # an all -inf row: Inductor's sum counts its elements
    x[1, :cols // 2] = float("-inf")           # -inf first, then finite values
    x[2, cols // 3] = float("inf")             # +inf: a NaN sum
    x[3, cols - 1] = float("nan")              # NaN in the last block
    x[4] = torch.linspace(-80, 80, cols)       # a new maximum in every block
    return x.to(dtype)


def same_or_close(got, want, rtol):
    assert torch.equal(torch.isnan(got), torch.isnan(want)), (got, want)
    assert torch.equal(torch.isinf(got), torch.isinf(want)) and torch.equal(got[torch.isinf(got)], want[torch.isinf(want)])
    finite = torch.isfinite(want)
    torch.testing.assert_close(got[finite], want[finite], rtol=rtol, atol=0)


def test_the_rewrite_keeps_the_kernel_s_signature_and_passes_gate_1_facts():
    for path in (CROSS_ENTROPY, SOFTMAX_FP16):
        k, source, _ = captured(path)
        code, meta, notes = block_online(source)
        facts = analyze_source(code)
        assert facts["parse_error"] is None and facts["imports"] == []
        kernel = next(f for f in facts["functions"] if f["name"] == k["name"])
        assert kernel["params"] == k["params"] and kernel["constexprs"] == k["constexprs"]
        assert "online_softmax_combine" not in code and "online_softmax_reduce" in code
        assert meta == {} and notes.startswith("block online: 1 online softmax")


@pytest.mark.parametrize("rows,cols,xblock,rblock", [(6, 37, 1, 8), (6, 37, 2, 16), (8, 64, 4, 64), (6, 5, 1, 8)])
def test_cross_entropy_s_running_max_and_sum_match_the_captured_kernel(rows, cols, xblock, rblock):
    k, source, header = captured(CROSS_ENTROPY)
    code, _, _ = block_online(source)
    rewritten = jit_of(runnable(header + code, rows, cols), k["name"])
    original = jit_of(runnable(source, rows, cols), k["name"])
    x = special_rows(rows, cols, torch.bfloat16, seed=rows * cols)
    outs = []
    for jit in (rewritten, original):
        m, s = torch.full((rows,), 7.0), torch.full((rows,), 7.0)
        jit[(rows // xblock,)](x, m, s, rows, cols, XBLOCK=xblock, R0_BLOCK=rblock)
        outs.append((m, s))
    (m, s), (want_m, want_s) = outs
    assert torch.equal(m.isnan(), want_m.isnan()) and torch.equal(m[~m.isnan()], want_m[~want_m.isnan()])
    same_or_close(s, want_s, rtol=1e-5)
    assert float(s[0]) == cols  # an all -inf row counts its elements, as Inductor's reduce leaves it
    assert s[2].isnan() and m[2] == float("inf") and s[3].isnan() and m[3].isnan()
    # and the sum is the softmax denominator of the finite rows
    finite = slice(4, rows)
    ref = torch.exp(x[finite].double() - x[finite].double().amax(1, keepdim=True)).sum(1)
    torch.testing.assert_close(s[finite].double(), ref, rtol=1e-5, atol=0)


@pytest.mark.parametrize("rows,cols,xblock,rblock", [(5, 32, 1, 8), (6, 64, 2, 16)])
def test_the_fp16_softmax_s_unmasked_first_pass_gives_the_captured_kernel_s_output(rows, cols, xblock, rblock):
    k, source, header = captured(SOFTMAX_FP16)
    code, _, _ = block_online(source)
    rewritten = jit_of(runnable(header + code, rows, cols), k["name"])
    original = jit_of(runnable(source, rows, cols), k["name"])
    x = special_rows(rows, cols, torch.float16, seed=rows + cols)
    outs = []
    for jit in (rewritten, original):
        y = torch.full((rows, cols), 7.0, dtype=torch.float16)
        jit[(rows // xblock,)](x, y, rows, cols, XBLOCK=xblock, R0_BLOCK=rblock)
        outs.append(y.float())
    same_or_close(outs[0], outs[1], rtol=2e-3)  # fp16 outputs: a rounding step apart at most
    torch.testing.assert_close(outs[0][4:], torch.softmax(x[4:].double(), 1).float(), rtol=2e-3, atol=1e-4)


def test_every_captured_online_softmax_is_rewritten_or_declined_with_a_reason():
    applied = declined = 0
    for path in sorted(glob.glob(os.path.join(FIXTURES, "survey-h*", "*", "module*.py"))):
        src = open(path).read()
        if "online_softmax_combine" not in src:
            continue
        for k in parse_module(src)["kernels"]:
            s, e = k["source_span"]
            kernel = src.encode()[s:e].decode()
            if "online_softmax_combine" not in kernel:
                continue
            got = op_rewrite({"source": kernel, "families": ["block_online", "lane_online"]})
            if got["candidates"]:
                applied += 1
                assert [c["family"] for c in got["candidates"]] == ["block_online", "lane_online"]
                assert all("online_softmax_combine" not in c["code"] for c in got["candidates"])
            else:
                declined += 1
                assert got["skipped"][0]["why"]
    assert (applied, declined) == (10, 0)  # softmax, log-softmax and cross entropy kernels of levels 1 and 2


def test_block_online_declines_what_it_does_not_understand_with_a_reason():
    _, source, _ = captured(CROSS_ENTROPY)
    with pytest.raises(NotApplicable, match="no online_softmax_combine"):
        block_online(source.replace("online_softmax_combine", "some_other_combine"))
    read_elsewhere = source.replace("tl.store(out_ptr1 + (x0), tmp4, None)", "tl.store(out_ptr1 + (x0), tmp4 + _tmp3_sum[:, 0], None)")
    assert read_elsewhere != source
    with pytest.raises(NotApplicable, match="read outside"):
        block_online(read_elsewhere)
    not_tile = source.replace("_tmp3_sum = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)", "_tmp3_sum = tl.zeros([XBLOCK, R0_BLOCK], tl.float64)")
    with pytest.raises(NotApplicable, match="does not start as one 0 tile"):
        block_online(not_tile)


def test_a_two_pass_softmax_also_gets_block_online_then_reverse_pass():
    k, source, header = captured(SOFTMAX_FP16)
    got = op_rewrite({"source": source, "reduction_hint": "INNER", "max_row": 16384})
    families = [c["family"] for c in got["candidates"]]
    assert families == ["reverse_pass", "block_online", "lane_online", "block_online+reverse_pass",
                        "lane_online+reverse_pass"], families
    both = got["candidates"][3]
    assert "online_softmax_combine" not in both["code"] and both["notes"].startswith("block online")
    # the composition runs and gives the captured kernel's output (the reversed second pass included)
    rows, cols = 4, 32
    rewritten = jit_of(runnable(header + both["code"], rows, cols), k["name"])
    original = jit_of(runnable(source, rows, cols), k["name"])
    x = special_rows(5, cols, torch.float16, seed=3)[1:]
    outs = []
    for jit in (rewritten, original):
        y = torch.full((rows, cols), 7.0, dtype=torch.float16)
        jit[(rows,)](x, y, rows, cols, XBLOCK=1, R0_BLOCK=8)
        outs.append(y.float())
    same_or_close(outs[0], outs[1], rtol=2e-3)
    # a kernel block_online does not touch gets no composition
    _, cross_entropy, _ = captured(CROSS_ENTROPY)
    assert [c["family"] for c in op_rewrite({"source": cross_entropy, "reduction_hint": "INNER",
                                             "max_row": 16384})["candidates"]] == ["block_online", "lane_online"]


def bit_equal(a, b):
    """Same bits, NaN where NaN (the payload aside)."""
    return torch.equal(a.isnan(), b.isnan()) and torch.equal(a[~a.isnan()], b[~b.isnan()])


@pytest.mark.parametrize("rows,cols,xblock,rblock", [(6, 37, 1, 8), (6, 37, 2, 16), (6, 5, 1, 8)])
def test_lane_online_gives_the_captured_cross_entropy_kernel_s_bits(rows, cols, xblock, rblock):
    k, source, header = captured(CROSS_ENTROPY)
    code, meta, notes = lane_online(source)
    assert meta == {} and notes.startswith("lane online: 1 online softmax combine")
    assert code.count("triton_helpers.exp(") == 1 and "online_softmax_combine" not in code
    rewritten = jit_of(runnable(header + code, rows, cols), k["name"])
    original = jit_of(runnable(source, rows, cols), k["name"])
    x = special_rows(rows, cols, torch.bfloat16, seed=rows * cols + 1)
    outs = []
    for jit in (rewritten, original):
        m, s = torch.full((rows,), 7.0), torch.full((rows,), 7.0)
        jit[(rows // xblock,)](x, m, s, rows, cols, XBLOCK=xblock, R0_BLOCK=rblock)
        outs.append((m, s))
    (m, s), (want_m, want_s) = outs
    assert bit_equal(m, want_m) and bit_equal(s, want_s), (m, want_m, s, want_s)


def test_lane_online_gives_the_captured_fp16_softmax_s_bits():
    k, source, header = captured(SOFTMAX_FP16)
    code, _, _ = lane_online(source)
    rows, cols = 6, 64
    rewritten = jit_of(runnable(header + code, rows, cols), k["name"])
    original = jit_of(runnable(source, rows, cols), k["name"])
    x = special_rows(rows, cols, torch.float16, seed=5)
    outs = []
    for jit in (rewritten, original):
        y = torch.full((rows, cols), 7.0, dtype=torch.float16)
        jit[(rows // 2,)](x, y, rows, cols, XBLOCK=2, R0_BLOCK=16)
        outs.append(y)
    assert bit_equal(outs[0], outs[1])
