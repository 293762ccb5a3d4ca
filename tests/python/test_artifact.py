"""The artifact parser on real Inductor output captured on an H200 (tests/fixtures/inductor)."""
import json
import os

import pytest
FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "inductor")
from kernelopt.artifact.inductor import ArtifactError, parse_module


def load(name):
    with open(os.path.join(FIXTURES, name + ".py")) as f:
        return f.read()


def test_softmax_kernel_spans_and_metadata():
    src = load("softmax")
    art = parse_module(src)
    assert len(art["kernels"]) == 1
    k = art["kernels"][0]
    assert k["name"] == "triton_red_fused__softmax_exp_prepare_softmax_online_sub_0"
    assert k["kind"] == "reduction"
    raw = src.encode()
    body = raw[k["source_span"][0]:k["source_span"][1]].decode()
    assert body.startswith("\nimport triton") and "def " + k["name"] in body
    deco = raw[k["decorator_span"][0]:k["decorator_span"][1]].decode()
    assert deco.startswith("triton_heuristics.reduction(") and deco.endswith(")")
    assert k["size_hints"] == {"x": 4096, "r0_": 8192}
    assert k["params"] == ["in_ptr0", "out_ptr2", "xnumel", "r0_numel"]
    assert k["constexprs"] == ["XBLOCK", "R0_BLOCK"]
    assert k["grid_type"] == "Grid1D"
    assert k["reduction_hint"] == "INNER"
    assert "aten.exp" in k["aten_ops"] and "prims.prepare_softmax_online" in k["aten_ops"]
    assert "call_function" in k["graph_fragment"]


def test_mlp_vendor_calls_launches_and_buffers():
    art = parse_module(load("mlp_block"))
    assert [k["kind"] for k in art["kernels"]] == ["persistent_reduction", "pointwise", "pointwise"]
    assert [v["op"] for v in art["vendor_calls"]] == ["extern_kernels.mm", "extern_kernels.mm"]
    assert [l["kernel"] for l in art["launches"]] == [k["name"] for k in art["kernels"]]
    orders = sorted([l["order"] for l in art["launches"]] + [v["order"] for v in art["vendor_calls"]])
    assert orders == list(range(5))  # kernel, mm, kernel, mm, kernel interleave in program order
    gelu = art["kernels"][1]
    assert gelu["mutated_args"] == ["in_out_ptr0"]
    assert art["kernels"][0]["fixed_constexprs"] == {"R0_BLOCK": 1024}
    assert art["buffers"]["buf4"] == {"shape": [8192, 4096], "stride": [4096, 1], "dtype": "float32",
                                      "origin": "alloc", "device": "cuda"}
    assert art["buffers"]["arg2_1"]["shape"] == [8192, 1024] and art["buffers"]["arg2_1"]["dtype"] == "float32"
    assert art["inputs"] == [f"arg{i}_1" for i in range(7)]
    assert art["outputs"] == ["buf7"]
    assert art["launches"][1]["numels"] == [33554432]
    assert art["vendor_calls"][0]["buffers"][:2] == ["buf3", "arg3_1"]


@pytest.mark.parametrize("name", ["softmax", "layernorm", "mlp_block", "softmax_small",
                                  "layernorm_small", "mlp_block_small"])
def test_every_fixture_parses_and_serializes(name):
    art = parse_module(load(name))
    json.dumps(art)
    assert art["kernels"], "every example produces at least one Triton kernel"
    for k in art["kernels"]:
        assert k["decorator_span"][0] > k["source_span"][0] and k["decorator_span"][1] < k["source_span"][1]


def test_rejects_non_inductor_source():
    with pytest.raises(ArtifactError):
        parse_module("x = 1\n")
    with pytest.raises(ArtifactError):
        parse_module("def call(:\n")


def test_dimensions_without_a_mask_give_the_count_a_block_must_divide():
    # Inductor fixes xmask (and a persistent reduction's r0_mask) to all True where the count is a
    # multiple of every block it uses; the Tuner keeps to blocks that divide it
    kernels = [k["unmasked_numel"] for k in parse_module(load("mlp_block"))["kernels"]]
    assert kernels == [{"XBLOCK": 8192, "R0_BLOCK": 1024}, {"XBLOCK": 33554432}, {"XBLOCK": 8388608}]
    long_row = parse_module(open(os.path.join(FIXTURES, "softmax_long_row.py")).read())["kernels"][0]
    assert long_row["unmasked_numel"] == {}  # xmask = xindex < xnumel: any block


SURVEY = os.path.join(FIXTURES, "survey-h100")
SURVEY_MODULES = sorted(os.path.join(d, f) for d in (os.path.join(SURVEY, p) for p in sorted(os.listdir(SURVEY)))
                        for f in os.listdir(d) if f.endswith(".py")) if os.path.isdir(SURVEY) else []


def test_the_survey_captured_every_kind_of_problem():
    assert len(SURVEY_MODULES) >= 80  # level 1-3 of the re-sized suite, captured on an H100


@pytest.mark.parametrize("path", SURVEY_MODULES, ids=lambda p: os.path.relpath(p, SURVEY))
def test_every_survey_module_parses_with_kernels_that_its_launches_name(path):
    # real Inductor output at the suite's sizes (pools, scans, norms, convolution epilogues, attention, networks)
    with open(path) as f:
        src = f.read()
    art = parse_module(src)
    raw = src.encode()
    names = {k["name"] for k in art["kernels"]}
    for k in art["kernels"]:
        fn = raw[k["function_span"][0]:k["function_span"][1]].decode()
        assert fn.startswith("def " + k["name"] + "("), fn[:80]
        assert k["kind"] in ("pointwise", "reduction", "persistent_reduction", "split_scan", "foreach", "template",
                             "user_autotune", "cooperative_reduction"), k["kind"]
    assert {launch["kernel"] for launch in art["launches"]} <= names
    assert names <= {launch["kernel"] for launch in art["launches"]}  # every kernel is launched by call()


def _reduction(problem, index=0):
    with open(os.path.join(SURVEY, problem, "module0.py")) as f:
        return [k for k in parse_module(f.read())["kernels"] if k["kind"] == "reduction"][index]


@pytest.mark.parametrize("problem,index,want", [
    ("level1__43_group_norm_channels_last", 0, 32),   # 8 fp32 channels of a group per pixel, then the next group's
    ("level2__04_conv2d_groupnorm_silu", 0, 32),
    ("level3__20_diffusion_resblock", 1, 32),
    ("level1__09_softmax_middle_dim", 0, 4),           # rows one element apart
    ("level1__07_softmax_long_row", 0, None),          # contiguous rows
    ("level3__20_diffusion_resblock", 0, None),        # group norm over NCHW: contiguous rows
])
def test_row_run_bytes_of_reductions_whose_rows_interleave(problem, index, want):
    assert _reduction(problem, index)["row_run_bytes"] == want


@pytest.mark.parametrize("problem,index,want", [
    ("level1__07_softmax_long_row", 0, {"in_ptr0": 2}),          # statistics, then normalize: the row read twice
    ("level1__45_channel_layer_norm_nchw", 0, {"in_ptr0": 3}),  # mean, variance, normalize
    ("level1__42_layer_norm_chw", 0, {}),                       # one pass (Welford): nothing read again
    ("level1__43_group_norm_channels_last", 0, {}),
])
def test_row_pass_loads_count_the_passes_that_read_a_pointer_again(problem, index, want):
    assert _reduction(problem, index)["row_pass_loads"] == want


def test_row_run_bytes_needs_the_rows_own_elements_between_them():
    # rows 8 elements apart whose own run is 4: the addresses are not of the interleaved form
    with open(os.path.join(SURVEY, "level1__43_group_norm_channels_last", "module0.py")) as f:
        source = f.read()
    assert "r0_2 = (r0_index % 8)" in source
    changed = parse_module(source.replace("r0_2 = (r0_index % 8)", "r0_2 = (r0_index % 4)"))
    assert [k for k in changed["kernels"] if k["kind"] == "reduction"][0]["row_run_bytes"] is None
