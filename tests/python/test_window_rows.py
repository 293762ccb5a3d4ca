"""The `window_rows` family (python/kernelopt/coder/window_rows.py) on real Inductor pooling kernels.

The kernels were captured on an H100 (tests/fixtures/inductor/survey-h100: torch 2.11, triton 3.6) at the
suite's sizes. To run them under Triton's interpreter, `shrink` edits the integer constants of a copy of the
kernel's AST to a small shape with odd sizes (address constants recomposed over the new strides, index
splits over the new output shape, the named input bounds replaced); the code is otherwise the captured
code. The original and the rewrite then run on the same input, and every output is compared bit for bit
(max-pool) or within rounding (average pool).
"""
import ast
import math
import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from kernelopt.artifact.inductor import parse_module  # noqa: E402
from kernelopt.artifact.static import analyze_source  # noqa: E402
from kernelopt.coder.rewrite import FAMILIES, NotApplicable, op_rewrite  # noqa: E402
from kernelopt.coder.window_affine import index_form  # noqa: E402
from kernelopt.coder.window_rows import _groups, window_rows  # noqa: E402

import interpreted  # noqa: E402  (tests/python/interpreted.py: captured kernels under the interpreter)
from interpreted import FIXTURES, HEADER  # noqa: E402

SURVEY = os.path.join(FIXTURES, "survey-h100")


def kernel_function(path, prefix=""):
    """(name, text) of the first kernel of a captured module whose name starts with prefix, as
    `@triton.jit` + its function (Inductor's decorator dropped)."""
    src = open(path).read()
    for k in parse_module(src)["kernels"]:
        if k["name"].startswith(prefix):
            s, e = k["function_span"]
            return k["name"], "@triton.jit\n" + src.encode()[s:e].decode()
    raise AssertionError(f"{path} has no {prefix} kernel")


def survey(problem, prefix=""):
    return kernel_function(os.path.join(SURVEY, problem, "module0.py"), prefix)


def _strides(shape):
    out, step = [], 1
    for size in reversed(shape):
        out.append(step)
        step *= size
    return out[::-1]


def _recompose(c, old, new):
    """c as a sum of old strides with small multipliers (largest first, nearest), re-summed over new."""
    out = 0
    for so, sn in zip(old, new):
        n = round(c / so)
        c, out = c - n * so, out + n * sn
    assert c == 0
    return out


class _Shrink(ast.NodeTransformer):
    def __init__(self, old, new, bounds):
        self.old, self.new, self.bounds = old, new, bounds
        self.in_address = False

    def visit_Call(self, node):
        if ast.unparse(node.func) in ("tl.load", "tl.store") and isinstance(node.args[0], ast.BinOp):
            self.in_address = "tl.load" if ast.unparse(node.func) == "tl.load" else "tl.store"
            node.args[0] = self.visit(node.args[0])
            self.in_address = False
            node.args[1:] = [self.visit(a) for a in node.args[1:]]
            node.keywords = [self.visit(k) for k in node.keywords]
            return node
        return self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
            return self.visit_Constant(ast.Constant(-node.operand.value))
        return self.generic_visit(node)

    def visit_Constant(self, node):
        if type(node.value) is not int:
            return node
        if self.in_address:
            old, new = self.old[self.in_address], self.new[self.in_address]
            return ast.Constant(_recompose(node.value, old, new))
        if node.value in self.bounds:
            return ast.Constant(self.bounds[node.value])
        assert abs(node.value) < 16, f"constant {node.value} has no new value"
        return node


def shrink(text, old_in, new_in, old_out, new_out, bounds=None):
    """The kernel with the input and output shapes Inductor baked into it (old_in, old_out: contiguous)
    changed to new_in, new_out by editing its AST's integer constants: xnumel; each `(xindex // D) % M`
    (D an output stride, D*M one or the output's size); every constant of a load's address (over the
    input's strides) and of the store's (the output's); `bounds` (old -> new) for the rest, which must
    otherwise be small (window offsets, strides, padding)."""
    tree = ast.parse(text)
    fn = tree.body[0]
    out_old, out_new = _strides(old_out) + [math.prod(old_out)], _strides(new_out) + [math.prod(new_out)]
    out_map = dict(zip(out_old, out_new))
    shrinker = _Shrink({"tl.load": _strides(old_in), "tl.store": _strides(old_out)},
                       {"tl.load": _strides(new_in), "tl.store": _strides(new_out)}, bounds or {})
    for node in fn.body:
        target = node.targets[0].id if isinstance(node, ast.Assign) else None
        form = index_form(node.value) if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if target == "xnumel":
            node.value = ast.Constant(math.prod(new_out))
        elif form:
            divisor, modulus = form
            for sub in ast.walk(node.value):
                if isinstance(sub, ast.BinOp) and isinstance(sub.right, ast.Constant):
                    if isinstance(sub.op, ast.FloorDiv) or modulus is None:
                        sub.right = ast.Constant(out_map[divisor])
                    else:
                        sub.right = ast.Constant(out_map[divisor * modulus] // out_map[divisor])
        elif target not in ("r0_numel", "rnumel") and not isinstance(node, ast.AnnAssign):
            shrinker.visit(node)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


def jit_of(text, name):
    return interpreted.jit_of(HEADER + text, name)


@pytest.fixture(autouse=True)
def interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def run(text, name, x, out_shape, xblock, grid=None, extra=()):
    """The kernel on x, on a grid of cdiv(xnumel, XBLOCK) programs (or `grid`); the output starts as NaN."""
    out = torch.full(out_shape, float("nan"))
    n = out.numel()
    jit_of(text, name)[(grid or -(-n // xblock),)](x, out, n, *extra, XBLOCK=xblock)
    return out


def original_xblock(text, n):
    """An XBLOCK the original can run with in few programs (the interpreter's cost is per program):
    1024 where it masks xindex < xnumel, else a block dividing xnumel (Inductor dropped the mask)."""
    if "xmask = xindex < xnumel" in text:
        return 1024
    return max(b for b in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024) if n % b == 0)


def bits(t):
    return t.contiguous().view(torch.int32)


def awkward_input(shape, seed=0):
    """Random values with NaNs of two payloads, -inf, +inf, and a patch of zeros of both signs (a
    max-pool must pick the same one of equal values as the original)."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=gen)
    flat = x.view(-1)
    n = flat.numel()
    idx = torch.randperm(n, generator=gen)
    flat[idx[: n // 40]] = float("-inf")
    flat[idx[n // 40: n // 30]] = float("inf")
    nans = flat.view(torch.int32)
    nans[idx[n // 30: n // 25]] = 0x7FC00001
    nans[idx[n // 25: n // 20]] = 0x7FC00002
    zeros = x[..., :4, :4] if x.dim() == 4 else x[..., :3, :4, :4]
    signs = torch.randint(0, 2, zeros.shape, generator=gen).bool()
    zeros.copy_(torch.where(signs, torch.tensor(0.0), torch.tensor(-0.0)))
    return x


def assert_gate1_facts(original, rewritten, name):
    """What gate 1 (src/verify/static_gate.cpp) reads from the worker's facts: same name, parameters and
    constexprs, the same pointers stored to, nothing called that the original does not call except the
    tile loop's range/static_range/num_programs and Inductor's helpers, and nothing off limits."""
    a, b = analyze_source(HEADER + original), analyze_source(HEADER + rewritten)
    assert b["parse_error"] is None
    fa = {f["name"]: f for f in a["functions"]}[name]
    fb = {f["name"]: f for f in b["functions"]}[name]
    assert (fb["params"], fb["constexprs"]) == (fa["params"], fa["constexprs"])
    assert fb["decorators"] == ["triton.jit"]
    assert b["stored_params"][name] == a["stored_params"][name]
    added = {c["name"] for c in b["calls"]} - {c["name"] for c in a["calls"]}
    added -= {"range", "tl.static_range", "tl.num_programs"}
    assert all(c.startswith("triton_helpers.") for c in added), added  # the reduction's op, for max2/min2
    forbidden = {"exec", "eval", "compile", "open", "__import__", "globals", "getattr", "torch", "os", "sys"}
    assert not forbidden & set(b["names"])


MAXPOOL_4X4 = ("level1__50_max_pool2d_4x4_stride1", (32, 64, 512, 512), (32, 64, 509, 509))


def small_4x4(new_in=(1, 2, 14, 12)):
    name, text = survey(MAXPOOL_4X4[0])
    new_out = (*new_in[:2], new_in[2] - 3, new_in[3] - 3)
    return name, shrink(text, MAXPOOL_4X4[1], new_in, MAXPOOL_4X4[2], new_out), new_out


def test_applies_to_the_4x4_stride_1_fixture_and_loads_a_quarter_per_row():
    name, text = survey(MAXPOOL_4X4[0])
    code, meta, notes = window_rows(text)
    assert "16-element window, 4 loaded per output row and 12 taken from the row above (4 groups)" in notes
    assert meta == {"XBLOCK": 4096, "num_warps": 4, "num_stages": 1}  # 512 columns x 8 rows
    fn = ast.parse(code).body[0]
    first_row = [n for n in ast.walk(fn) if isinstance(n, ast.If)]
    assert len(first_row) == 1 and ast.unparse(first_row[0].test) == "wr_t == 0"
    loads = lambda nodes: [c for n in nodes for c in ast.walk(n) if isinstance(c, ast.Call)  # noqa: E731
                           and ast.unparse(c.func) == "tl.load"]
    assert len(loads(first_row[0].body)) == 12 and len(loads([fn])) == 16  # 4 loads on every later row
    assert all("wr_valid" in ast.unparse(c.args[1]) for c in loads([fn]))
    loops = [n for n in ast.walk(fn) if isinstance(n, ast.For)]
    assert ast.unparse(loops[0].iter) == "range(tl.program_id(0), 2048 * wr_row_tiles * wr_col_tiles, tl.num_programs(0))"
    assert ast.unparse(loops[1].iter) == "tl.static_range(wr_rows)"
    assert_gate1_facts(text, code, name)


def test_max_pool_4x4_is_bit_identical_on_nan_inf_and_signed_zeros():
    name, small, out_shape = small_4x4()
    x = awkward_input((1, 2, 14, 12))
    n = math.prod(out_shape)
    want = run(small, name, x, out_shape, original_xblock(small, n))
    clean = torch.randn(1, 2, 14, 12)
    assert torch.equal(run(small, name, clean, out_shape, original_xblock(small, n)),
                       torch.nn.functional.max_pool2d(clean, 4, 1))  # the shrunk kernel is still a 4x4 max-pool
    code, meta, _ = window_rows(small)
    assert meta["XBLOCK"] == 16 * 8  # 9 columns: a 16-wide vector, 8 of its 11 rows
    # tiles of 1x1, 2x1, 8x1, 16x2 (partial columns), 16x4, 16x8 and 16x11 (partial rows) outputs, on the
    # launcher's grid cdiv(xnumel, XBLOCK) or on fewer programs than tiles (the interpreter pays per program)
    for xblock, grid in ((1, 3), (2, 4), (8, 5), (32, None), (128, 1), (1024, None)):
        got = run(code, name, x, out_shape, xblock, grid=grid)
        assert torch.equal(bits(got), bits(want)), (xblock, grid)


class _CountStores(ast.NodeTransformer):
    """tl.store(ptr, value, mask) -> tl.atomic_add(ptr, 1.0, mask): the output counts its writes."""

    def visit_Call(self, node):
        if ast.unparse(node.func) == "tl.store":
            return ast.parse(f"tl.atomic_add({ast.unparse(node.args[0])}, 1.0, {ast.unparse(node.args[2])})",
                             mode="eval").body
        return node


@pytest.mark.parametrize("xblock,grid", [(2, 3), (16, None), (64, 7), (1024, None), (32, 1)])
def test_every_output_is_written_exactly_once(xblock, grid):
    name, small, out_shape = small_4x4((2, 1, 17, 13))  # 14 x 10 outputs: partial tiles both ways
    code, _, _ = window_rows(small)
    counting = ast.unparse(ast.fix_missing_locations(_CountStores().visit(ast.parse(code))))
    out = torch.zeros(out_shape)
    n = out.numel()
    jit_of(counting, name)[(grid or -(-n // xblock),)](torch.randn(2, 1, 17, 13), out, n, XBLOCK=xblock)
    assert torch.equal(out, torch.ones(out_shape))


POOLS = [  # fixture, old input, new input, old output, new output, input bounds, torch's pool on the new shape
    ("level1__15_max_pool2d", (128, 128, 224, 224), (1, 4, 10, 10), (128, 128, 112, 112), (1, 4, 5, 5),
     {224: 10}, lambda x: torch.nn.functional.max_pool2d(x, 3, 2, 1)),
    ("level1__51_max_pool2d_dilated_ceil", (64, 128, 255, 255), (1, 4, 11, 11), (64, 128, 127, 127), (1, 4, 5, 5),
     {255: 11}, lambda x: torch.nn.functional.max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True)),
    ("level1__52_max_pool3d", (16, 32, 64, 128, 128), (1, 2, 4, 9, 9), (16, 32, 32, 64, 64), (1, 2, 2, 5, 5),
     {64: 4, 128: 9}, lambda x: torch.nn.functional.max_pool3d(x, 3, 2, 1)),
]


@pytest.mark.parametrize("fixture,old_in,new_in,old_out,new_out,bounds,pool", POOLS, ids=[p[0] for p in POOLS])
def test_strided_padded_dilated_and_3d_max_pools_are_bit_identical(fixture, old_in, new_in, old_out, new_out,
                                                                    bounds, pool):
    name, text = survey(fixture)
    small = shrink(text, old_in, new_in, old_out, new_out, bounds)
    persistent = "r0_numel" in small
    extra = (27,) if persistent else ()
    n = math.prod(new_out)
    clean = torch.randn(new_in)
    assert torch.equal(run(small, name, clean, new_out, original_xblock(small, n), extra=extra), pool(clean))
    code, meta, notes = window_rows(small)
    assert_gate1_facts(small, code, name)
    x = awkward_input(new_in)
    want = run(small, name, x, new_out, original_xblock(small, n), extra=extra)
    if persistent:
        # the original reduces with max2, which the interpreter runs as tl.max (kernels._interpreter_helpers:
        # NaN may not propagate as on the GPU) and a GPU as a tree, which may pick another of equal zeros or
        # NaN payloads than the window's order: with one NaN payload and no zeros, torch's pool (which
        # propagates NaN as triton_helpers.maximum does) is the reference
        x[x == 0] = 0.5
        x[torch.isnan(x)] = float("nan")
        want = pool(x)
    for xblock, grid in ((4, 3), (64, None)) if persistent else ((2, 3), (16, 5), (64, None), (256, None)):
        got = run(code, name, x, new_out, xblock, grid=grid, extra=extra)
        assert torch.equal(bits(got), bits(want)), (xblock, notes)


def test_average_pool_with_ceil_mode_and_excluded_padding_matches_within_rounding():
    name, text = survey("level1__53_avg_pool2d_ceil_exclude_pad")
    small = shrink(text, (128, 128, 223, 223), (1, 4, 11, 11), (128, 128, 112, 112), (1, 4, 6, 6), {223: 11})
    code, meta, notes = window_rows(small)
    assert "9-element window, 6 loaded per output row and 3 taken from the row above" in notes
    assert_gate1_facts(small, code, name)
    x = torch.randn(1, 4, 11, 11)
    n = 4 * 36
    want = run(small, name, x, (1, 4, 6, 6), original_xblock(small, n))
    torch.testing.assert_close(want, torch.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                                     count_include_pad=False))
    for xblock, grid in ((2, 4), (64, None)):
        torch.testing.assert_close(run(code, name, x, (1, 4, 6, 6), xblock, grid), want, atol=1e-6, rtol=1e-6)


def test_a_mask_that_differs_between_rows_keeps_those_loads_fresh():
    """Element (0, 0) of the window gets a bound on its output row: in row o1 + 1 it is no longer the load
    element (1, 0) made for row o1, so it is loaded on every row; carrying it would change the result."""
    name, small, out_shape = small_4x4()
    tree = ast.parse(small)
    loads = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "tl.load"]
    for load in loads:  # all alike but for the mask
        load.keywords.append(ast.keyword(arg="other", value=ast.parse("float('-inf')", mode="eval").body))
    loads[0].args[1] = ast.parse("xmask & (x1 < 5)", mode="eval").body
    bounded = ast.unparse(ast.fix_missing_locations(tree))
    code, _, notes = window_rows(bounded)
    assert "4 loaded per output row and 11 taken from the row above" not in notes  # the fresh one is counted apart
    assert "5 loaded per output row and 11 taken from the row above" in notes
    x = torch.randn(1, 2, 14, 12)
    n = math.prod(out_shape)
    want = run(bounded, name, x, out_shape, original_xblock(small, n))
    assert not torch.equal(want, run(small, name, x, out_shape, original_xblock(small, n)))  # the bound shows
    for xblock, grid in ((8, 5), (128, None)):
        assert torch.equal(bits(run(code, name, x, out_shape, xblock, grid)), bits(want)), xblock


@pytest.mark.parametrize("path,prefix,why", [
    (os.path.join(FIXTURES, "softmax.py"), "triton_red_", "not a one-dimensional pointwise kernel"),
    (os.path.join(SURVEY, "level3__20_diffusion_resblock", "module0.py"), "triton_poi_fused_silu_3",
     "not combined by a chain"),  # a pointwise map
    (os.path.join(SURVEY, "level1__49_max_pool1d_dilated_ceil", "module0.py"), "", "do not overlap along rows"),
    (os.path.join(SURVEY, "level1__16_avg_pool1d", "module0.py"), "", "do not overlap along rows"),
    (os.path.join(SURVEY, "level3__09_vgg_two_stages", "module0.py"),
     "triton_poi_fused_convolution_max_pool2d_with_indices_relu_4", "do not overlap along rows"),  # 2x2, stride 2
    (os.path.join(SURVEY, "level2__10_conv2d_maxpool_hardtanh", "module0.py"), "triton_poi_fused_convolution_2",
     "in place"),
    (os.path.join(SURVEY, "level2__10_conv2d_maxpool_hardtanh", "module0.py"),
     "triton_poi_fused_convolution_hardtanh_max_pool2d", "not a one-dimensional pointwise kernel"),  # y/x tiles
])
def test_declines_kernels_it_does_not_understand_with_a_reason(path, prefix, why):
    import re
    _, text = kernel_function(path, prefix)
    with pytest.raises(NotApplicable) as exc:
        window_rows(text)
    assert re.search(why, str(exc.value)), exc.value
    result = op_rewrite({"source": text, "reduction_hint": "", "families": ["window_rows"]})
    assert result["candidates"] == [] and result["skipped"][0]["family"] == "window_rows"
    assert re.search(why, result["skipped"][0]["why"])


def test_declines_loads_it_cannot_read_as_affine():
    _, small, _ = small_4x4()
    assert "x0 + 12 * x1" in small
    with pytest.raises(NotApplicable, match="not affine"):
        window_rows(small.replace("x0 + 12 * x1", "x0 * x1 + 12 * x1", 1))
    with pytest.raises(NotApplicable, match="neither affine nor a conjunction of bounds"):
        window_rows(small.replace("xmask)", "xmask | (x1 > 2))", 1))


def test_op_rewrite_offers_the_family_for_pools_only():
    _, text = survey(MAXPOOL_4X4[0])
    result = op_rewrite({"source": text, "reduction_hint": "", "max_row": 32768})
    assert [c["family"] for c in result["candidates"]] == ["window_rows"]
    assert {s["family"] for s in result["skipped"]} == set(FAMILIES) - {"window_rows"}
    _, softmax = kernel_function(os.path.join(FIXTURES, "softmax.py"), "triton_red_")
    result = op_rewrite({"source": softmax, "reduction_hint": "INNER", "max_row": 32768})
    assert "window_rows" not in [c["family"] for c in result["candidates"]]


def test_groups_follow_where_each_element_comes_from():
    # a 3x3 window in row-major order, stride 1: rows 0-1 come from rows 1-2 of the row above
    assert _groups({k: k + 3 for k in range(6)}, 9) == [(0, 3), (3, 6), (6, 9)]
    # stride 2: only row 0 comes from row 2
    assert _groups({0: 6, 1: 7, 2: 8}, 9) == [(0, 3), (3, 6), (6, 9)]
    # a 2x2 window in column-major order: (0,0)<-(1,0) and (0,1)<-(1,1): elements 0 and 2 from 1 and 3
    assert _groups({0: 1, 2: 3}, 4) == [(0, 1), (1, 2), (2, 3), (3, 4)]


COMPILE = """
import sys
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import triton
sys.path.insert(0, "tests/python")
from test_window_rows import HEADER, MAXPOOL_4X4, survey
from kernelopt.coder.window_rows import window_rows
from kernelopt.device import kernels
name, text = survey(MAXPOOL_4X4[0])
code, meta, _ = window_rows(text)
jit = kernels.load_kernel_source(HEADER + code, name)
signature = {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32", "XBLOCK": "constexpr"}
try:
    compiled = triton.compile(ASTSource(jit, signature=signature, constexprs={"XBLOCK": meta["XBLOCK"]}),
                              target=GPUTarget("cuda", 90, 32), options={"num_warps": meta["num_warps"]})
except FileNotFoundError as exc:  # no ptxas beside Triton
    print("SKIP", exc)
    sys.exit(0)
print("ENTRY" if ".entry " + name in compiled.asm["ptx"] else "NO ENTRY")
"""


def test_the_full_size_rewrite_compiles_for_an_h100():
    """Triton's own compiler (no GPU needed) takes the rewrite of the real 4x4 kernel to PTX for sm_90:
    the interpreter alone accepts what the compiler may not (the static branch, the constexpr tiles). In a
    process of its own: Inductor's helpers, once loaded for the interpreter, cannot be compiled."""
    out = interpreted.compiled_apart(COMPILE)
    assert out.strip().endswith("ENTRY") and "NO ENTRY" not in out, out
