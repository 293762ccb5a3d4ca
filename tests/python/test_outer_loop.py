"""The outer_loop rewrite family (python/kernelopt/coder/outer_loop.py) on the layer norm's affine kernel captured on
an H100 at the suite's size (survey-h100/level1__42_layer_norm_chw: 32 samples x 8M positions, weight and bias of
8M fp32 each, the kernel that sat at 53% of the bandwidth), shrunk for Triton's interpreter: the same name and
parameters, bit-identical to the captured kernel with NaN and infinities, and declined where it would not help."""
import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from kernelopt.artifact.inductor import parse_module  # noqa: E402
from kernelopt.artifact.static import analyze_source  # noqa: E402
from kernelopt.coder import outer_loop as family  # noqa: E402
from kernelopt.coder.rewrite import FAMILIES, NotApplicable, op_rewrite  # noqa: E402
from test_row_stream import FIXTURES, jit_of  # noqa: E402

FIXTURE = "survey-h100/level1__42_layer_norm_chw/module0.py"
NAME = "triton_poi_fused_native_layer_norm_2"
SAMPLES, POSITIONS = 32, 8388608


@pytest.fixture(autouse=True)
def interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def affine_kernel():
    src = open(os.path.join(FIXTURES, FIXTURE)).read()
    k = next(k for k in parse_module(src)["kernels"] if k["name"] == NAME)
    s, e = k["function_span"]
    return k, "@triton.jit\n" + src.encode()[s:e].decode()


def shrunk(samples, positions):
    _, text = affine_kernel()
    for old, new in [(f"xnumel = {SAMPLES * POSITIONS}", f"xnumel = {samples * positions}"),
                     (f"xindex // {POSITIONS}", f"xindex // {positions}"),
                     (f"xindex % {POSITIONS}", f"xindex % {positions}")]:
        assert old in text
        text = text.replace(old, new)
    return text


def test_the_captured_affine_kernel_loops_over_the_samples_with_the_same_signature():
    k, text = affine_kernel()
    assert "outer_loop" in FAMILIES
    cand = op_rewrite({"source": text, "families": ["outer_loop"]})["candidates"][0]
    assert cand["meta"] == {"XBLOCK": 32 * 1024, "num_warps": 4}
    assert cand["pinned"] == ["XBLOCK"]  # the kernel asserts it: the Tuner must not move it
    assert "2 operand(s) of 8388608 elements" in cand["notes"] and "32 outer indices" in cand["notes"]
    facts = analyze_source(cand["code"])
    fn = next(f for f in facts["functions"] if f["name"] == NAME)
    assert fn["params"] == k["params"] and fn["constexprs"] == k["constexprs"]
    assert facts["stored_params"][NAME] == ["out_ptr0"]
    # weight and bias (in_ptr3, in_ptr4) are loaded before the loop, the sample's values inside it
    code = cand["code"]
    loop = code.index("for _ko_outer in range(32)")
    assert code.index("in_ptr3 + x0") < loop and code.index("in_ptr4 + x0") < loop
    assert code.index("in_ptr0 + x2") > loop and code.index("in_ptr1 + x1") > loop


@pytest.mark.parametrize("samples,positions,tile", [(3, 256, 256), (3, 256, 128), (2, 384, 128)])
def test_the_rewrite_matches_the_captured_kernel_bit_for_bit(monkeypatch, samples, positions, tile):
    monkeypatch.setattr(family, "MIN_REUSED_ELEMENTS", 16)  # the interpreter's sizes: operands of a few hundred
    small = shrunk(samples, positions)
    code, meta, _ = family.outer_loop(small)
    n = samples * positions
    x = torch.randn(n)
    x[3], x[positions + 5], x[7] = float("nan"), float("inf"), float("-inf")
    mean, var = torch.randn(samples), torch.rand(samples) * positions
    weight, bias = torch.randn(positions), torch.randn(positions)
    weight[11] = float("nan")
    want, got = torch.full((n,), 7.0), torch.full((n,), 7.0)
    jit_of(small, NAME)[(n // 64,)](x, mean, var, weight, bias, want, n, XBLOCK=64)
    assert meta["XBLOCK"] == samples * family._tile(positions)
    xblock = samples * tile  # any tile of positions for every sample (a tuner may choose another than the meta's)
    jit_of(code, NAME)[(-(-n // xblock),)](x, mean, var, weight, bias, got, n, XBLOCK=xblock)
    assert torch.equal(got.view(torch.int32), want.view(torch.int32))
    assert not torch.isnan(want).all()


def test_a_block_that_is_not_a_tile_for_every_sample_does_not_compile(monkeypatch):
    monkeypatch.setattr(family, "MIN_REUSED_ELEMENTS", 16)
    code, _, _ = family.outer_loop(shrunk(3, 256))
    x = torch.randn(768)
    with pytest.raises(Exception, match="AssertionError"):  # the kernel's static_assert
        jit_of(code, NAME)[(768 // 256,)](x, torch.randn(3), torch.rand(3), torch.randn(256), torch.randn(256),
                                          torch.empty(768), 768, XBLOCK=256)  # 256 is not 3 x a power of two


def test_declined_where_l2_holds_the_operands_or_the_kernel_is_of_another_form():
    with pytest.raises(NotApplicable, match="fit in L2"):
        family.outer_loop(shrunk(3, 256))
    masked = shrunk(3, 256).replace("xmask = tl.full([XBLOCK], True, tl.int1)[:]", "xmask = xindex < xnumel")
    with pytest.raises(NotApplicable, match="masked or tiled"):
        family.outer_loop(masked)
    nested = shrunk(3, 256).replace("xindex % 256", "(xindex // 4) % 256")
    with pytest.raises(NotApplicable, match="other than"):
        family.outer_loop(nested)
    # the conv1d + batch norm + GELU epilogue: its per-channel operands index (xindex // L) % C, not xindex % P
    src = open(os.path.join(FIXTURES, "survey-h100/level2__12_conv1d_batchnorm_gelu/module0.py")).read()
    k = parse_module(src)["kernels"][0]
    s, e = k["function_span"]
    result = op_rewrite({"source": src.encode()[s:e].decode(), "families": ["outer_loop"]})
    assert result["candidates"] == [] and result["skipped"][0]["family"] == "outer_loop"


def test_a_load_whose_address_reads_a_computed_value_stays_in_the_loop(monkeypatch):
    monkeypatch.setattr(family, "MIN_REUSED_ELEMENTS", 16)
    text = shrunk(3, 256).replace("tl.load(in_ptr4 + (x0)", "tl.load(in_ptr4 + (x0 + tmp0.to(tl.int32) * 0)")
    code, _, notes = family.outer_loop(text)
    assert "1 operand(s)" in notes  # in_ptr3's load only: in_ptr4's reads tmp0, a per-sample value
    assert code.index("in_ptr4 + (x0 + tmp0") > code.index("for _ko_outer")
