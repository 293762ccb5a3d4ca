"""Gate 2's evidence on real Inductor kernels, run by Triton's interpreter on the CPU.

The baseline is a real captured module; candidates are that module with one
kernel's launch config changed (must match) or its arithmetic changed (must
be caught), the way the engine stitches them.
"""
import os

import pytest
# the engine's tolerances per dtype (engine/options.hpp), as it sends them
TOL = {"float32": {"atol": 1e-4, "rtol": 1e-4}, "float16": {"atol": 1e-2, "rtol": 1e-2},
       "bfloat16": {"atol": 1e-2, "rtol": 1e-2}}


FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "inductor")

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from kernelopt.artifact.inductor import parse_module  # noqa: E402
from kernelopt.device.kernels import guard_bytes  # noqa: E402
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
                     "kernel": name, "synthetic_seeds": [0, 1, 2], "tolerances": TOL})


def clean(result):
    return all(r["error"] is None and r["tensors"] and all(
        t["mismatches"] == 0 and t["nan_mismatches"] == 0 for t in r["tensors"]) for r in result["runs"])


def test_softmax_reconfigured_matches(tmp_path):
    cand, name = candidate(tmp_path, "softmax_small", 0, with_config({"XBLOCK": 4, "num_warps": 4, "num_stages": 1}))
    result = run_check("softmax_small", cand, name)
    assert [(r["source"], r["seed"]) for r in result["runs"]] == [
        ("synthetic", 0), ("synthetic", 1), ("synthetic", 2), ("stale", 0), ("stale", 1), ("stale", 2),
        ("halves", 0), ("halves", 0)]  # the candidate's programs in two launches, each half first once
    assert [r["stale_from_seed"] for r in result["runs"][3:6]] == [2, 0, 1]  # each seed from the one before it
    assert clean(result), result
    det = result["determinism"]
    assert det["repeats"] == 3 and det["launches_checked"] == 3 and not det["failures"], det


def test_gate_2_says_where_its_time_went(tmp_path):
    from kernelopt.worker import phases
    cand, name = candidate(tmp_path, "softmax_small", 0, with_config({"XBLOCK": 4, "num_warps": 4, "num_stages": 1}))
    phases.reset()
    run_check("softmax_small", cand, name)
    # synthetic launches need no recording (a model's do: check.record); every other step of the gate is there
    assert set(phases.seconds()) == {"check.model_runs", "check.results_to_host", "check.repeats", "check.stale",
                                     "check.halves_compile", "check.halves"}


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


# -- stale outputs, stores past a view, non-determinism (the checks the standalone path has too) --

SOFTMAX_STORE = "tl.store(out_ptr2 + (r0_1 + 1000*x0), tmp15, r0_mask & xmask)"


def test_softmax_skipping_rows_that_look_computed_is_caught_by_the_stale_runs(tmp_path):
    # right whenever the output starts as anything but probabilities (the synthetic buffers are
    # randn): keeps a row whose values already sum to 1, as an earlier call leaves it
    skip = ("prev = tl.load(out_ptr2 + (r0_1 + 1000*x0), r0_mask & xmask, other=0.0)\n"
            "    done = tl.abs(tl.sum(prev, 1)[:, None] - 1.0) < 1e-3\n"
            "    tl.store(out_ptr2 + (r0_1 + 1000*x0), tmp15, r0_mask & xmask & (done == 0))")
    cand, name = candidate(tmp_path, "softmax_small", 0, lambda s, k: s.replace(SOFTMAX_STORE, skip))
    assert "done == 0" in open(cand).read()
    result = run_check("softmax_small", cand, name)
    first = [r for r in result["runs"] if r["source"] == "synthetic"]
    stale = [r for r in result["runs"] if r["source"] == "stale"]
    assert clean({"runs": first}), first  # fresh buffers: right
    # the check op stops at the first failing run: seed 1's, its output holding seed 0's answer
    assert [(r["seed"], r["stale_from_seed"]) for r in stale] == [(1, 0)]
    assert "the stale run of seed 1 (synthetic) from seed 0" in result["stopped_early"]
    for run in stale:
        out = next(t for t in run["tensors"] if t["arg"] == "out_ptr2")
        # every row kept the other seed's answer (tiny probabilities of both agree within atol)
        assert out["numel"] == 33000 and out["mismatches"] > 20000, run


def padded_outputs(monkeypatch, position, tail=1000):
    """Synthetic arguments where the tensor at `position` is the head of a larger NaN-filled
    allocation, as Inductor passes a slice of a shared buffer (a cat's part) to a kernel."""
    from kernelopt.device import kernels as K
    real = K.synthetic_args

    def synthetic_args(artifact, site, seed, device="cpu", scale=1.0):
        args = real(artifact, site, seed, device, scale)
        t = args[position]
        big = torch.full((t.numel() + tail,), float("nan"), dtype=t.dtype, device=t.device)
        args[position] = big[:t.numel()].view(t.shape).copy_(t)
        return args

    monkeypatch.setattr(K, "synthetic_args", synthetic_args)


def test_softmax_store_past_its_view_is_caught_bit_for_bit(tmp_path, monkeypatch):
    padded_outputs(monkeypatch, 1)
    # the column mask dropped: each row stores 1024 values, the last row's 24 extra past the view
    cand, name = candidate(tmp_path, "softmax_small", 0,
                           lambda s, k: s.replace(SOFTMAX_STORE, SOFTMAX_STORE.replace("r0_mask & xmask)", "xmask)")))
    result = run_check("softmax_small", cand, name)
    assert not clean(result)
    for run in result["runs"]:
        outside = next(t for t in run["tensors"] if t["arg"] == "out_ptr2 (outside its view)")
        assert outside["unchanged_by_original"] and outside["position"] is None
        # the 1000-element padding and the guard tail every launch copy gets (kernels.guard_bytes)
        # (a stale run's state is a copy of a copy: two guard tails)
        assert outside["numel"] in (1000 + guard_bytes(34000 * 4) // 4,
                                    1000 + guard_bytes(34000 * 4) // 4 + guard_bytes(68000 * 4) // 4), outside
        assert outside["mismatches"] + outside["nan_mismatches"] >= 24, outside
        assert outside["first_mismatches"][0]["index"] == [0] and outside["first_mismatches"][0]["expected"] == "nan"


def test_softmax_reconfigured_leaves_the_bytes_outside_its_view_alone(tmp_path, monkeypatch):
    padded_outputs(monkeypatch, 1)
    cand, name = candidate(tmp_path, "softmax_small", 0, with_config({"XBLOCK": 4, "num_warps": 4, "num_stages": 1}))
    result = run_check("softmax_small", cand, name)
    assert clean(result), result
    assert all(any(t["arg"] == "out_ptr2 (outside its view)" for t in r["tensors"]) for r in result["runs"])


def flaky_launches(monkeypatch, which, on_calls, bump=1.0, at=(5, 7)):
    """Makes the `which` kernel ("candidate" or "baseline") add `bump` to out_ptr2[at] on the given
    call numbers of its launches (1-based): a result that differs between launches on identical
    inputs, deterministically, which a race on a GPU gives at random (the interpreter is sequential)."""
    from kernelopt.device import kernels as K
    from kernelopt.inputs.module import ops  # the nn.Module input kind's ops, where op_check loads kernels
    objs, calls = {}, {"n": 0}
    real_from_module, real_launch = ops._kernel_from_module, K.launch

    def from_module(path, name):
        obj = real_from_module(path, name)
        objs.setdefault("candidate" if "cand" in os.path.basename(path) else "baseline", obj)
        return obj

    def launch(kernel, args, stream=None):
        real_launch(kernel, args)
        if kernel is objs.get(which):
            calls["n"] += 1
            if calls["n"] in on_calls:
                args[1][at] += bump

    monkeypatch.setattr(ops, "_kernel_from_module", from_module)
    monkeypatch.setattr(K, "launch", launch)
    return calls


def test_candidate_differing_between_repeats_is_rejected_as_non_deterministic(tmp_path, monkeypatch):
    cand, name = candidate(tmp_path, "softmax_small", 0, with_config({"XBLOCK": 4, "num_warps": 4, "num_stages": 1}))
    calls = flaky_launches(monkeypatch, "candidate", on_calls={2})  # seed 0's second launch
    result = run_check("softmax_small", cand, name)
    assert calls["n"] == 3  # seed 0's launch and its 2 repeats: the check op stops at the first failure
    assert clean(result)  # every comparison with the original passes: only the repeats show it
    assert "(seed 0 (synthetic), launch 0, its repeats)" in result["stopped_early"]
    det = result["determinism"]
    assert det["launches_checked"] == 1 and not det["original_nondeterministic"]
    (line,) = det["failures"]
    assert line.startswith("non-deterministic: repeat 2 of seed 0 (synthetic) differs from repeat 1 at [5, 7] ("), line
    assert "in out_ptr2, launch 0" in line
    got, first = (float(x) for x in line.split("(")[2].split(")")[0].split(" vs "))
    assert got == pytest.approx(first + 1.0)


def test_non_deterministic_original_falls_back_to_tolerance(tmp_path, monkeypatch):
    cand, name = candidate(tmp_path, "softmax_small", 0, with_config({"XBLOCK": 4, "num_warps": 4, "num_stages": 1}))
    # the original's seed 1 launch 2 differs by far less than the tolerance (as atomics' order does)
    flaky_launches(monkeypatch, "baseline", on_calls={5}, bump=1e-9, at=(0, 0))
    result = run_check("softmax_small", cand, name)
    det = result["determinism"]
    assert not det["failures"] and det["launches_checked"] == 2, det
    (line,) = det["original_nondeterministic"]
    assert line.startswith("seed 1 (synthetic), launch 0: the original's repeat 2 differs from repeat 1 in out_ptr2 at [0, 0]")
    assert "tolerance only" in det["note"]
    (rep,) = [r for r in result["runs"] if r["source"] == "repeat"]
    assert (rep["seed"], rep["repeat"]) == (1, 2) and clean({"runs": [rep]}), rep


def test_repeats_of_one_turn_the_determinism_check_off(tmp_path, monkeypatch):
    cand, name = candidate(tmp_path, "softmax_small", 0, with_config({"XBLOCK": 4, "num_warps": 4, "num_stages": 1}))
    calls = flaky_launches(monkeypatch, "candidate", on_calls={2})
    result = op_check({"baseline_module": os.path.join(FIXTURES, "softmax_small.py"), "candidate_module": cand,
                       "kernel": name, "synthetic_seeds": [0, 1, 2], "tolerances": TOL, "repeats": 1})
    assert calls["n"] == 2  # seed 0's launch, then seed 1's, where the check op stops
    assert result["determinism"] == {"repeats": 1, "launches_checked": 0, "failures": [], "original_nondeterministic": []}
    assert not clean(result)  # call 2 is now seed 1's comparison run: the bump is a mismatch there
    assert "(seed 1 (synthetic), launch 0)" in result["stopped_early"]


def test_softmax_store_past_the_end_of_its_whole_allocation_is_caught(tmp_path):
    # no padding: the output is a whole contiguous allocation, and the last row's 24 extra stores
    # land past its end, in the guard tail every launch copy gets (without it: in another buffer)
    cand, name = candidate(tmp_path, "softmax_small", 0,
                           lambda s, k: s.replace(SOFTMAX_STORE, SOFTMAX_STORE.replace("r0_mask & xmask)", "xmask)")))
    result = run_check("softmax_small", cand, name)
    assert not clean(result)
    for run in result["runs"]:
        outside = next(t for t in run["tensors"] if t["arg"] == "out_ptr2 (outside its view)")
        assert outside["unchanged_by_original"], outside  # the original stays inside its buffer
        assert outside["mismatches"] + outside["nan_mismatches"] == 24, outside
        assert outside["first_mismatches"][0]["index"] == [0] and outside["first_mismatches"][0]["expected"] == "nan"
