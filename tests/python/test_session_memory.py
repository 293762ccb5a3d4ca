"""The captured session holds one seed's state at a time (session.Session): at 6-16 GB inputs three
seeds' arguments, launches and outputs held together were what ran the H200 out of memory. Real
torch.compile (Inductor's CPU code), real regeneration of each seed's inputs from the seed.
"""
import os
import sys

import pytest

# the engine's tolerances per dtype (engine/options.hpp), as it sends them
TOL = {"float32": {"atol": 1e-4, "rtol": 1e-4}, "float16": {"atol": 1e-2, "rtol": 1e-2},
       "bfloat16": {"atol": 1e-2, "rtol": 1e-2}}


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

torch = pytest.importorskip("torch")

PROBLEM = '''
import torch

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.randn(256))
    def forward(self, x):
        return torch.softmax(x * self.scale, -1)
def get_inputs():
    return [torch.randn(64, 256)]
def get_init_inputs():
    return []
'''
ONE_SEED = (64 * 256 + 256) * 4  # the call's arguments: the input and the parameter, float32


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    from kernelopt.inputs.module.session import get_session, release_sessions
    path = tmp_path_factory.mktemp("p") / "softmax.py"
    path.write_text(PROBLEM)
    yield get_session(str(path), "cpu", [0, 1, 2])
    release_sessions()


def _values(session, seed):
    """(input, parameter) as the module's call() gets them for seed, copied."""
    tensors = [t.clone() for t in session.call_args(0, seed) if isinstance(t, torch.Tensor)]
    return sorted(tensors, key=lambda t: -t.dim())


def test_capture_holds_the_first_seed_alone_and_keeps_only_the_outputs_shapes(session):
    assert session.active == 0
    assert session.held_bytes() == ONE_SEED
    assert session.output_meta == [{"shape": [64, 256], "dtype": "torch.float32"}]
    assert not hasattr(session, "outputs") and not hasattr(session, "inputs")


def test_moving_to_another_seed_drops_the_last_and_draws_the_same_values_again(session):
    first = _values(session, 0)
    second = _values(session, 1)
    assert session.active == 1 and session.held_bytes() == ONE_SEED
    assert not torch.equal(first[0], second[0])  # another seed, other inputs
    again = _values(session, 0)  # drawn again from seed 0: the values the capture saw
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert session.held_bytes() == ONE_SEED


def test_the_float64_reference_takes_the_place_of_the_seed_s_arguments(session):
    ref = session.reference(2)
    assert ref[0].dtype == torch.float64 and session.active == 2
    assert session.held_bytes() == 64 * 256 * 8  # the reference alone: the arguments were dropped for it
    x = _values(session, 2)
    expected = torch.softmax(x[0].double() * x[1].double(), -1)
    assert torch.allclose(ref[0], expected, atol=1e-12)
    assert session.held_bytes() == ONE_SEED  # the arguments again; the reference went with them


def test_model_check_goes_seed_by_seed_and_leaves_one_seed_held(session, tmp_path):
    from kernelopt.worker.ops import op_model_check
    # the baseline module as its own candidate: every seed's outputs match, seed by seed
    args = {"problem": session.problem_path, "device": "cpu", "seeds": [0, 1, 2], "module": 0,
            "candidate_module": session.modules[0].path, "tolerances": TOL}
    result = op_model_check(args)
    assert [r["seed"] for r in result["runs"]] == [0, 1, 2]
    assert all(r["error"] is None and r["outputs"][0]["matches_baseline"] for r in result["runs"]), result
    assert session.active == 2 and session.held_bytes() == ONE_SEED


def test_the_end_to_end_evidence_holds_one_variant_at_a_time_and_still_sees_a_wrong_one(session):
    from kernelopt.inputs.module.ops import _final_outputs
    from kernelopt.problem import make_inputs
    model = session.model
    inputs = make_inputs(session.problem, session.problem_path, 1000, "cpu")
    right = _final_outputs(model, model, model, inputs, TOL)
    assert right[0]["mismatches_vs_eager"] == 0 and right[0]["err_optimized"] < 1e-6, right

    def wrong(x):
        out = model(x).clone()
        out[3, 7] += 0.5
        return out
    caught = _final_outputs(model, wrong, model, inputs, TOL)
    assert caught[0]["mismatches_vs_eager"] == 1 and caught[0]["err_optimized"] == pytest.approx(0.5, abs=1e-3)
    assert caught[0]["err_baseline"] < 1e-6
