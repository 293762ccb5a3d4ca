"""worker/phases.py: each phase's own seconds, nested phases not counted twice (a clock the test moves)."""
import pytest

from kernelopt.worker import phases


@pytest.fixture
def clock(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(phases.time, "perf_counter", lambda: now[0])
    phases.reset()
    yield now
    phases.reset()


def test_a_nested_phase_is_its_own_and_not_its_parents(clock):
    with phases.phase("outer"):
        clock[0] += 1.0
        with phases.phase("inner"):
            clock[0] += 2.0
        clock[0] += 0.5
    assert phases.seconds() == {"outer": 1.5, "inner": 2.0}


def test_phases_of_one_name_add_up_and_reset_forgets_them(clock):
    for step in (1.0, 0.25):
        with phases.phase("a"):
            clock[0] += step
    assert phases.seconds() == {"a": 1.25}
    phases.reset()
    assert phases.seconds() == {}


def test_a_reset_inside_a_phase_leaves_nothing_of_it(clock):
    with phases.phase("outer"):
        clock[0] += 1.0
        phases.reset()  # as the server does before the next request
    assert phases.seconds() == {}


def test_a_phase_that_raises_still_counts(clock):
    with pytest.raises(ValueError):
        with phases.phase("outer"):
            with phases.phase("inner"):
                clock[0] += 3.0
                raise ValueError("the op failed")
    assert phases.seconds() == {"outer": 0.0, "inner": 3.0}
