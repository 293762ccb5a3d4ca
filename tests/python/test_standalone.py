"""The worker's ops for a standalone Triton kernel file ("input_kind": "triton"), under Triton's
interpreter on the CPU: bad files get one line each; capture's spans cut whole kernel functions;
gate 2 and 3 evidence on identical, rewritten and wrong candidates; bench and the end-to-end
check give the nn.Module path's shapes.

Candidates are built as the engine builds them: the file with one kernel's source span replaced.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from kernelopt.worker import ops  # noqa: E402
from kernelopt.problem import ProblemError  # noqa: E402


# the engine's tolerances per dtype (engine/options.hpp), as it sends them
TOL = {"float32": {"atol": 1e-4, "rtol": 1e-4}, "float16": {"atol": 1e-2, "rtol": 1e-2},
       "bfloat16": {"atol": 1e-2, "rtol": 1e-2}}


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "standalone")
GOOD = os.path.join(FIXTURES, "good.py")
SEEDS = [0, 1, 2]

AXPY_REWRITE = '''@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, y + x * alpha, mask=mask)'''

AXPY_LAST_ZERO = '''@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    val = _scale(x, alpha) + y
    tl.store(out_ptr + offs, tl.where(offs == n - 1, 0.0, val), mask=mask)'''

# after the relu, a zero may be right: the model-level tests use a value relu keeps
AXPY_LAST_BIG = AXPY_LAST_ZERO.replace("0.0, val", "100.0, val")

AXPY_TOUCHES_INPUT = '''@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, _scale(x, alpha) + y, mask=mask)
    tl.store(x_ptr + offs, x * 1.0000001, mask=mask)'''


def base(problem=GOOD, **extra):
    return dict({"problem": problem, "device": "cuda", "seeds": SEEDS, "input_kind": "triton"}, **extra)


def artifact_of(problem=GOOD):
    return ops.op_parse({"module_path": problem, "input_kind": "triton"})


def candidate(tmp_path, name, new_text, problem=GOOD, file="cand.py"):
    """The file with kernel `name`'s source span replaced by new_text (as the engine stitches)."""
    raw = open(problem, "rb").read()
    k = next(k for k in artifact_of(problem)["kernels"] if k["name"] == name)
    s, e = k["source_span"]
    path = tmp_path / file
    path.write_bytes(raw[:s] + new_text.encode() + raw[e:])
    return str(path)


def without_reference(tmp_path):
    text = open(GOOD).read()
    start = text.index("def reference(")
    end = text.index("def get_inputs(")
    path = tmp_path / "good_noref.py"
    path.write_text(text[:start] + text[end:])
    return str(path)


def clean(result):
    return all(r["error"] is None and r["tensors"] and all(
        t["mismatches"] == 0 and t["nan_mismatches"] == 0 and t["inf_mismatches"] == 0 for t in r["tensors"])
        for r in result["runs"])


# -- validate ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fixture,needle", [
    ("syntax_error.py", "syntax_error.py:6: syntax error"),
    ("no_kernel.py", "defines no @triton.jit kernel"),
    ("no_launch.py", "defines no `launch()`"),
    ("no_get_inputs.py", "defines no `get_inputs()`"),
    ("get_inputs_raises.py", "get_inputs() raised RuntimeError"),
    ("launcher_raises.py", "launch(*get_inputs()) raised ValueError: launcher is broken"),
    ("returns_nothing.py", "launch() returned None, not a tensor"),
])
def test_bad_files_get_one_line_naming_the_file(fixture, needle):
    path = os.path.join(FIXTURES, fixture)
    with pytest.raises(ProblemError) as err:
        ops.op_validate(base(path))
    msg = str(err.value)
    assert msg.startswith(path) and needle in msg and "\n" not in msg, msg
    assert err.value.kind == "problem"


def test_missing_file(tmp_path):
    with pytest.raises(ProblemError, match="no such file"):
        ops.op_validate(base(str(tmp_path / "nope.py")))


def test_validate_good_file():
    r = ops.op_validate(base())
    assert r["problem"] == GOOD
    assert r["problem_hash"] == hashlib.sha256(open(GOOD, "rb").read()).hexdigest()


def test_server_answers_validate_errors_as_problem_lines():
    """The real JSON-lines server: a bad file is ok=false, kind problem, one line."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), TRITON_INTERPRET="1")
    reqs = [{"id": 1, "op": "hello"},
            {"id": 2, "op": "validate", "args": base(os.path.join(FIXTURES, "no_kernel.py"))},
            {"id": 3, "op": "validate", "args": base(os.path.join(FIXTURES, "launcher_raises.py"))},
            {"id": 4, "op": "parse", "args": {"module_path": GOOD, "input_kind": "triton"}}]
    p = subprocess.run([sys.executable, "-m", "kernelopt.worker"], input="".join(json.dumps(r) + "\n" for r in reqs),
                       capture_output=True, text=True, env=env, timeout=120)
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    assert [r["id"] for r in lines] == [1, 2, 3, 4], p.stderr[-2000:]
    for r in lines[1:3]:
        assert not r["ok"] and r["kind"] == "problem" and "\n" not in r["error"]
    assert "defines no @triton.jit kernel" in lines[1]["error"]
    assert "launcher is broken" in lines[2]["error"]
    assert lines[3]["ok"] and [k["name"] for k in lines[3]["result"]["kernels"]] == [
        "_scale", "axpy_kernel", "relu_inplace_kernel"]


# -- capture and profile ----------------------------------------------------------------------

def test_capture_spans_launches_and_copies(tmp_path):
    cap = ops.op_capture(base(out_dir=str(tmp_path)))
    json.dumps(cap)  # plain JSON
    (mod,) = cap["modules"]
    assert mod["index"] == 0 and mod["path"] == str(tmp_path / "baseline" / "module0.py")
    raw = open(mod["path"], "rb").read()
    assert raw == open(GOOD, "rb").read() == (tmp_path / "problem.py").read_bytes()
    art = mod["artifact"]
    assert art["input_kind"] == "triton"
    assert art["source_hash"] == hashlib.sha256(raw).hexdigest() and art["source_bytes"] == len(raw)
    assert [k["name"] for k in art["kernels"]] == ["_scale", "axpy_kernel", "relu_inplace_kernel"]
    for k in art["kernels"]:
        s, e = k["source_span"]
        text = raw[s:e].decode()
        assert text.startswith("@triton") and f"def {k['name']}(" in text
        assert raw[s + k["def_offset"]:].startswith(f"def {k['name']}(".encode())
        assert k["function_span"] == [s + k["def_offset"], e]
        ds, de = k["decorator_span"]
        assert s < ds <= de <= e and raw[ds:de] == b"triton.jit" and raw[ds - 1:ds] == b"@"
        assert k["source_hash"] == hashlib.sha256(raw[s:e]).hexdigest()
        assert k["kind"] == "triton_jit"
        assert raw[e:e + 1] == b"\n"  # the whole body, up to its last line
    axpy = art["kernels"][1]
    assert axpy["params"] == ["x_ptr", "y_ptr", "out_ptr", "n", "alpha"] and axpy["constexprs"] == ["BLOCK"]
    assert axpy["mutated_args"] == ["out_ptr"] and axpy["helper_functions"] == ["_scale"]
    assert axpy["signature"]["x_ptr"] == "*fp32" and axpy["signature"]["BLOCK"] == "constexpr"
    relu = art["kernels"][2]
    assert raw[relu["source_span"][0]:].startswith(b"@triton.autotune(")
    assert relu["mutated_args"] == ["p_ptr"]
    launches = art["launches"]
    assert [(l["kernel"], l["order"]) for l in launches] == [("axpy_kernel", 0), ("relu_inplace_kernel", 1)]
    lines = raw.decode().splitlines()
    assert lines[launches[0]["line"] - 1].strip().startswith("axpy_kernel[")
    assert lines[launches[1]["line"] - 1].strip().startswith("relu_inplace_kernel[")
    assert launches[0]["args"] == ["x", "y", "out", "n", "2.0", "BLOCK=64"]
    assert launches[0]["buffers"] == ["x", "y", "out", None, None, None]
    assert art["inputs"] == ["x", "y"] and art["outputs"] == ["out"]
    assert art["vendor_calls"] == [] and art["buffers"] == {}
    assert cap["outputs"] == [{"shape": [200], "dtype": "torch.float32"}]
    assert cap["versions"]["triton"]


def test_profile_shape():
    prof = ops.op_profile(base(reps=2))
    json.dumps(prof)
    assert len(prof["module_samples_ms"]) == 2 and prof["bandwidth_gbps"] > 0
    by = {k["name"]: k for k in prof["kernels"]}
    assert by["_scale"]["launches"] == 0 and by["_scale"]["samples_ms"] == [] and by["_scale"]["config"] is None
    assert by["axpy_kernel"]["launches"] == 1 and len(by["axpy_kernel"]["samples_ms"]) == 2
    assert by["axpy_kernel"]["bytes"] == 3 * 200 * 4 and by["axpy_kernel"]["config"] == {"BLOCK": 64, "num_warps": 4, "num_stages": 3}
    assert by["relu_inplace_kernel"]["config"] == {"BLOCK": 128, "num_warps": 2, "num_stages": 3}
    assert all(k["kind"] == "triton_jit" for k in prof["kernels"])


# -- gate 2: check ----------------------------------------------------------------------------

def check(cand, kernel="axpy_kernel", problem=GOOD):
    return ops.op_check(base(problem, kernel=kernel, candidate_module=cand, tolerances=TOL, module=0))


def test_check_identical_candidate_passes(tmp_path):
    cand = str(tmp_path / "same.py")
    shutil.copyfile(GOOD, cand)
    for kernel in ("axpy_kernel", "relu_inplace_kernel"):
        r = check(cand, kernel)
        model = [run for run in r["runs"] if run["source"] == "model"]
        stale = [run for run in r["runs"] if run["source"] == "stale"]
        halves = [run for run in r["runs"] if run["source"] == "halves"]
        assert len(model) + len(stale) + len(halves) == len(r["runs"]) and clean(r), r
        assert [run["seed"] for run in model] == SEEDS and all(run["launch"] == 0 for run in model)
        # each launch again, its outputs holding the next seed's results (as an earlier call leaves them)
        assert [(run["seed"], run["stale_from_seed"]) for run in stale] == [(0, 2), (1, 0), (2, 1)]
        # the first seed's launch again, the programs in two launches, each half first once
        assert [(run["seed"], run["order"]) for run in halves] == [(0, "upper half first"), (0, "lower half first")]
    args = [t["arg"] for t in check(cand)["runs"][0]["tensors"]]
    # each argument, then the bytes outside each one's view: here only the guard tail of its copy
    assert args == ["x_ptr", "y_ptr", "out_ptr", "x_ptr (outside its view)", "y_ptr (outside its view)",
                    "out_ptr (outside its view)"]


def test_check_correct_rewrite_passes(tmp_path):
    r = check(candidate(tmp_path, "axpy_kernel", AXPY_REWRITE))
    assert clean(r), r


def test_check_wrong_candidate_fails_with_evidence(tmp_path):
    r = check(candidate(tmp_path, "axpy_kernel", AXPY_LAST_ZERO))
    assert not clean(r)
    for run in r["runs"]:
        out = next(t for t in run["tensors"] if t["arg"] == "out_ptr")
        assert out["mismatches"] == 1 and out["first_mismatches"][0]["index"] == [199]
        assert out["first_mismatches"][0]["got"] == 0.0
        assert all(t["mismatches"] == 0 for t in run["tensors"] if t["arg"] != "out_ptr")


def test_check_candidate_changing_an_untouched_input_fails(tmp_path):
    r = check(candidate(tmp_path, "axpy_kernel", AXPY_TOUCHES_INPUT))
    x = next(t for t in r["runs"][0]["tensors"] if t["arg"] == "x_ptr")
    assert x["unchanged_by_original"] and x["mismatches"] > 0  # within 1e-4, but the original never wrote x
    assert not clean(r)


AXPY_SKIP_IF_WRITTEN = '''@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    prev = tl.load(out_ptr + offs, mask=mask, other=0.0)
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, _scale(x, alpha) + y, mask=mask & (prev == 0.0))'''


def test_check_catches_a_kernel_that_skips_what_looks_computed(tmp_path):
    # right whenever the output starts zeroed: the recorded launch's output does not (it holds what the recording
    # left), and the stale runs start it holding another seed's results; the check op stops at the first of these
    r = check(candidate(tmp_path, "axpy_kernel", AXPY_SKIP_IF_WRITTEN))
    assert not clean(r) and r["stopped_early"].startswith("stopped at the first failing run (seed 0, launch 0)")
    (run,) = r["runs"]
    out = next(t for t in run["tensors"] if t["arg"] == "out_ptr")
    assert run["source"] == "model" and out["mismatches"] > 0, run


def test_check_candidate_differing_between_repeats_is_non_deterministic(tmp_path, monkeypatch):
    # a result that differs from one launch to the next (float atomics in another order): the
    # candidate's second launch is made to differ at the Python level, as such a race would
    from kernelopt.inputs.triton import ops as standalone  # the triton input kind's ops, where op_check looks it up
    real = standalone._kernel_obj
    calls = {"n": 0}

    class Flaky:
        def __init__(self, obj):
            self.obj = obj

        def __getitem__(self, grid):
            def launch(*args, **kwargs):
                self.obj[grid](*args, **kwargs)
                calls["n"] += 1
                if calls["n"] == 2:
                    args[2][199] = 0.5
            return launch

    monkeypatch.setattr(standalone, "_kernel_obj", lambda mod, name, path: Flaky(real(mod, name, path)))
    r = check(candidate(tmp_path, "axpy_kernel", AXPY_REWRITE))
    # seed 0's launch and its two repeats: the check op stops there, the candidate rejected (no later seeds, stale
    # or halves runs)
    assert clean(r) and calls["n"] == 3
    assert r["stopped_early"].startswith("stopped at the first failing run (seed 0, launch 0, its repeats)")
    det = r["determinism"]
    assert det["repeats"] == 3 and det["launches_checked"] == 1 and not det["original_nondeterministic"]
    (line,) = det["failures"]
    assert line.startswith("non-deterministic: repeat 2 of seed 0 differs from repeat 1 at [199] (0.5 vs "), line
    assert line.endswith("in out_ptr, launch 0; the original is bit-identical across 3 repeats"), line


def test_check_candidate_that_does_not_compile_is_a_run_error(tmp_path):
    broken = AXPY_REWRITE.replace("y + x * alpha", "y + x * undefined_name")
    r = check(candidate(tmp_path, "axpy_kernel", broken))
    assert all(run["error"] for run in r["runs"])


# -- gate 3: model_check ----------------------------------------------------------------------

def test_model_check_identical_and_wrong_with_reference(tmp_path):
    same = str(tmp_path / "same.py")
    shutil.copyfile(GOOD, same)
    r = ops.op_model_check(base(candidate_module=same, tolerances=TOL))
    assert r["reference"] is True
    assert [run["seed"] for run in r["runs"]] == SEEDS
    assert all(o["matches_baseline"] and o["ref_err_baseline"] is None for run in r["runs"] for o in run["outputs"])

    r = ops.op_model_check(base(candidate_module=candidate(tmp_path, "axpy_kernel", AXPY_LAST_BIG),
                                tolerances=TOL))
    json.dumps(r)
    for run in r["runs"]:
        (o,) = run["outputs"]
        assert not o["matches_baseline"] and o["max_abs_diff"] > 0
        assert o["ref_err_candidate"] > o["ref_err_baseline"] >= 0


def test_model_check_without_reference(tmp_path):
    noref = without_reference(tmp_path)
    cand = candidate(tmp_path, "axpy_kernel", AXPY_LAST_BIG, problem=noref)
    r = ops.op_model_check(base(noref, candidate_module=cand, tolerances=TOL))
    assert r["reference"] is False
    (o,) = r["runs"][0]["outputs"]
    assert not o["matches_baseline"] and o["ref_err_baseline"] is None and o["ref_err_candidate"] is None


# -- gate 4: bench ----------------------------------------------------------------------------

def test_bench_kernel_and_model_modes(tmp_path):
    cand = candidate(tmp_path, "axpy_kernel", AXPY_REWRITE)
    for mode in ("kernel", "model"):
        r = ops.op_bench(base(mode=mode, kernel="axpy_kernel", candidates=[cand], trials=3, warmup=1, module=0))
        json.dumps(r)
        assert set(r["samples_ms"]) == {"baseline", cand}
        assert all(len(v) == 3 and all(x > 0 for x in v) for v in r["samples_ms"].values())


def test_bench_restores_in_place_arguments(tmp_path):
    """The in-place kernel runs on a working copy restored before each trial: the recorded
    arguments the correctness gate uses stay as captured."""
    same = str(tmp_path / "same.py")
    shutil.copyfile(GOOD, same)
    before = check(same, "relu_inplace_kernel")
    ops.op_bench(base(mode="kernel", kernel="relu_inplace_kernel", candidates=[same], trials=2, warmup=1))
    after = check(same, "relu_inplace_kernel")
    assert clean(before) and clean(after)


# -- end to end: final_check ------------------------------------------------------------------

def run_dir(tmp_path, problem, optimized_text=None, kind_in="args"):
    d = tmp_path / "run"
    (d / "baseline").mkdir(parents=True)
    (d / "optimized").mkdir()
    shutil.copyfile(problem, d / "problem.py")
    shutil.copyfile(problem, d / "baseline" / "module0.py")
    (d / "optimized" / "module0.py").write_bytes(optimized_text or open(problem, "rb").read())
    manifest = {"problem": "problem.py", "problem_hash": "x", "weights": "weights.pt",
                "modules": [{"index": 0, "baseline": "baseline/module0.py",
                             "optimized": "optimized/module0.py" if optimized_text else None}]}
    (d / "manifest.json").write_text(json.dumps(manifest))
    if kind_in == "options":
        (d / "options.json").write_text(json.dumps({"input_kind": "triton"}))
    return str(d)


def final_check(d, kind_in="args", seeds=(10, 11, 12)):
    args = {"run_dir": d, "device": "cuda", "seeds": list(seeds), "tolerances": TOL, "trials": 3}
    if kind_in == "args":
        args["input_kind"] = "triton"
    return ops.op_final_check(args)


def test_final_check_optimized_with_reference(tmp_path):
    opt = open(candidate(tmp_path, "axpy_kernel", AXPY_REWRITE), "rb").read()
    r = final_check(run_dir(tmp_path, GOOD, opt, kind_in="options"), kind_in="options")
    json.dumps(r)
    assert r["substituted"] == 1 and r["reference"] is True
    assert [run["seed"] for run in r["runs"]] == [10, 11, 12]
    for run in r["runs"]:
        (o,) = run["outputs"]
        assert o["index"] == 0 and o["mismatches_vs_eager"] == 0
        assert o["err_optimized"] < 1e-5 and o["err_baseline"] < 1e-5
    assert set(r["samples_ms"]) == {"eager", "baseline", "optimized"}
    assert all(len(v) == 3 for v in r["samples_ms"].values())


def test_final_check_wrong_optimized_without_reference(tmp_path):
    noref = without_reference(tmp_path)
    opt = open(candidate(tmp_path, "axpy_kernel", AXPY_LAST_BIG, problem=noref), "rb").read()
    r = final_check(run_dir(tmp_path, noref, opt))
    assert r["reference"] is False and r["substituted"] == 1
    assert all(run["outputs"][0]["mismatches_vs_eager"] >= 1 for run in r["runs"])
    assert r["samples_ms"]["eager"] == r["samples_ms"]["baseline"]


def test_final_check_nothing_optimized(tmp_path):
    r = final_check(run_dir(tmp_path, GOOD), seeds=(10,))
    assert r["substituted"] == 0
    assert r["runs"][0]["outputs"][0]["mismatches_vs_eager"] == 0


# -- the examples -----------------------------------------------------------------------------

@pytest.mark.parametrize("example,kernel", [("softmax.py", "softmax_kernel"),
                                            ("add_layernorm.py", "add_layernorm_kernel")])
def test_examples_capture_and_check(tmp_path, monkeypatch, example, kernel):
    monkeypatch.setenv("KERNELOPT_EXAMPLE_SMALL", "1")
    path = os.path.join(ROOT, "examples", "triton", example)
    args = {"problem": path, "device": "cuda", "seeds": [0, 1, 2], "input_kind": "triton"}
    cap = ops.op_capture(dict(args, out_dir=str(tmp_path)))
    art = cap["modules"][0]["artifact"]
    assert [k["name"] for k in art["kernels"]] == [kernel] and len(art["launches"]) == 1
    same = str(tmp_path / "same.py")
    shutil.copyfile(path, same)
    r = ops.op_model_check(dict(args, candidate_module=same, tolerances=TOL))
    assert r["reference"] is True
    assert all(o["matches_baseline"] for run in r["runs"] for o in run["outputs"])
