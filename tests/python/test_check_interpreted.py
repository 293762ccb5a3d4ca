"""Gate 2's evidence on real Inductor kernels, run by Triton's interpreter on the CPU.

The baseline is a real captured module; candidates are that module with one
kernel's launch config changed (must match) or its arithmetic changed (must
be caught), the way the engine stitches them.
"""
import os

import pytest
FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "inductor")

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from kernelopt.worker.artifact import parse_module  # noqa: E402
from kernelopt.worker.ops import op_check  # noqa: E402


def candidate(tmp_path, fixture, kernel_index, edit):
    """Write a stitched module where edit(kernel_source, kernel) -> new kernel source."""
    src = open(os.path.join(FIXTURES, fixture + ".py")).read()
    k = parse_module(src)["kernels"][kernel_index]
    raw = src.encode()
    s, e = k["source_span"]
    new = raw[:s] + edit(raw[s:e].decode(), k).encode() + raw[e:]
    path = tmp_path / "cand.py"
    path.write_bytes(new)
    return str(path), k["name"]


def with_config(config):
    def edit(ksrc, k):
        ds, de = (x - k["source_span"][0] for x in k["decorator_span"])
        args = k["heuristic_args"]
        deco = (f"triton_heuristics.fixed_config(config={config!r}, filename=__file__, "
                f"triton_meta={args['triton_meta']}, inductor_meta={args['inductor_meta']})")
        return ksrc[:ds] + deco + ksrc[de:]
    return edit


def run_check(fixture, cand, name):
    return op_check({"baseline_module": os.path.join(FIXTURES, fixture + ".py"), "candidate_module": cand,
                     "kernel": name, "synthetic_seeds": [0, 1, 2], "atol": 1e-4, "rtol": 1e-4})


def clean(result):
    return all(r["error"] is None and r["tensors"] and all(
        t["mismatches"] == 0 and t["nan_mismatches"] == 0 for t in r["tensors"]) for r in result["runs"])


def test_softmax_reconfigured_matches(tmp_path):
    cand, name = candidate(tmp_path, "softmax_small", 0, with_config({"XBLOCK": 4, "num_warps": 4, "num_stages": 1}))
    result = run_check("softmax_small", cand, name)
    assert len(result["runs"]) == 3
    assert clean(result), result


def test_softmax_wrong_arithmetic_is_caught(tmp_path):
    cand, name = candidate(tmp_path, "softmax_small", 0,
                           lambda s, k: s.replace("tmp15 = (tmp14 / tmp12)", "tmp15 = (tmp14 / tmp12) + 0.001"))
    result = run_check("softmax_small", cand, name)
    assert not clean(result)
    t = result["runs"][0]["tensors"][1]
    assert t["arg"] == "out_ptr2" and t["mismatches"] > 0 and t["first_mismatches"]


def test_gelu_mutated_buffer_compared(tmp_path):
    # triton_poi_fused_addmm_gelu_1 updates in_out_ptr0 in place (uses libdevice.erf)
    cand, name = candidate(tmp_path, "mlp_block_small", 1, with_config({"XBLOCK": 64, "num_warps": 2, "num_stages": 1}))
    result = run_check("mlp_block_small", cand, name)
    assert clean(result), result
    assert result["runs"][0]["tensors"][0]["arg"] == "in_out_ptr0"


def test_partial_output_is_caught(tmp_path):
    # stores only the first half of the elements: the rest keeps its old contents
    cand, name = candidate(tmp_path, "mlp_block_small", 2,
                           lambda s, k: s.replace("tl.store(in_out_ptr0 + (x2), tmp4, xmask)",
                                                  "tl.store(in_out_ptr0 + (x2), tmp4, xmask & (x2 < 2000))"))
    assert "x2 < 2000" in open(cand).read()
    result = run_check("mlp_block_small", cand, name)
    assert not clean(result)
