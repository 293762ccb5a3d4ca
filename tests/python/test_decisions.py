"""The `decide` op on the CPU (Inductor's C++ backend): a decision's evidence for the engine.

Freezing, combo kernels and coordinate descent run on CPU Inductor; CUDA graphs are skipped with the reason, and
channels_last on a model without convolutions too, and cuDNN's autotuning (tests/gpu/test_decisions_gpu.py covers
CUDA graphs and cudnn_benchmark).
"""
import os
import textwrap

import pytest

from kernelopt.worker import ops

TOL = {"float32": {"atol": 1e-4, "rtol": 1e-4}, "float16": {"atol": 1e-2, "rtol": 1e-2},
       "bfloat16": {"atol": 1e-2, "rtol": 1e-2}}

LINEAR = textwrap.dedent('''
    import torch
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(16, 8)
        def forward(self, x):
            return torch.relu(self.fc(x)) * 2.0
    def get_inputs():
        return [torch.randn(4, 16)]
    def get_init_inputs():
        return []
''')


@pytest.fixture
def problem(tmp_path):
    path = tmp_path / "linear.py"
    path.write_text(LINEAR)
    return str(path)


def decide(problem, name, settings, trials=3):
    return ops.TABLE["decide"]({"problem": problem, "device": "cpu", "seeds": [0, 1, 2], "tolerances": TOL,
                                "decision": {"name": name, "settings": settings}, "trials": trials})


@pytest.mark.parametrize("name,option", [("freezing", "freezing"), ("combo_kernels", "combo_kernels")])
def test_an_inductor_option_on_cpu_gives_runs_on_every_seed_and_samples(problem, name, option):
    r = decide(problem, name, {"options": {option: True}})
    assert r["skipped"] is None and r["refused"] is None
    assert [run["seed"] for run in r["runs"]] == [0, 1, 2]
    assert all(run["error"] is None and run["outputs"] and all(o["matches_baseline"] for o in run["outputs"])
               for run in r["runs"])
    assert len(r["samples_ms"]["baseline"]) == 3 and len(r["samples_ms"]["candidate"]) == 3


def test_a_decide_request_says_where_its_time_went(problem):
    from kernelopt.worker import phases
    phases.reset()
    decide(problem, "freezing", {"options": {"freezing": True}})
    spent = phases.seconds()
    assert set(spent) == {"decide.compile_default", "decide.compile_decision", "decide.correctness",
                          "decide.timing", "decide.release"}
    assert all(s >= 0 for s in spent.values())


def test_a_decision_that_fails_to_compile_is_recorded_on_every_seed(problem, monkeypatch):
    from kernelopt.inputs.module import decisions

    def broken(model, settings):
        def call(*inputs):
            raise RuntimeError("the decision's compile failed")
        return call
    monkeypatch.setattr(decisions, "compile_model", broken)
    r = decide(problem, "freezing", {"options": {"freezing": True}})
    assert [run["seed"] for run in r["runs"]] == [0, 1, 2]
    assert all("compile failed" in run["error"] for run in r["runs"])


def test_out_of_memory_in_a_decision_is_the_devices_failure_not_the_decisions(problem, monkeypatch):
    # raised, so the server answers out_of_memory (the engine retries with less) instead of a model-gate rejection
    import torch
    from kernelopt.inputs.module import decisions

    def out_of_memory(model, settings):
        def call(*inputs):
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return call
    monkeypatch.setattr(decisions, "compile_model", out_of_memory)
    with pytest.raises(torch.OutOfMemoryError):
        decide(problem, "freezing", {"options": {"freezing": True}})


def test_cudagraphs_on_cpu_is_skipped_with_the_reason(problem):
    r = decide(problem, "cudagraphs", {"mode": "reduce-overhead"})
    assert r["skipped"] and "CUDA" in r["skipped"]
    assert r["runs"] == [] and r["samples_ms"] == {}


def test_a_composition_is_options_alone_and_runs_like_a_single_decision(problem):
    # the engine composes passing decisions (src/engine/decisions.cpp, compose) as Inductor options
    r = decide(problem, "freezing+coordinate_descent", {"options": {"freezing": True, "coordinate_descent_tuning": True}})
    assert r["skipped"] is None and r["refused"] is None
    assert all(run["error"] is None and all(o["matches_baseline"] for o in run["outputs"]) for run in r["runs"])
    # a composition with CUDA graphs is a CUDA-graph decision: skipped here, and the loader clones its outputs
    r = decide(problem, "cudagraphs+freezing", {"options": {"triton.cudagraphs": True, "freezing": True}})
    assert r["skipped"] and "CUDA" in r["skipped"]


def test_the_engines_mode_options_are_torchs():
    """compose() in src/engine/decisions.cpp writes a mode as these options (tests/unit/test_engine_decisions.cpp,
    DecisionCompose): this fails when torch's own meaning of a mode drifts from them."""
    import torch
    assert torch._inductor.list_mode_options("reduce-overhead") == {"triton.cudagraphs": True}
    assert torch._inductor.list_mode_options("max-autotune-no-cudagraphs") == {
        "max_autotune": True, "coordinate_descent_tuning": True}
    assert torch._inductor.list_mode_options("max-autotune") == {
        "max_autotune": True, "triton.cudagraphs": True, "coordinate_descent_tuning": True}


def test_freezing_a_model_without_weights_is_skipped(tmp_path):
    path = tmp_path / "gelu.py"
    path.write_text(LINEAR.replace("self.fc = torch.nn.Linear(16, 8)", "pass")
                    .replace("torch.relu(self.fc(x)) * 2.0", "torch.nn.functional.gelu(x)"))
    r = decide(str(path), "freezing", {"options": {"freezing": True}})
    assert r["skipped"] and "has none" in r["skipped"]


def test_cudnn_benchmark_is_skipped_without_cuda_or_convolutions(problem, tmp_path):
    r = decide(problem, "cudnn_benchmark", {"cudnn_benchmark": True})
    assert r["skipped"] == "cuDNN autotuning needs a CUDA device (this run's device is cpu)" and r["runs"] == []
    from kernelopt.inputs.module.decisions import not_applicable
    import torch
    linear = torch.nn.Linear(4, 4)
    assert "only to models with convolutions" in not_applicable(linear, "cuda", {"cudnn_benchmark": True})
    assert not_applicable(torch.nn.Conv2d(3, 4, 3), "cuda", {"cudnn_benchmark": True}) is None


def test_channels_last_without_convolutions_is_skipped(problem):
    r = decide(problem, "channels_last", {"channels_last": True})
    assert r["skipped"] and "convolutions" in r["skipped"]


def test_settings_outside_the_whitelist_are_refused_by_the_protocol(problem):
    with pytest.raises(Exception, match="Additional properties"):
        decide(problem, "evil", {"mode": "max-autotune", "options": {"dynamic": True}})


# a small convolution network, shared with bench/gpu's scripts' tests
CONV = open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gpu",
                         "problems_tiny_conv.py")).read()


def test_channels_last_on_a_convolution_network_runs_and_matches(tmp_path):
    path = tmp_path / "conv.py"
    path.write_text(CONV)
    r = decide(str(path), "channels_last", {"channels_last": True})
    assert r["skipped"] is None
    assert len(r["runs"]) == 3 and all(run["error"] is None for run in r["runs"])
    assert all(o["matches_baseline"] or o["ref_err_candidate"] is not None for run in r["runs"] for o in run["outputs"])


def test_channels_last_is_timed_with_its_conversion_of_the_inputs_in_each_call(tmp_path, monkeypatch):
    # The gate times what a loaded run costs: the user's inputs as they are, converted in every timed call.
    # Converted once outside the timing, channels_last looked 1.107x where the run was 0.872x end to end (H100).
    from kernelopt.inputs.module import decisions
    from kernelopt.runtime import decision as runtime_decision
    path = tmp_path / "conv.py"
    path.write_text(CONV)
    seen = []
    real = runtime_decision.decision_inputs

    def recording(inputs, settings):
        seen.append([x.is_contiguous() for x in inputs])
        return real(inputs, settings)
    monkeypatch.setattr(runtime_decision, "decision_inputs", recording)
    monkeypatch.setattr(decisions, "decision_inputs", recording)
    r = decide(str(path), "channels_last", {"channels_last": True}, trials=4)
    assert len(r["samples_ms"]["candidate"]) == 4
    # 3 correctness seeds, then warmup 3 + 4 timed calls, each converting the contiguous inputs it was given
    assert len(seen) == 3 + 3 + 4 and all(flags == [True] for flags in seen)


def test_a_model_that_writes_its_inputs_is_seen_and_one_that_does_not_is_not():
    import torch
    from kernelopt.inputs.module.decisions import mutates_inputs

    class Writes(torch.nn.Module):
        def forward(self, x):
            x.mul_(2.0)
            return x + 1

    class Reads(torch.nn.Module):
        def forward(self, x):
            return x * 2.0

    x = torch.randn(4)
    assert mutates_inputs(Writes(), [x]) is True
    assert mutates_inputs(Reads(), [x]) is False


def test_new_addresses_are_judged_at_the_runs_tolerances_not_bit_for_bit():
    import torch
    from kernelopt.inputs.module.decisions import _same_answers
    a = torch.randn(64)
    assert _same_answers([a], [a.clone()], TOL)
    assert _same_answers([a], [a + 1e-7], TOL)  # last-bit differences between calls (cuDNN, atomics)
    assert not _same_answers([a], [torch.randn(64)], TOL)  # another seed's answers: a stale replay
    nan = torch.tensor([float("nan"), 1.0])
    assert _same_answers([nan], [nan.clone()], TOL)
    assert not _same_answers([a], [a[:32]], TOL)
