"""The rewrite library (python/kernelopt/coder/rewrite.py; resident_row.py, reverse_pass.py) on real Inductor kernels.

The kernels are the looped reductions captured on an H200 (tests/fixtures/inductor/softmax.py:
4096 x 8192 online softmax; layernorm.py: 16384 x 4096 Welford layer norm; softmax_long_row.py:
2048 x 32768 online softmax, captured 2026-12-03 with the same versions; softmax_middle_dim.py:
softmax over the middle dimension of 64 x 512 x 2048, a row strided by 2048, same day). To run them under
Triton's interpreter in seconds, the tests shrink the constants Inductor baked into them (rows,
row length and the row stride) to a small, non-power-of-two shape; the code is otherwise the
captured code. The original runs with a small R0_BLOCK (several loop trips, a partial last
block), the rewrite with its own meta; they must agree.
"""
import ast
import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")


import interpreted  # noqa: E402  (tests/python/interpreted.py: captured kernels under the interpreter)
from interpreted import FIXTURES, HEADER, shrink  # noqa: E402
from kernelopt.artifact.inductor import parse_module  # noqa: E402
from kernelopt.coder.rewrite import resident_row, reverse_pass, NotApplicable  # noqa: E402
from kernelopt.worker.ops import TABLE  # noqa: E402  (the rewrite op behind the protocol: its defaults)



def kernel_function(fixture, prefix):
    """The text of the first kernel of a captured module whose name starts with prefix, without
    its Inductor decorator."""
    src = open(os.path.join(FIXTURES, fixture + ".py")).read()
    for k in parse_module(src)["kernels"]:
        if k["name"].startswith(prefix):
            s, e = k["function_span"]
            return k["name"], "@triton.jit\n" + src.encode()[s:e].decode()
    raise AssertionError(f"{fixture} has no {prefix} kernel")


def jit_of(text, name):
    return interpreted.jit_of(HEADER + text, name)


@pytest.fixture(autouse=True)
def interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def test_softmax_rewrite_reads_each_row_once_and_matches():
    name, text = kernel_function("softmax", "triton_red_")
    rows, cols = 3, 100
    small = shrink(text, rows, cols, 4096, 8192)
    code, meta, notes = resident_row(small)
    assert meta["R0_BLOCK"] == 128 and meta["XBLOCK"] == 1
    assert "1 repeated load(s) reused" in notes
    tree = ast.parse(code)
    loads = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "tl.load"]
    assert len(loads) == 1  # the second pass no longer reads the row from memory
    assert not any(isinstance(n, ast.For) for n in ast.walk(tree))
    assert "tl.static_assert(R0_BLOCK >= 100)" in code

    x = torch.randn(rows, cols) * 4
    want = torch.empty(rows, cols)
    got = torch.full((rows, cols), float("nan"))
    jit_of(small, name)[(rows,)](x, want, rows, cols, XBLOCK=1, R0_BLOCK=32)  # 4 trips, the last partial
    jit_of(code, name)[(rows,)](x, got, rows, cols, XBLOCK=1, R0_BLOCK=meta["R0_BLOCK"])
    torch.testing.assert_close(want, torch.softmax(x, -1), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(got, want, atol=1e-6, rtol=1e-5)


def test_softmax_rewrite_keeps_nan_and_inf_where_the_original_has_them():
    name, text = kernel_function("softmax", "triton_red_")
    rows, cols = 4, 100
    small = shrink(text, rows, cols, 4096, 8192)
    code, meta, notes = resident_row(small)
    assert "1 online-softmax combine(s) taken directly" in notes
    x = torch.randn(rows, cols)
    x[0, 5] = float("inf")
    x[1, 7] = float("nan")
    x[2, :] = float("-inf")
    x[3, 99] = float("-inf")
    want = torch.empty(rows, cols)
    got = torch.empty(rows, cols)
    jit_of(small, name)[(rows,)](x, want, rows, cols, XBLOCK=1, R0_BLOCK=32)
    jit_of(code, name)[(rows,)](x, got, rows, cols, XBLOCK=1, R0_BLOCK=meta["R0_BLOCK"])
    torch.testing.assert_close(got, want, atol=1e-6, rtol=1e-5, equal_nan=True)
    assert torch.isnan(got[:3]).all() and not torch.isnan(got[3]).any()


def test_layer_norm_rewrite_matches():
    name, text = kernel_function("layernorm", "triton_red_")
    rows, cols = 2, 100
    small = shrink(text, rows, cols, 16384, 4096)
    code, meta, notes = resident_row(small)
    assert "1 repeated load(s) reused" in notes and "1 Welford reduction(s) as two sums" in notes
    assert "triton_helpers.welford(" not in code
    x, w, b = torch.randn(rows, cols) + 3, torch.randn(cols), torch.randn(cols)
    want = torch.empty(rows, cols)
    got = torch.full((rows, cols), float("nan"))
    jit_of(small, name)[(rows,)](x, w, b, want, rows, cols, XBLOCK=1, R0_BLOCK=64)
    jit_of(code, name)[(rows,)](x, w, b, got, rows, cols, XBLOCK=1, R0_BLOCK=meta["R0_BLOCK"])
    torch.testing.assert_close(want, torch.nn.functional.layer_norm(x, (cols,), w, b), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_rewrite_refuses_a_block_smaller_than_the_row():
    name, text = kernel_function("softmax", "triton_red_")
    code, _, _ = resident_row(shrink(text, 3, 100, 4096, 8192))
    x, out = torch.randn(3, 100), torch.empty(3, 100)
    with pytest.raises(Exception, match="static_assert|Assert|assert"):
        jit_of(code, name)[(3,)](x, out, 3, 100, XBLOCK=1, R0_BLOCK=64)


def test_loads_after_a_store_are_not_reused():
    text = """@triton.jit
def k(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    r0_numel = 64
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        tmp0 = tl.load(in_ptr0 + (r0_index + 64 * xindex), r0_index < r0_numel, other=0.0)
        tl.store(in_ptr0 + (r0_index + 64 * xindex), tmp0 * 2, r0_index < r0_numel)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        tmp1 = tl.load(in_ptr0 + (r0_index + 64 * xindex), r0_index < r0_numel, other=0.0)
        tl.store(out_ptr0 + (r0_index + 64 * xindex), tmp1, r0_index < r0_numel)
"""
    code, _, notes = resident_row(text)
    assert "0 repeated load(s) reused" in notes
    assert code.count("tl.load(") == 2


def test_loads_through_a_name_that_changes_are_not_reused():
    text = """@triton.jit
def k(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    r0_numel = 64
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    shift = 0
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        tmp0 = tl.load(in_ptr0 + (r0_index + shift), r0_index < r0_numel, other=0.0)
    shift = 64
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        tmp1 = tl.load(in_ptr0 + (r0_index + shift), r0_index < r0_numel, other=0.0)
        tl.store(out_ptr0 + r0_index, tmp0 + tmp1, r0_index < r0_numel)
"""
    _, _, notes = resident_row(text)
    assert "0 repeated load(s) reused" in notes


@pytest.mark.parametrize("fixture,prefix,why", [
    ("softmax_small", "triton_", "no R0_BLOCK|no loop"),
    ("mlp_block", "triton_poi_", "no R0_BLOCK"),
])
def test_rewrite_declines_kernels_it_does_not_understand(fixture, prefix, why):
    _, text = kernel_function(fixture, prefix)
    result = TABLE["rewrite"]({"source": text, "reduction_hint": "INNER"})
    assert result["candidates"] == []
    assert result["skipped"][0]["family"] == "resident_row"
    import re
    assert re.search(why, result["skipped"][0]["why"]), result


def test_rewrite_declines_rows_that_are_not_contiguous():
    _, text = kernel_function("softmax", "triton_red_")
    for hint in ("OUTER", "OUTER_TINY", "DEFAULT", ""):
        result = TABLE["rewrite"]({"source": text, "reduction_hint": hint})
        assert [c["family"] for c in result["candidates"]] == ["reverse_pass", "row_stream", *ONLINE], hint  # any layout
        assert result["skipped"][0]["family"] == "resident_row" and "not contiguous" in result["skipped"][0]["why"]
    result = TABLE["rewrite"]({"source": text, "reduction_hint": "INNER"})
    assert [c["family"] for c in result["candidates"]] == ["resident_row", "reverse_pass", "row_stream", *ONLINE]


# an online softmax (this fixture's first pass): block_online, and the two-pass families again on its output
ONLINE = ["block_online", "lane_online", "block_online+reverse_pass", "block_online+row_stream",
          "lane_online+reverse_pass", "lane_online+row_stream"]


def test_rewrite_declines_rows_that_do_not_fit_and_dynamic_rows():
    _, text = kernel_function("softmax", "triton_red_")
    with pytest.raises(NotApplicable, match="does not fit"):
        resident_row(text, max_row=4096)
    with pytest.raises(NotApplicable, match="dynamic"):
        resident_row(text.replace("    r0_numel = 8192\n", ""))


@pytest.mark.parametrize("fixture,shape", [("softmax_long_row", (2048, 32768)), ("softmax", (4096, 8192))])
def test_reverse_pass_walks_the_last_pass_backwards_and_matches(fixture, shape):
    name, text = kernel_function(fixture, "triton_red_")
    rows, cols = 3, 100
    small = shrink(text, rows, cols, *shape)
    code, meta, notes = reverse_pass(small)
    assert meta == {} and "pass(es) 2 of 2" in notes
    loops = [n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.For)]
    assert [ast.unparse(l.target) for l in loops] == ["r0_offset", "r0_step"]
    assert ast.unparse(loops[1].body[0]) == "r0_offset = (r0_numel - 1) // R0_BLOCK * R0_BLOCK - r0_step"
    x = torch.randn(rows, cols) * 3
    want = torch.empty(rows, cols)
    jit_of(small, name)[(rows,)](x, want, rows, cols, XBLOCK=1, R0_BLOCK=32)
    for block in (32, 64, 128):  # 4 trips with a partial last block, 2 trips, one trip
        got = torch.full((rows, cols), float("nan"))
        jit_of(code, name)[(rows,)](x, got, rows, cols, XBLOCK=1, R0_BLOCK=block)
        torch.testing.assert_close(got, want, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(want, torch.softmax(x, -1), atol=1e-6, rtol=1e-5)


def test_reverse_pass_on_layer_norm_matches():
    name, text = kernel_function("layernorm", "triton_red_")
    rows, cols = 2, 100
    small = shrink(text, rows, cols, 16384, 4096)
    code, _, _ = reverse_pass(small)
    x, w, b = torch.randn(rows, cols) + 3, torch.randn(cols), torch.randn(cols)
    want, got = torch.empty(rows, cols), torch.full((rows, cols), float("nan"))
    jit_of(small, name)[(rows,)](x, w, b, want, rows, cols, XBLOCK=1, R0_BLOCK=32)
    jit_of(code, name)[(rows,)](x, w, b, got, rows, cols, XBLOCK=1, R0_BLOCK=32)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


THREE_PASSES = """@triton.jit
def k(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    r0_numel = 100
    x0 = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    _m = tl.full([XBLOCK, R0_BLOCK], float('-inf'), tl.float32)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        tmp0 = tl.load(in_ptr0 + (r0_index + 100 * x0), r0_index < r0_numel, other=float('-inf'))
        _m = tl.maximum(_m, tmp0)
    m = tl.max(_m, 1)[:, None]
    _s = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        tmp1 = tl.load(in_ptr0 + (r0_index + 100 * x0), r0_index < r0_numel, other=float('-inf'))
        _s = _s + tl.exp(tmp1 - m)
    s = tl.sum(_s, 1)[:, None]
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        tmp2 = tl.load(in_ptr0 + (r0_index + 100 * x0), r0_index < r0_numel, other=0.0)
        tl.store(out_ptr0 + (r0_index + 100 * x0), tl.exp(tmp2 - m) / s, r0_index < r0_numel)
"""


def test_reverse_pass_leaves_accumulating_passes_in_order():
    code, _, notes = reverse_pass(THREE_PASSES)
    assert "pass(es) 3 of 3" in notes  # the sum pass carries _s from block to block: not reversed
    loops = [n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.For)]
    assert [ast.unparse(l.target) for l in loops] == ["r0_offset", "r0_offset", "r0_step"]
    x = torch.randn(2, 100)
    want, got = torch.empty(2, 100), torch.empty(2, 100)
    jit_of(THREE_PASSES, "k")[(2,)](x, want, 2, 100, XBLOCK=1, R0_BLOCK=32)
    jit_of(code, "k")[(2,)](x, got, 2, 100, XBLOCK=1, R0_BLOCK=32)
    torch.testing.assert_close(want, torch.softmax(x, -1), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(got, want, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("change,why", [
    # a store to one address per row: which block stores last would change
    (("tl.store(out_ptr0 + (r0_index + 100 * x0), tl.exp(tmp2 - m) / s, r0_index < r0_numel)",
      "tl.store(out_ptr0 + x0, tl.sum(tmp2, 1)[:, None])"), "no later pass"),
    # the last trip's value is read after the loop
    (("tl.store(out_ptr0 + (r0_index + 100 * x0), tl.exp(tmp2 - m) / s, r0_index < r0_numel)\n",
      "tl.store(out_ptr0 + (r0_index + 100 * x0), tl.exp(tmp2 - m) / s, r0_index < r0_numel)\n"
      "    tl.store(out_ptr0 + x0, tl.sum(tmp2, 1)[:, None])\n"), "no later pass"),
])
def test_reverse_pass_declines_when_order_could_show(change, why):
    text = THREE_PASSES.replace(*change)
    assert text != THREE_PASSES
    with pytest.raises(NotApplicable, match=why):
        reverse_pass(text)


def test_reverse_pass_declines_single_pass_kernels():
    _, text = kernel_function("softmax_long_row", "triton_red_")
    one = resident_row(text)[0]  # straight-lined: no loop left
    with pytest.raises(NotApplicable, match="one pass"):
        reverse_pass(one)


def test_short_rows_share_a_program_and_still_match(monkeypatch):
    from kernelopt.coder import resident_row as family
    monkeypatch.setattr(family, "MIN_PROGRAMS", 8)  # the interpreter's size: 16 rows, not thousands
    name, text = kernel_function("softmax", "triton_red_")
    rows, cols = 16, 100  # rows of 100: a 128 block; 2 rows per program keeps 8 programs
    small = shrink(text, rows, cols, 4096, 8192)
    code, meta, notes = resident_row(small)
    assert meta["XBLOCK"] == 2 and meta["R0_BLOCK"] == 128 and "(2 rows per program)" in notes
    x = torch.randn(rows, cols)
    want, got = torch.empty(rows, cols), torch.full((rows, cols), float("nan"))
    jit_of(small, name)[(rows,)](x, want, rows, cols, XBLOCK=1, R0_BLOCK=64)
    jit_of(code, name)[(rows // 2,)](x, got, rows, cols, XBLOCK=2, R0_BLOCK=128)
    torch.testing.assert_close(got, want, atol=1e-6, rtol=1e-5)
    # 17 rows: a second row per program would leave a partial last program, and this kernel has
    # no row mask (Inductor made xmask all True for its 4096 rows): one row per program
    odd = shrink(text, 17, cols, 4096, 8192)
    assert "xmask = tl.full([XBLOCK], True" in odd
    code, meta, notes = resident_row(odd)
    assert meta["XBLOCK"] == 1 and "rows per program" not in notes
    x = torch.randn(17, cols)
    got = torch.full((17, cols), float("nan"))
    jit_of(code, name)[(17,)](x, got, 17, cols, XBLOCK=meta["XBLOCK"], R0_BLOCK=128)
    torch.testing.assert_close(got, torch.softmax(x, -1), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("block,xnumel,want", [(8192, 4096, 1), (4096, 10**6, 1), (1024, 10**6, 4),
                                               (128, 10**6, 32), (128, 2000, 2), (128, 700, 1), (128, None, 1),
                                               (128, 3 * 2**20, 32), (128, 5 * 2**18 + 2, 2), (128, 2001 * 8, 8)])
def test_rows_per_program(block, xnumel, want):
    from kernelopt.coder.resident_row import _rows_per_program
    assert _rows_per_program(block, xnumel) == want


# -- a row over a strided dimension: softmax over the middle dimension (64 x 512 x 2048 on the H200) --

def middle_dim(batch, reduce, inner):
    """The captured middle-dimension softmax kernel, shrunk to batch x reduce x inner."""
    name, text = kernel_function("softmax_middle_dim", "triton_red_")
    for old, new in ((f"xnumel = {64 * 2048}", f"xnumel = {batch * inner}"), ("r0_numel = 512", f"r0_numel = {reduce}"),
                     ("% 2048", f"% {inner}"), ("// 2048", f"// {inner}"), ("2048*r0_2", f"{inner}*r0_2"),
                     ("1048576*x1", f"{reduce * inner}*x1")):
        assert old in text, old
        text = text.replace(old, new)
    return name, text


def test_strided_row_takes_adjacent_columns_per_program_and_matches():
    name, full = middle_dim(64, 512, 2048)
    _, meta, notes = resident_row(full, reduction_hint="DEFAULT")
    assert meta["R0_BLOCK"] == 512 and meta["XBLOCK"] == 32  # 32 adjacent columns: 128 bytes per row position
    assert "32 adjacent strided rows per program" in notes and "1 repeated load(s) reused" in notes

    batch, reduce, inner = 2, 100, 16
    name, small = middle_dim(batch, reduce, inner)
    code, meta, notes = resident_row(small, reduction_hint="DEFAULT")
    assert meta["R0_BLOCK"] == 128 and meta["XBLOCK"] == 16  # the largest power of two dividing the 16 columns
    x = torch.randn(batch, reduce, inner) * 4
    want = torch.empty_like(x)
    got = torch.full_like(x, float("nan"))
    jit_of(small, name)[(batch * inner // 4,)](x, want, batch * inner, reduce, XBLOCK=4, R0_BLOCK=32)
    jit_of(code, name)[(batch * inner // meta["XBLOCK"],)](x, got, batch * inner, reduce, XBLOCK=meta["XBLOCK"],
                                                            R0_BLOCK=meta["R0_BLOCK"])
    torch.testing.assert_close(want, torch.softmax(x, 1), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(got, want, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("change, why", [
    (("x0 + 16*r0_2", "2*x0 + 16*r0_2"), "not adjacent"),        # columns two apart
    (("x0 + 16*r0_2", "x0 + x0 + 16*r0_2"), "not adjacent"),     # the column twice
    (("x0 = (xindex % 16)", "x0 = (xindex % 16) * 3"), "not adjacent"),  # a column scaled where it is defined
])
def test_strided_row_declines_columns_that_are_not_adjacent(change, why):
    _, small = middle_dim(2, 100, 16)
    assert change[0] in small
    with pytest.raises(NotApplicable, match=why):
        resident_row(small.replace(*change), reduction_hint="OUTER")


def test_strided_row_declines_rows_too_long_for_enough_columns():
    _, long_rows = middle_dim(2, 8192, 16)  # 8192 x 8 columns would hold 65536 elements on chip
    with pytest.raises(NotApplicable, match="no 8 or more adjacent columns"):
        resident_row(long_rows, reduction_hint="DEFAULT")
    _, rows_4096 = middle_dim(64, 4096, 4096)  # level1/47's shape: 8 columns of 4096, the contiguous rows' limit
    _, meta, _ = resident_row(rows_4096, reduction_hint="DEFAULT")
    assert (meta["XBLOCK"], meta["R0_BLOCK"], meta["num_warps"]) == (8, 4096, 32)
    with pytest.raises(NotApplicable, match="no 8 or more adjacent columns"):
        resident_row(rows_4096, max_row=16384, reduction_hint="DEFAULT")
    _, few = middle_dim(2, 100, 4)  # 4 adjacent columns only: less than a sector
    with pytest.raises(NotApplicable, match="no 8 or more adjacent columns"):
        resident_row(few, reduction_hint="DEFAULT")
