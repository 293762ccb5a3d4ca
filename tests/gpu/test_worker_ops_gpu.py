"""The worker's ops on a real GPU: capture, profile, gates' evidence, timing, the loader."""
import json
import os

import pytest

# the engine's tolerances per dtype (engine/options.hpp), as it sends them
TOL = {"float32": {"atol": 1e-4, "rtol": 1e-4}, "float16": {"atol": 1e-2, "rtol": 1e-2},
       "bfloat16": {"atol": 1e-2, "rtol": 1e-2}}

HERE = os.path.dirname(os.path.abspath(__file__))
PROBLEM = os.path.join(HERE, "problems_tiny_softmax.py")


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    from kernelopt.worker.ops import op_capture
    out = tmp_path_factory.mktemp("run")
    args = {"problem": PROBLEM, "device": "cuda", "seeds": [0, 1, 2], "out_dir": str(out)}
    cap = op_capture(args)
    return {k: v for k, v in args.items() if k != "out_dir"}, cap, out  # the later ops take no out_dir


def stitched(module_path, kernel, edit, out):
    from kernelopt.artifact.inductor import parse_module
    src = open(module_path).read()
    k = next(k for k in parse_module(src)["kernels"] if k["name"] == kernel)
    raw = src.encode()
    s, e = k["source_span"]
    path = out / f"cand_{abs(hash(edit(raw[s:e].decode(), k)))}.py"
    path.write_bytes(raw[:s] + edit(raw[s:e].decode(), k).encode() + raw[e:])
    return str(path)


def test_capture_writes_modules_and_artifact(captured):
    args, cap, out = captured
    assert len(cap["modules"]) == 1
    art = cap["modules"][0]["artifact"]
    assert art["kernels"] and art["launches"]
    assert os.path.isfile(out / "weights.pt") and os.path.isfile(out / "problem.py")
    # softmax of a 300x1500 fp32 input: reads it, writes as much; no matmul, so no FLOPs counted
    assert cap["work"]["min_bytes"] == 2 * 300 * 1500 * 4
    assert cap["work"]["flops"] == 0


def test_profile_reports_each_kernel(captured):
    from kernelopt.worker.ops import op_profile
    args, cap, _ = captured
    prof = op_profile(dict(args, module=0, reps=5))
    assert prof["bandwidth_gbps"] > 100
    facts = {k["name"]: k for k in cap["modules"][0]["artifact"]["kernels"]}
    for k in prof["kernels"]:
        assert k["launches"] >= 1 and len(k["samples_ms"]) == 5 and k["config"]["num_warps"] >= 1
        # a looped softmax reads its 300 x 1500 input again in its second pass; a persistent one does not
        passes = facts[k["name"]].get("row_pass_loads") or {}
        assert k["reread_bytes"] == sum(300 * 1500 * 4 * (n - 1) for n in passes.values()), (k, passes)


def test_gates_evidence_catches_a_wrong_kernel(captured):
    from kernelopt.worker.ops import op_check, op_model_check
    args, cap, out = captured
    art = cap["modules"][0]["artifact"]
    name = art["kernels"][0]["name"]
    base = cap["modules"][0]["path"]
    good = stitched(base, name, lambda s, k: s, out)
    bad = stitched(base, name, lambda s, k: s.replace("libdevice.exp(", "1.01 * libdevice.exp(", 1), out)
    assert "1.01 * libdevice.exp(" in open(bad).read()
    ok = op_check(dict(args, module=0, kernel=name, candidate_module=good, tolerances=TOL))
    assert all(t["mismatches"] == 0 for r in ok["runs"] for t in r["tensors"]) and len(ok["runs"]) >= 3
    wrong = op_check(dict(args, module=0, kernel=name, candidate_module=bad, tolerances=TOL))
    assert any(t["mismatches"] > 0 for r in wrong["runs"] for t in r["tensors"])
    mc = op_model_check(dict(args, module=0, candidate_module=bad, tolerances=TOL))
    out0 = mc["runs"][0]["outputs"][0]
    assert not out0["matches_baseline"]
    assert out0["ref_err_candidate"] > out0["ref_err_baseline"]


def test_bench_interleaves_baseline_and_candidates(captured):
    from kernelopt.worker.ops import op_bench
    args, cap, out = captured
    name = cap["modules"][0]["artifact"]["kernels"][0]["name"]
    same = stitched(cap["modules"][0]["path"], name, lambda s, k: s, out)
    res = op_bench(dict(args, module=0, kernel=name, candidates=[same], trials=12, mode="kernel"))
    assert len(res["samples_ms"]["baseline"]) == 12 and len(res["samples_ms"][same]) == 12
    assert all(t > 0 for t in res["samples_ms"]["baseline"])


def test_loader_runs_the_baseline_when_nothing_changed(captured):
    import torch
    from kernelopt.runtime.loader import load_run
    from kernelopt.problem import make_inputs
    args, cap, out = captured
    manifest = {"modules": [{"index": 0, "baseline": "baseline/module0.py", "optimized": None}]}
    (out / "manifest.json").write_text(json.dumps(manifest))
    run = load_run(str(out))
    x = make_inputs(run.problem, run.problem_path, 5, "cuda")
    got = run(*x)
    torch.testing.assert_close(got, torch.softmax(x[0], -1), atol=1e-4, rtol=1e-4)
    assert run.substituted() == 0
