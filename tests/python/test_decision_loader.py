"""kernelopt.load of a run whose manifest keeps a whole-model decision (--decisions), on the CPU:
the manifest's decision is reproduced and said (attribute and log line), and freezing's guard refuses a
call after the weights changed. CUDA graphs' output clone is shown on a GPU (tests/gpu)."""
import json
import logging
import textwrap

import pytest
import torch

from kernelopt.runtime.loader import decision_config, load_run
from kernelopt.runtime.decision import WeightsChangedError
from test_decisions import CONV  # a convolution network, as the decide tests use it

PROBLEM = textwrap.dedent('''
    import torch
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(16, 8)
        def forward(self, x):
            return torch.relu(self.fc(x)) + 1.0
    def get_inputs():
        return [torch.randn(4, 16)]
    def get_init_inputs():
        return []
''')


def make_run(tmp_path, decision):
    (tmp_path / "problem.py").write_text(PROBLEM)
    torch.manual_seed(0)
    ns = {}
    exec(PROBLEM, ns)
    torch.save(ns["Model"]().state_dict(), tmp_path / "weights.pt")
    manifest = {"problem": "problem.py", "weights": "weights.pt", "modules": []}
    if decision is not None:
        manifest["decision"] = decision
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return str(tmp_path)


def test_a_manifest_without_a_decision_loads_as_default(tmp_path):
    loaded = load_run(make_run(tmp_path, None), device="cpu")
    assert loaded.decision == "default" and not loaded._guard.active


def test_freezing_is_reproduced_and_said(tmp_path, caplog):
    run = make_run(tmp_path, {"kept": "freezing", "settings": {"options": {"freezing": True}}})
    with caplog.at_level(logging.WARNING, logger="kernelopt"):
        loaded = load_run(run, device="cpu")
    assert loaded.decision == "freezing"
    assert any("freezing" in r.getMessage() for r in caplog.records)
    x = torch.randn(4, 16)
    expected = loaded.model(x)
    torch.testing.assert_close(loaded(x), expected)


def test_freezing_refuses_a_call_after_the_weights_changed(tmp_path):
    run = make_run(tmp_path, {"kept": "freezing", "settings": {"options": {"freezing": True}}})
    loaded = load_run(run, device="cpu")
    x = torch.randn(4, 16)
    loaded(x)
    state = {k: v + 1.0 for k, v in loaded.model.state_dict().items()}
    loaded.model.load_state_dict(state)
    with pytest.raises(WeightsChangedError, match="load the run again"):
        loaded(x)


def test_decision_config_is_torch_compiles_own_for_the_mode():
    assert decision_config({"mode": "reduce-overhead"}) == {"triton.cudagraphs": True}
    assert decision_config({"options": {"coordinate_descent_tuning": True}}) == {"coordinate_descent_tuning": True}
    assert decision_config({}) == {}


def test_a_composition_with_cuda_graphs_is_guarded_like_the_mode():
    from kernelopt.runtime.decision import uses_cudagraphs
    composed = {"options": {"triton.cudagraphs": True, "freezing": True}}
    assert uses_cudagraphs(composed) and uses_cudagraphs({"mode": "max-autotune"})
    assert not uses_cudagraphs({"options": {"freezing": True}}) and not uses_cudagraphs({})
    assert decision_config(composed) == {"triton.cudagraphs": True, "freezing": True}


def test_backend_reproduces_a_runs_decision(tmp_path, caplog):
    import kernelopt
    run = make_run(tmp_path, {"kept": "freezing", "settings": {"options": {"freezing": True}}})
    with caplog.at_level(logging.WARNING, logger="kernelopt"):
        be = kernelopt.backend(run=run)
    assert be.decision == "freezing" and be._config == {"freezing": True}
    assert any("freezing" in r.getMessage() for r in caplog.records)
    loaded = load_run(make_run(tmp_path, None), device="cpu")
    x = torch.randn(4, 16)
    torch._dynamo.reset()
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(loaded.model, backend=be)(x), loaded.model(x))
    assert kernelopt.backend(run=make_run(tmp_path, None)).decision == "default"


def test_channels_last_converts_a_copy_and_leaves_the_loaded_model_as_built(tmp_path):
    # final_check's eager and torch.compile default run on loaded.model: were it converted in place, the
    # baseline would be measured with channels_last weights (a different program from the user's)
    (tmp_path / "problem.py").write_text(CONV)
    ns = {}
    exec(CONV, ns)
    torch.save(ns["Model"]().state_dict(), tmp_path / "weights.pt")
    manifest = {"problem": "problem.py", "weights": "weights.pt", "modules": [],
                "decision": {"kept": "channels_last", "settings": {"channels_last": True}}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    loaded = load_run(str(tmp_path), device="cpu")
    assert loaded.model.conv.weight.is_contiguous()
    assert loaded._guard.model is not loaded.model
    assert loaded._guard.model.conv.weight.is_contiguous(memory_format=torch.channels_last)
    assert not loaded._guard.model.conv.weight.is_contiguous()
    x = torch.randn(2, 3, 8, 8)
    torch.testing.assert_close(loaded(x), loaded.model(x), atol=1e-5, rtol=1e-5)


def test_cudnn_benchmark_runs_each_call_on_a_thread_of_its_own_with_the_flag_on(tmp_path, caplog):
    # cuDNN keeps its plans per thread, found by a convolution's first call there: the loader runs the compiled
    # model on one thread of its own (the same for every call), sets the flag around each call there and gives
    # the process its own setting back after it, raised or returned; grad mode goes with the call
    import threading
    run = make_run(tmp_path, {"kept": "cudnn_benchmark", "settings": {"cudnn_benchmark": True}})
    with caplog.at_level(logging.WARNING, logger="kernelopt"):
        loaded = load_run(run, device="cpu")
    assert loaded.decision == "cudnn_benchmark" and loaded._guard.active
    assert any("cuDNN autotuning" in r.getMessage() for r in caplog.records)
    seen = []

    def spy(x):
        seen.append((torch.backends.cudnn.benchmark, threading.get_ident(), torch.is_grad_enabled()))
        if x is None:
            raise RuntimeError("the model raised")
        return x + 1

    loaded.compiled.compiled = spy
    assert torch.backends.cudnn.benchmark is False
    x = torch.randn(4, 16)
    torch.testing.assert_close(loaded(x), x + 1)
    torch.testing.assert_close(loaded(x), x + 1)
    assert torch.backends.cudnn.benchmark is False
    assert [flag for flag, _, _ in seen] == [True, True]
    threads = {ident for _, ident, _ in seen}
    assert len(threads) == 1 and threading.get_ident() not in threads
    assert not any(grad for _, _, grad in seen)  # the loader calls under no_grad: so does its thread
    with pytest.raises(RuntimeError, match="the model raised"):
        loaded(None)
    assert torch.backends.cudnn.benchmark is False and len(seen) == 3


def test_backend_reproduces_cudnn_benchmark_around_the_compiled_graph(tmp_path, monkeypatch):
    import kernelopt
    import torch._inductor.compile_fx as compile_fx_module
    seen = []

    def fake_compile_fx(gm, example_inputs, config_patches=None):
        def compiled(*args):
            seen.append(torch.backends.cudnn.benchmark)
            return gm(*args)
        return compiled
    monkeypatch.setattr(compile_fx_module, "compile_fx", fake_compile_fx)
    run = make_run(tmp_path, {"kept": "cudnn_benchmark", "settings": {"cudnn_benchmark": True}})
    be = kernelopt.backend(run=run)
    assert be.decision == "cudnn_benchmark" and be._config == {}
    loaded = load_run(make_run(tmp_path, None), device="cpu")
    x = torch.randn(4, 16)
    torch._dynamo.reset()
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(loaded.model, backend=be)(x), loaded.model(x))
    assert seen and all(seen) and torch.backends.cudnn.benchmark is False


def test_cudnn_benchmark_calls_on_a_thread_of_their_own_unless_the_process_autotunes_already():
    import threading
    from kernelopt.runtime.decision import CudnnBenchmarked
    where = lambda: (threading.get_ident(), torch.backends.cudnn.benchmark)  # noqa: E731
    here = threading.get_ident()
    assert torch.backends.cudnn.benchmark is False
    threaded = CudnnBenchmarked(where)
    assert not threaded.on_callers_thread
    ident, flag = threaded()
    assert ident != here and flag is True  # another thread, the flag on there
    assert torch.backends.cudnn.benchmark is False
    torch.backends.cudnn.benchmark = True  # as a user who autotunes sets it, before any convolution
    try:
        direct = CudnnBenchmarked(where)
        assert direct.on_callers_thread and direct() == (here, True)  # no handoff
    finally:
        torch.backends.cudnn.benchmark = False


def test_own_thread_carries_grad_mode_and_raises_on_the_callers_thread():
    import threading
    from kernelopt.runtime.own_thread import OwnThread
    runner = OwnThread()
    here = threading.get_ident()
    assert runner.call(threading.get_ident) != here
    assert runner.call(torch.is_grad_enabled) is True
    with torch.no_grad():
        assert runner.call(torch.is_grad_enabled) is False
    with torch.inference_mode():
        assert runner.call(torch.is_inference_mode_enabled) is True
    with pytest.raises(ZeroDivisionError):
        runner.call(lambda: 1 / 0)
    assert runner.call(lambda: 7) == 7  # still serving after a raise
    thread = runner.thread
    del runner
    import gc
    gc.collect()
    thread.join(timeout=10)
    assert not thread.is_alive()  # collected: its thread ended


def test_the_autotuning_thread_keeps_nothing_of_a_call_after_it_returned():
    # the thread lasts the process, and the decide op drops its compiled models after each decision: it must
    # not hold the last call's arguments (inputs, a model) until a next call that never comes
    import gc
    import weakref
    from kernelopt.runtime.decision import on_autotuning_thread
    big = torch.zeros(1024)
    seen = weakref.ref(big)
    assert on_autotuning_thread(lambda t=big: float(t.sum())) == 0.0
    del big
    gc.collect()
    assert seen() is None


def test_the_kernel_searchs_ops_on_a_cudnn_autotuned_session_run_on_the_autotuning_thread():
    # cuDNN's plans are per thread: the modules the kernel search profiles and times must run the decision's
    # autotuned plans, so those ops run on one thread with the flag on; without the decision, on the caller's
    import threading
    from kernelopt.inputs.module import ops as module_ops
    from kernelopt.runtime.decision import on_autotuning_thread
    here = threading.get_ident()
    where = module_ops._as_decided(lambda args: (threading.get_ident(), torch.backends.cudnn.benchmark))
    ident, flag = where({"compile_settings": {"cudnn_benchmark": True, "mode": "max-autotune-no-cudagraphs"}})
    assert ident != here and flag is True
    assert torch.backends.cudnn.benchmark is False  # given back
    assert where({"compile_settings": {"options": {"freezing": True}}}) == (here, False)
    assert where({}) == (here, False)
    # the same thread every time (its plans last the worker), and an op calling another there does not wait on itself
    assert where({"compile_settings": {"cudnn_benchmark": True}})[0] == ident
    assert on_autotuning_thread(lambda: on_autotuning_thread(threading.get_ident)) == ident
    with pytest.raises(ZeroDivisionError):
        where_raises = module_ops._as_decided(lambda args: 1 / 0)
        where_raises({"compile_settings": {"cudnn_benchmark": True}})
    for name in ("capture", "check", "model_check", "profile", "bench"):
        assert getattr(getattr(module_ops, "op_" + name), "as_decided", False), name
    assert not getattr(module_ops.op_final_check, "as_decided", False)  # loads the run as a user does
