"""The row_stream rewrite family (python/kernelopt/coder/row_stream.py) on real Inductor kernels: the softmax
and layer norm captured on an H200 (tests/fixtures/inductor) and the instance norm captured on an H100 at the
suite's size (survey-h100/level1__13_instance_norm: 8192 planes of 102400, the kernel that sat at 66% of the
bandwidth), shrunk for Triton's interpreter as tests/python/test_rewrite.py does."""
import ast
import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from kernelopt.artifact.inductor import parse_module  # noqa: E402
from kernelopt.artifact.static import analyze_source  # noqa: E402
from kernelopt.coder.rewrite import NotApplicable, op_rewrite  # noqa: E402
from kernelopt.coder.row_stream import row_stream  # noqa: E402

import interpreted  # noqa: E402  (tests/python/interpreted.py: captured kernels under the interpreter)
from interpreted import FIXTURES, HEADER, shrink  # noqa: E402



def kernel_source(fixture):
    """(kernel facts, the kernel function's text without Inductor's decorator) of a captured module."""
    src = open(os.path.join(FIXTURES, fixture)).read()
    k = parse_module(src)["kernels"][0]
    s, e = k["function_span"]
    return k, "@triton.jit\n" + src.encode()[s:e].decode()


def jit_of(text, name):
    return interpreted.jit_of(HEADER + text, name)


@pytest.fixture(autouse=True)
def interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def test_row_stream_takes_xblock_rows_one_after_another_with_the_same_signature():
    k, text = kernel_source("survey-h100/level1__13_instance_norm/module0.py")
    cand = op_rewrite({"source": text, "families": ["row_stream"]})["candidates"][0]
    # 8192 rows: 128 programs of 64; rows of 102400 take R0_BLOCK 4096 and 32 warps (measured: the fastest)
    assert cand["meta"] == {"XBLOCK": 64, "R0_BLOCK": 4096, "num_warps": 32}
    assert "reverse pass" in cand["notes"]  # the later pass also walks the row from its end
    facts = analyze_source(cand["code"])
    fn = next(f for f in facts["functions"] if f["name"] == k["name"])
    assert fn["params"] == k["params"] and fn["constexprs"] == k["constexprs"]
    assert facts["stored_params"][k["name"]] == ["out_ptr2"]
    outer = [n for n in ast.parse(cand["code"]).body[0].body if isinstance(n, ast.For)]
    assert len(outer) == 1 and ast.unparse(outer[0].iter) == "tl.range(0, XBLOCK)"
    assert "XBLOCK" not in ast.unparse(outer[0]).replace("tl.range(0, XBLOCK)", "")  # one row tall inside


def test_row_stream_declines_a_row_strided_in_memory():
    """A reduction over a middle or first dim reads its row `stride` elements apart: rows one after another read
    an element a line (level1/47 ran 31x slower than Inductor's kernel on an H100). The captured log-softmax over
    dim 0 (rows 262144 apart) is declined; the instance norm's contiguous rows are not."""
    _, text = kernel_source("survey-h100/level1__40_log_softmax_first_dim/module0.py")
    with pytest.raises(NotApplicable, match=r"strided in memory \(`in_ptr0 \+ \(x0 \+ 262144 \* r0_1\)`\)"):
        row_stream(text)
    _, text = kernel_source("survey-h100/level1__13_instance_norm/module0.py")
    assert row_stream(text)[1]["XBLOCK"] == 64


@pytest.mark.parametrize("xblock", [1, 2, 4])
def test_row_stream_instance_norm_matches_the_captured_kernel(xblock):
    k, text = kernel_source("survey-h100/level1__13_instance_norm/module0.py")
    rows, cols = 4, 37
    small = shrink(text, rows, cols, 8192, 102400).replace("102400.0", f"{float(cols)}")
    cand = op_rewrite({"source": small, "families": ["row_stream"]})["candidates"][0]
    x = torch.randn(rows, cols) * 2 + 1
    w, b = torch.rand(64) + 0.5, torch.randn(64)
    want = torch.empty(rows, cols)
    got = torch.full((rows, cols), float("nan"))
    jit_of(small, k["name"])[(rows,)](x, w, b, want, rows, cols, XBLOCK=1, R0_BLOCK=16)
    jit_of(cand["code"], k["name"])[(rows // xblock,)](x, w, b, got, rows, cols, XBLOCK=xblock, R0_BLOCK=16)
    ref = torch.nn.functional.instance_norm(x.view(1, rows, cols), eps=1e-5).view(rows, cols) * w[:rows, None] + b[:rows, None]
    torch.testing.assert_close(want, ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got, want, atol=1e-6, rtol=1e-6)


def test_row_stream_softmax_keeps_nan_and_inf_and_every_row():
    k, text = kernel_source("softmax.py")
    rows, cols = 8, 100
    small = shrink(text, rows, cols, 4096, 8192)
    code, meta, notes = row_stream(small)
    x = torch.randn(rows, cols)
    x[1, 5] = float("inf")
    x[2, 7] = float("nan")
    x[3, :] = float("-inf")
    want = torch.empty(rows, cols)
    got = torch.full((rows, cols), 123.0)
    jit_of(small, k["name"])[(rows,)](x, want, rows, cols, XBLOCK=1, R0_BLOCK=32)
    jit_of(code, k["name"])[(rows // 4,)](x, got, rows, cols, XBLOCK=4, R0_BLOCK=32)
    torch.testing.assert_close(got, want, atol=1e-6, rtol=1e-5, equal_nan=True)


def test_row_stream_declines_rows_too_long_for_l2():
    _, text = kernel_source("survey-h100/level1__39_log_softmax_long_row/module0.py")
    skipped = op_rewrite({"source": text, "families": ["row_stream"]})["skipped"]
    assert "do not fit L2" in skipped[0]["why"] and "393216" in skipped[0]["why"]


def test_row_stream_declines_what_it_does_not_understand_with_a_reason():
    _, pointwise = kernel_source("mlp_block.py")
    with pytest.raises(NotApplicable, match="no XBLOCK and R0_BLOCK|one pass"):
        row_stream(pointwise)
    one_pass = """@triton.jit
def k(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    xnumel = 64
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        tl.store(out_ptr0 + (r0_index + 64 * xindex), tl.load(in_ptr0 + (r0_index + 64 * xindex)))
"""
    with pytest.raises(NotApplicable, match="one pass"):
        row_stream(one_pass)
    with pytest.raises(NotApplicable, match="xoffset"):
        row_stream(one_pass.replace("tl.program_id(0) * XBLOCK", "tl.program_id(0) * XBLOCK + 0").replace(
            "    for r0_offset", "    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):\n        pass\n    for r0_offset", 1))
