"""The offline Tuner on standalone Triton kernels, on the CPU under TRITON_INTERPRET=1.

A launch-config candidate is the user's kernel, byte for byte, under one engine-written line
`@triton.heuristics(values={'num_warps': lambda args: W, 'num_stages': lambda args: S})`
(src/artifact/stitch.hpp, standalone_with_config): Triton's Heuristics.run sets those keyword
arguments before it calls the jit function, so they win over what the user's launcher passes
(a one-config @triton.autotune would not: its run() passes both, a TypeError).

The interpreter ignores num_warps, so timings mean nothing here: the tests assert what reaches
the kernel, which verdicts were recorded and what the files hold, never which config is faster.
"""
import ast
import glob
import hashlib
import json
import os
import sqlite3
import subprocess

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from kernelopt.worker import ops  # noqa: E402
from kernelopt.inputs.triton.session import load_file, parse_file  # noqa: E402


# the engine's tolerances per dtype (engine/options.hpp), as it sends them
TOL = {"float32": {"atol": 1e-4, "rtol": 1e-4}, "float16": {"atol": 1e-2, "rtol": 1e-2},
       "bfloat16": {"atol": 1e-2, "rtol": 1e-2}}


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOFTMAX = os.path.join(ROOT, "examples", "triton", "softmax.py")
GOOD = os.path.join(ROOT, "tests", "fixtures", "standalone", "good.py")
ENV = dict(os.environ, TRITON_INTERPRET="1", KERNELOPT_EXAMPLE_SMALL="1")


def pinned(path, kernel, warps, stages, out):
    """The file with the engine's launch-config line above `kernel` (what the engine stitches)."""
    raw = open(path, "rb").read()
    k = next(k for k in parse_file(raw.decode())["kernels"] if k["name"] == kernel)
    s = k["source_span"][0]
    line = f"@triton.heuristics(values={{'num_warps': lambda args: {warps}, 'num_stages': lambda args: {stages}}})\n"
    out.write_bytes(raw[:s] + line.encode() + raw[s:])
    return str(out)


def top_level(source, name):
    """The exact text of a module-level function."""
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name)
    return ast.get_source_segment(source, node)


def jit_kwargs(mod, kernel):
    """Records the keyword arguments each launch of mod.<kernel> hands to the @triton.jit function."""
    obj = getattr(mod, kernel)
    jit = obj.fn if hasattr(obj, "values") else obj  # under the engine's Heuristics, or the bare jit function
    seen, inner = [], jit.run

    def run(*args, **kwargs):
        seen.append(kwargs)
        return inner(*args, **kwargs)

    jit.run = run
    return seen


def test_pinned_config_overrides_the_launchers_num_warps(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELOPT_EXAMPLE_SMALL", "1")
    cand = pinned(SOFTMAX, "softmax_kernel", 2, 1, tmp_path / "cand.py")
    orig, tuned = load_file(SOFTMAX), load_file(cand)
    base_seen, tuned_seen = jit_kwargs(orig, "softmax_kernel"), jit_kwargs(tuned, "softmax_kernel")
    torch.manual_seed(0)
    (x,) = orig.get_inputs()
    expected, got = orig.launch(x.clone()), tuned.launch(x.clone())
    assert base_seen[0]["num_warps"] == 4 and "num_stages" not in base_seen[0]  # the launcher's own choice
    assert tuned_seen[0]["num_warps"] == 2 and tuned_seen[0]["num_stages"] == 1  # the pinned one wins
    assert tuned_seen[0]["BLOCK"] == base_seen[0]["BLOCK"]  # block sizes stay the launcher's
    assert torch.equal(got, expected)
    source = open(cand).read()
    assert top_level(source, "launch") == top_level(open(SOFTMAX).read(), "launch")


def test_pinned_config_reaches_a_kernel_launched_through_run(tmp_path):
    """Helion's generated launcher calls kernel.run(..., num_warps=4, num_stages=1) directly."""
    cand = pinned(GOOD, "axpy_kernel", 8, 2, tmp_path / "cand.py")
    mod = load_file(cand)
    seen = jit_kwargs(mod, "axpy_kernel")
    x, y, out = torch.randn(200), torch.randn(200), torch.empty(200)
    mod.axpy_kernel.run(x, y, out, 200, 2.0, BLOCK=64, grid=(4,), warmup=False, num_warps=4, num_stages=1)
    assert seen[0]["num_warps"] == 8 and seen[0]["num_stages"] == 2
    assert torch.allclose(out, 2.0 * x + y)


def test_profile_reports_the_launch_config_a_kernel_runs_with(monkeypatch):
    """The Tuner tunes around this: what the launcher passed (by keyword or position), Triton's
    defaults for what it did not, an autotuner's choice where there is one."""
    prof = ops.op_profile({"problem": GOOD, "device": "cuda", "seeds": [0, 1, 2], "input_kind": "triton", "reps": 1})
    by = {k["name"]: k for k in prof["kernels"]}
    assert by["axpy_kernel"]["config"] == {"BLOCK": 64, "num_warps": 4, "num_stages": 3}
    assert by["relu_inplace_kernel"]["config"] == {"BLOCK": 128, "num_warps": 2, "num_stages": 3}
    monkeypatch.setenv("KERNELOPT_EXAMPLE_SMALL", "1")
    prof = ops.op_profile({"problem": SOFTMAX, "device": "cuda", "seeds": [0, 1, 2], "input_kind": "triton", "reps": 1})
    assert prof["kernels"][0]["config"] == {"BLOCK": 256, "num_warps": 4, "num_stages": 3}


def test_parse_counts_loops_and_names_decorators():
    kernels = {k["name"]: k for k in ops.op_parse({"module_path": GOOD, "input_kind": "triton"})["kernels"]}
    assert kernels["axpy_kernel"]["num_loops"] == 0
    assert kernels["axpy_kernel"]["decorators"] == ["triton.jit"]
    assert kernels["relu_inplace_kernel"]["decorators"] == ["triton.autotune", "triton.jit"]
    looped = parse_file("import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(p, n, B: tl.constexpr):\n"
                        "    acc = 0.0\n    for i in range(0, n, B):\n        acc += tl.sum(tl.load(p + i + tl.arange(0, B)))\n"
                        "    tl.store(p, acc)\n")["kernels"][0]
    assert looped["num_loops"] == 1


# -- whole runs: `kernelopt optimize-kernel` with no LLM ------------------------------------


def optimize_kernel(kernelopt, tmp_path, problem, budget):
    out = tmp_path / "run"
    argv = [kernelopt, "optimize-kernel", problem, "--out", str(out), "--workspace", str(tmp_path / "ws"),
            "--device", "cpu", "--budget", str(budget), "--trials", "10", "--timeout", "600"]
    run = subprocess.run(argv, env=ENV, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-4000:]
    report = json.loads((out / "report.json").read_text())
    kernels = {k["name"]: k for m in report["modules"] for k in m["kernels"]}
    return out, report, kernels


def stored(tmp_path, kernel):
    """(candidate id, origin, meta, {gate: passed}) of the kernel's candidates in the workspace store."""
    with sqlite3.connect(tmp_path / "ws" / "store.db") as con:
        rows = con.execute("SELECT id, origin, meta_json FROM candidates WHERE kernel = ?", (kernel,)).fetchall()
        out = []
        for cid, origin, meta in rows:
            gates = dict(con.execute("SELECT gate, passed FROM verdicts WHERE candidate_id = ?", (cid,)).fetchall())
            out.append((cid, origin, json.loads(meta), gates))
        return out


def test_offline_tuner_tries_launch_configs_of_a_standalone_kernel(kernelopt, tmp_path):
    out, report, kernels = optimize_kernel(kernelopt, tmp_path, SOFTMAX, budget=4)
    cands = stored(tmp_path, "softmax_kernel")
    assert len(cands) == 3, cands  # 256 elements: 1, 2 or 8 warps besides the launcher's 4; no loop, stages kept
    assert {c[1] for c in cands} == {"tuner"}
    assert sorted(c[2]["config"]["num_warps"] for c in cands) == [1, 2, 8]
    assert all(c[2]["config"] == {"num_warps": c[2]["config"]["num_warps"], "num_stages": 3} for c in cands)
    # gate 1 (static facts, then compilation) passed for every one; whatever reached gate 2 passed it
    assert all(c[3].get("static") == 1 for c in cands), cands
    assert all(c[3].get("correctness", 1) == 1 for c in cands), cands

    original = open(SOFTMAX).read()
    files = sorted(glob.glob(str(out / "candidates" / "m0_softmax_kernel_*.py")))
    assert len(files) == 3
    for path in files:
        text = open(path).read()
        compile(text, path, "exec")  # valid Python
        assert top_level(text, "launch") == top_level(original, "launch")
        lines = text.splitlines(keepends=True)
        (at,) = [i for i, line in enumerate(lines) if line.startswith("@triton.heuristics(")]
        assert lines[at + 1] == "@triton.jit\n"
        assert "".join(lines[:at] + lines[at + 1:]) == original  # one line added above the kernel, nothing else
        # gate 2's evidence, asked of the worker directly: every output equal, on every seed
        chk = ops.op_check({"problem": SOFTMAX, "device": "cuda", "seeds": [0, 1, 2], "input_kind": "triton",
                            "kernel": "softmax_kernel", "candidate_module": path, "tolerances": TOL})
        assert all(r["error"] is None and r["tensors"] and all(t["mismatches"] == 0 for t in r["tensors"])
                   for r in chk["runs"]), chk
        orig_mod, cand_mod = load_file(SOFTMAX), load_file(path)
        torch.manual_seed(3)
        (x,) = orig_mod.get_inputs()
        assert torch.equal(cand_mod.launch(x.clone()), orig_mod.launch(x.clone()))

    outcome = kernels["softmax_kernel"]["outcome"]
    optimized = (out / "optimized" / "softmax.py").read_text()
    if outcome["status"] == "improved":  # interpreter noise decides whether one looked faster
        assert outcome["why"].startswith("launch config w") and "(was w4 s3)" in outcome["why"], outcome
        assert outcome["winner_config"].keys() == {"num_warps", "num_stages"}
    else:
        assert "offline agents do not rewrite" not in outcome["why"], outcome
    if report["summary"]["improved"]:
        assert optimized in [open(f).read() for f in files]
    else:
        assert optimized == original
    compile(optimized, "optimized", "exec")
    assert top_level(optimized, "launch") == top_level(original, "launch")

    # what the run cost, as the engine timed its worker requests by op
    cost = report["cost"]
    req = cost["requests"]
    assert {"start", "validate", "capture", "profile", "compile", "bench", "final_check"} <= req.keys(), req
    # gate 2 ran only if a config got past the screen (the interpreter's timings decide that)
    assert ("check" in req) == any(k["outcome"].get("gated", 0) > 0 for k in kernels.values()), (req, kernels)
    seconds = {op: r["seconds"] for op, r in req.items()}
    gpu = sum(seconds.get(op, 0) for op in ("profile", "check", "model_check", "bench", "final_check"))
    assert cost["gpu_s"] == pytest.approx(gpu) and cost["gpu_s"] > 0
    assert cost["compile_s"] == pytest.approx(seconds["capture"] + seconds["compile"])
    assert cost["worker_s"] == pytest.approx(sum(seconds.values()))
    assert 0 < cost["worker_s"] <= cost["wall_s"]
    assert cost["candidates_screened"] == sum(k["outcome"]["screened"] for k in kernels.values())
    assert cost["continued"] is False
    assert report["problem_work"] is None  # a standalone kernel file: no model to count bytes and FLOPs of


def test_an_autotuned_kernel_is_left_alone_with_the_reason(kernelopt, tmp_path):
    _, _, kernels = optimize_kernel(kernelopt, tmp_path, GOOD, budget=8)
    relu = kernels["relu_inplace_kernel"]["outcome"]
    assert relu["status"] == "kept baseline"
    assert "@triton.autotune" in relu["why"] and "user's own code chooses its launch config" in relu["why"], relu
    assert stored(tmp_path, "relu_inplace_kernel") == []
    axpy = stored(tmp_path, "axpy_kernel")  # the plain @triton.jit kernel of the same file is tuned
    assert axpy and {c[1] for c in axpy} == {"tuner"} and all(c[3].get("static") == 1 for c in axpy), axpy
