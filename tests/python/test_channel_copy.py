"""The channel_copy rewrite family (python/kernelopt/coder/channel_copy.py) on the NCHW -> channels-last copies
captured on an H100 at the suite's sizes (survey-h100: level2/23 patchify, level3/08 ViT patch embed, level3/12
small CNN, level3/09 VGG; C = 3), shrunk for Triton's interpreter: bit-identical to the captured kernel for several XBLOCK and
YBLOCK, sizes that neither divides, fp32 and bf16, NaN, infinities and -0.0."""
import ast
import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from kernelopt.artifact.static import analyze_source  # noqa: E402
from kernelopt.coder.channel_copy import channel_copy  # noqa: E402
from kernelopt.coder.rewrite import FAMILIES, NotApplicable, op_rewrite  # noqa: E402
from test_row_stream import jit_of, kernel_source  # noqa: E402

# (fixture, samples N, positions HW) of each copy at its captured size
COPIES = [("survey-h100/level2__23_patchify_conv_layernorm_nhwc/module0.py", 256, 262144),
          ("survey-h100/level3__08_vit_patch_embed_block/module0.py", 32, 50176),
          ("survey-h100/level3__12_small_cnn_classifier/module0.py", 160, 25600),
          ("survey-h100/level3__09_vgg_two_stages/module0.py", 16, 50176)]
NAME = "triton_poi_fused_convolution_0"


@pytest.fixture(autouse=True)
def interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def shrunk(fixture, n_old, hw_old, n, hw):
    """The captured copy with n samples of hw positions (the sizes and strides the kernel spells out)."""
    k, text = kernel_source(fixture)
    assert k["name"] == NAME
    for old, new in [(f"ynumel = {3 * n_old}", f"ynumel = {3 * n}"), (f"xnumel = {hw_old}", f"xnumel = {hw}"),
                     (f"{3 * hw_old}*y1", f"{3 * hw}*y1"), (f"{hw_old}*y3", f"{hw}*y3")]:
        assert old in text
        text = text.replace(old, new)
    return k, text


def special_values(n, hw, dtype):
    x = torch.randn(n * 3 * hw).to(dtype)
    x[1], x[5], x[7], x[11] = float("nan"), float("inf"), float("-inf"), -0.0
    return x


def launch(code, x, out, n, hw, xblock, yblock):
    jit_of(code, NAME)[(-(-hw // xblock), -(-3 * n // yblock))](x, out, 3 * n, hw, YBLOCK=yblock, XBLOCK=xblock)


def bits(t):
    return t.view(torch.int16 if t.element_size() == 2 else torch.int32)


@pytest.mark.parametrize("fixture,n_old,hw_old", COPIES)
def test_the_survey_copies_rewrite_with_the_same_name_and_parameters(fixture, n_old, hw_old):
    k, text = kernel_source(fixture)
    cand = op_rewrite({"source": text, "families": ["channel_copy"]})["candidates"][0]
    assert cand["meta"] == {"XBLOCK": 256, "YBLOCK": 8, "num_warps": 4}
    assert "C = 3" in cand["notes"] and f"HW = {hw_old}" in cand["notes"]
    facts = analyze_source(cand["code"])
    fn = next(f for f in facts["functions"] if f["name"] == k["name"])
    assert fn["params"] == k["params"] and fn["constexprs"] == k["constexprs"]
    assert facts["stored_params"][k["name"]] == ["out_ptr0"]
    # the store's channel index is the tile's last axis, not `yindex % 3`
    assert "% 3" not in cand["code"] and "tl.arange(0, 4)[None, :]" in cand["code"]


@pytest.mark.parametrize("fixture,n_old,hw_old", COPIES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_rewrite_matches_the_captured_kernel_bit_for_bit(fixture, n_old, hw_old, dtype):
    n, hw = 5, 37  # 15 rows of y and 37 positions: no power-of-two block divides either
    _, small = shrunk(fixture, n_old, hw_old, n, hw)
    code, _, _ = channel_copy(small)
    x = special_values(n, hw, dtype)
    want = torch.full((n * hw * 3,), 7.0, dtype=dtype)
    launch(small, x, want, n, hw, 1, 1)  # level2/23's captured xmask is all True: blocks that divide only
    ref = x.view(n, 3, hw).permute(0, 2, 1).reshape(-1)
    assert torch.equal(bits(want), bits(ref))
    for xblock, yblock in [(16, 4), (8, 1), (32, 2), (64, 8), (4, 16), (128, 32)]:
        got = torch.full_like(want, 123.0)
        launch(code, x, got, n, hw, xblock, yblock)
        assert torch.equal(bits(got), bits(want)), (xblock, yblock)


class _CountWrites(ast.NodeTransformer):
    """tl.store(ptr, value, mask) -> tl.atomic_add(ptr, 1.0, mask): each element counts the writes it gets."""

    def visit_Call(self, node):
        if ast.unparse(node.func) == "tl.store":
            return ast.parse(f"tl.atomic_add({ast.unparse(node.args[0])}, 1.0, {ast.unparse(node.args[2])})",
                             mode="eval").body
        return node


@pytest.mark.parametrize("xblock,yblock", [(8, 1), (16, 2), (4, 4), (32, 8), (16, 32), (64, 64)])
def test_every_element_is_written_exactly_once_for_any_blocks(xblock, yblock):
    n, hw = 7, 45  # 21 rows of y, 45 positions
    _, small = shrunk(*COPIES[2], n, hw)
    code, _, _ = channel_copy(small)
    counting = ast.unparse(ast.fix_missing_locations(_CountWrites().visit(ast.parse(code))))
    count = torch.zeros(n * hw * 3)
    launch(counting, torch.zeros(n * 3 * hw), count, n, hw, xblock, yblock)
    assert torch.equal(count, torch.ones_like(count))


def test_an_elementwise_epilogue_is_kept():
    n, hw = 3, 20
    _, small = shrunk(*COPIES[1], n, hw)
    epilogue = small.replace("    tl.store(out_ptr0 + (y0 + 3*x2 + 60*y1), tmp0,",
                             "    tmp1 = tl.where(tmp0 > 0, tmp0 * 2.0, libdevice.exp(tmp0))\n"
                             "    tl.store(out_ptr0 + (y0 + 3*x2 + 60*y1), tmp1,")
    assert "tmp1" in epilogue
    code, _, _ = channel_copy(epilogue)
    x = special_values(n, hw, torch.float32)
    want, got = torch.zeros(n * hw * 3), torch.full((n * hw * 3,), 5.0)
    launch(epilogue, x, want, n, hw, 32, 4)
    launch(code, x, got, n, hw, 8, 2)
    assert torch.equal(bits(got), bits(want))


def test_declines_power_of_two_channels_two_loads_and_reductions_with_a_reason():
    _, copy = kernel_source(COPIES[0][0])
    four = copy.replace("% 3", "% 4").replace("// 3", "// 4").replace("3*x2", "4*x2")
    with pytest.raises(NotApplicable, match="C = 4 is a power of two"):
        channel_copy(four)
    nine = copy.replace("% 3", "% 9").replace("// 3", "// 9").replace("3*x2", "9*x2")
    with pytest.raises(NotApplicable, match="C = 9: more than 8"):
        channel_copy(nine)
    two_loads = copy.replace("    tl.store(", "    tmp1 = tl.load(in_ptr0 + x2, xmask) + tmp0\n    tl.store(")
    with pytest.raises(NotApplicable, match="2 loads and 1 stores"):
        channel_copy(two_loads)
    _, softmax = kernel_source("softmax.py")
    with pytest.raises(NotApplicable, match="a reduction"):
        channel_copy(softmax)
    strided_store = copy.replace("3*x2 + 786432*y1", "6*x2 + 786432*y1")
    with pytest.raises(NotApplicable, match="store's offset"):
        channel_copy(strided_store)
    reduce_epilogue = copy.replace("    tl.store(", "    tmp1 = tl.sum(tmp0, 1)\n    tl.store(")
    with pytest.raises(NotApplicable, match="tl.sum.*not elementwise"):
        channel_copy(reduce_epilogue)


def test_op_rewrite_offers_it_for_the_copy_and_not_for_a_softmax():
    assert "channel_copy" in FAMILIES
    _, copy = kernel_source(COPIES[0][0])
    result = op_rewrite({"source": copy, "reduction_hint": "", "max_row": 32768})
    assert [c["family"] for c in result["candidates"]] == ["channel_copy"]
    _, softmax = kernel_source("softmax.py")
    result = op_rewrite({"source": softmax, "reduction_hint": "INNER", "max_row": 32768})
    assert "channel_copy" not in [c["family"] for c in result["candidates"]]
    assert any(s["family"] == "channel_copy" and "reduction" in s["why"] for s in result["skipped"])
