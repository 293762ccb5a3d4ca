"""Whole-model decisions on the GPU (skipped elsewhere, tests/gpu/conftest.py): CUDA graphs' aliasing.

- a CUDA graph replay writes its outputs into the same static buffers: the outputs of one call are
  overwritten by the next call without the loader's clone, and not with it;
- the decide op's checks see the overwrite and answer right at new input addresses;
- a model that writes its inputs is refused for CUDA graphs.
"""
import json
import textwrap

import pytest
import torch

from kernelopt.worker import ops

TOL = {"float32": {"atol": 1e-4, "rtol": 1e-4}, "float16": {"atol": 1e-2, "rtol": 1e-2},
       "bfloat16": {"atol": 1e-2, "rtol": 1e-2}}

PROBLEM = textwrap.dedent('''
    import torch
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(64, 64)
        def forward(self, x):
            return torch.relu(self.fc(x)) * 2.0
    def get_inputs():
        return [torch.randn(32, 64)]
    def get_init_inputs():
        return []
''')

MUTATING = PROBLEM.replace("return torch.relu(self.fc(x)) * 2.0", "x.mul_(2.0)\n        return self.fc(x)")


def make_run(tmp_path, problem=PROBLEM, decision=None):
    (tmp_path / "problem.py").write_text(problem)
    ns = {}
    exec(problem, ns)
    torch.manual_seed(0)
    torch.save(ns["Model"]().cuda().state_dict(), tmp_path / "weights.pt")
    manifest = {"problem": "problem.py", "weights": "weights.pt", "modules": []}
    if decision:
        manifest["decision"] = decision
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return str(tmp_path)


CUDAGRAPHS = {"kept": "cudagraphs", "settings": {"mode": "reduce-overhead"}}


def two_calls(model):
    """The first call's output as kept by the caller (no copy), its value right then, and after a second call."""
    a, b = torch.randn(32, 64, device="cuda"), torch.randn(32, 64, device="cuda")
    for _ in range(3):  # cudagraph trees record after warm-up calls
        model(a)
    first = model(a)
    value = first.clone()
    model(b)
    torch.cuda.synchronize()
    return first, value


def test_without_the_clone_the_next_call_overwrites_the_outputs(tmp_path):
    from kernelopt.runtime.loader import load_run
    loaded = load_run(make_run(tmp_path, decision=CUDAGRAPHS), device="cuda")
    loaded._guard.cudagraphs = False  # the loader's clone taken away: what a caller sees without it
    from kernelopt.inputs.module.decisions import outputs_overwritten
    with torch.no_grad():
        first, value = two_calls(loaded)
    assert outputs_overwritten([first], [value])


def test_with_the_loaders_clone_the_outputs_are_kept(tmp_path):
    from kernelopt.runtime.loader import load_run
    loaded = load_run(make_run(tmp_path, decision=CUDAGRAPHS), device="cuda")
    assert loaded.decision == "cudagraphs"
    from kernelopt.inputs.module.decisions import outputs_overwritten
    first, value = two_calls(loaded)
    assert not outputs_overwritten([first], [value])


def decide(path, settings, name="cudagraphs"):
    return ops.TABLE["decide"]({"problem": path, "device": "cuda", "seeds": [0, 1, 2], "tolerances": TOL,
                                "decision": {"name": name, "settings": settings}, "trials": 10})


def test_decide_sees_the_overwrite_and_new_addresses_answer_right(tmp_path):
    path = tmp_path / "p.py"
    path.write_text(PROBLEM)
    r = decide(str(path), {"mode": "reduce-overhead"})
    assert r["skipped"] is None and r["refused"] is None
    assert r["checks"]["outputs_overwritten"] is True
    assert r["checks"]["new_addresses_ok"] is True
    assert all(run["error"] is None for run in r["runs"])
    assert len(r["samples_ms"]["candidate"]) == 10


def test_a_model_that_writes_its_inputs_is_refused_for_cuda_graphs(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(MUTATING)
    r = decide(str(path), {"mode": "reduce-overhead"})
    assert r["refused"] and "writes its inputs" in r["refused"]


COMPOSED = {"options": {"triton.cudagraphs": True, "freezing": True}}


def test_a_composition_with_cuda_graphs_gets_the_same_checks_and_the_loaders_clone(tmp_path):
    path = tmp_path / "p.py"
    path.write_text(PROBLEM)
    r = decide(str(path), COMPOSED, name="cudagraphs+freezing")
    assert r["skipped"] is None and r["refused"] is None
    assert r["checks"]["outputs_overwritten"] is True and r["checks"]["new_addresses_ok"] is True
    assert all(run["error"] is None for run in r["runs"])
    from kernelopt.runtime.loader import load_run
    from kernelopt.inputs.module.decisions import outputs_overwritten
    (tmp_path / "run").mkdir()
    run = make_run(tmp_path / "run", decision={"kept": "cudagraphs+freezing", "settings": COMPOSED})
    loaded = load_run(run, device="cuda")
    first, value = two_calls(loaded)
    assert not outputs_overwritten([first], [value])
