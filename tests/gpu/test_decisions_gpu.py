"""Whole-model decisions on the GPU (skipped elsewhere, tests/gpu/conftest.py): CUDA graphs' aliasing.

- a CUDA graph replay writes its outputs into the same static buffers: the outputs of one call are
  overwritten by the next call without the loader's clone, and not with it;
- the decide op's checks see the overwrite and answer right at new input addresses;
- a model that writes its inputs is refused for CUDA graphs;
- cuDNN's autotuning (cudnn_benchmark) runs every seed and gives the process its flag back.
- cuDNN's plans are per thread (the decision's premise), and the kernel search's ops on an autotuned session
  run on the worker's autotuning thread.
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


CONV = textwrap.dedent('''
    import torch
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(16, 32, 3, padding=1)
        def forward(self, x):
            return torch.relu(self.conv(x))
    def get_inputs():
        return [torch.randn(8, 16, 64, 64)]
    def get_init_inputs():
        return []
''')


def test_cudnn_benchmark_runs_every_seed_and_leaves_the_flag_as_it_was(tmp_path):
    path = tmp_path / "conv.py"
    path.write_text(CONV)
    assert torch.backends.cudnn.benchmark is False
    r = decide(str(path), {"cudnn_benchmark": True}, name="cudnn_benchmark")
    assert r["skipped"] is None and r["refused"] is None
    assert len(r["runs"]) == 3 and all(run["error"] is None for run in r["runs"])
    assert len(r["samples_ms"]["candidate"]) == 10
    assert torch.backends.cudnn.benchmark is False


def test_cudnn_plans_are_per_thread_so_the_decision_autotunes_on_a_thread_of_its_own():
    # The premise of the cudnn_benchmark decision, on this torch: a convolution's plan is cached per thread at
    # its first call, and a later call there keeps it with the flag on (few kernels: no autotuning); the
    # decision's own thread autotunes at its first call (cuDNN runs each candidate algorithm: many kernels),
    # then runs its plan (few kernels again). Counted with the profiler, not timed.
    from kernelopt.runtime.decision import CudnnBenchmarked
    conv = torch.nn.Conv2d(32, 64, 3, padding=1).cuda()
    x = torch.randn(16, 32, 56, 56, device="cuda")

    def kernels(fn):
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)

    assert torch.backends.cudnn.benchmark is False
    with torch.no_grad():
        conv(x)  # this thread's plan: heuristics'
        plain = kernels(lambda: conv(x))
        torch.backends.cudnn.benchmark = True
        try:
            same_thread = kernels(lambda: conv(x))
        finally:
            torch.backends.cudnn.benchmark = False
        autotuned = CudnnBenchmarked(conv)
        first = kernels(lambda: autotuned(x))
        second = kernels(lambda: autotuned(x))
        torch.testing.assert_close(autotuned(x), conv(x), atol=1e-3, rtol=1e-3)
    assert same_thread == plain, "the flag changed this thread's cached plan: the premise does not hold"
    assert first > 3 * max(plain, 1), (plain, first)
    assert second < first
    assert torch.backends.cudnn.benchmark is False


def test_the_kernel_search_on_a_cudnn_autotuned_session_runs_on_the_autotuning_thread(tmp_path):
    # b6f6cd2: after a kept cudnn_benchmark decision the worker's capture/profile/check/bench run on one thread
    # of its own with the flag on, so that the modules' convolutions run the decision's plans there
    from kernelopt.inputs.module.session import release_sessions
    from kernelopt.runtime import decision
    path = tmp_path / "conv.py"
    path.write_text(CONV)
    args = {"problem": str(path), "device": "cuda", "seeds": [0, 1, 2],
            "compile_settings": {"cudnn_benchmark": True}}
    try:
        cap = ops.TABLE["capture"](dict(args, out_dir=str(tmp_path / "run")))
        assert cap["modules"]
        assert decision._AUTOTUNING is not None and decision._AUTOTUNING.thread.is_alive()
        prof = ops.TABLE["profile"](dict(args, module=0, reps=3))
        assert len(prof["module_samples_ms"]) == 3 and all(ms > 0 for ms in prof["module_samples_ms"])
        assert torch.backends.cudnn.benchmark is False  # the process's flag, given back after each op
    finally:
        release_sessions()
