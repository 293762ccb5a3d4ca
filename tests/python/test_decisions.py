"""The `decide` op on the CPU (Inductor's C++ backend): a decision's evidence for the engine.

Freezing and coordinate descent run on CPU Inductor; CUDA graphs are skipped with the reason, and
channels_last on a model without convolutions too (tests/gpu/test_decisions_gpu.py covers CUDA graphs).
"""
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


def test_freezing_on_cpu_gives_runs_on_every_seed_and_samples(problem):
    r = decide(problem, "freezing", {"options": {"freezing": True}})
    assert r["skipped"] is None and r["refused"] is None
    assert [run["seed"] for run in r["runs"]] == [0, 1, 2]
    assert all(run["error"] is None and run["outputs"] and all(o["matches_baseline"] for o in run["outputs"])
               for run in r["runs"])
    assert len(r["samples_ms"]["baseline"]) == 3 and len(r["samples_ms"]["candidate"]) == 3


def test_cudagraphs_on_cpu_is_skipped_with_the_reason(problem):
    r = decide(problem, "cudagraphs", {"mode": "reduce-overhead"})
    assert r["skipped"] and "CUDA" in r["skipped"]
    assert r["runs"] == [] and r["samples_ms"] == {}


def test_channels_last_without_convolutions_is_skipped(problem):
    r = decide(problem, "channels_last", {"channels_last": True})
    assert r["skipped"] and "convolutions" in r["skipped"]


def test_settings_outside_the_whitelist_are_refused_by_the_protocol(problem):
    with pytest.raises(Exception, match="Additional properties"):
        decide(problem, "evil", {"mode": "max-autotune", "options": {"dynamic": True}})
