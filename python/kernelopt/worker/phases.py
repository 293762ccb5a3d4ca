"""Where a request's time goes: an op marks named phases, the server sends their seconds with the reply
("phases_s"), and the engine sums them per op in the report's cost (report.json cost.requests[op].phases_s).

Seconds are host wall time, each phase's own (a phase nested in another is not counted twice). Where an op
synchronizes the GPU inside a phase (the gates compare tensors on the host's request), the GPU's work is in it;
where it does not, that work lands in a later phase."""
import time
from contextlib import contextmanager

_totals = {}
_stack = []  # [name, start, seconds of the phases nested in it]


def reset():
    _totals.clear()
    _stack.clear()


def seconds():
    """The phases of the request so far: {name: own seconds}, rounded to 0.1 ms."""
    return {name: round(s, 4) for name, s in _totals.items()}


@contextmanager
def phase(name):
    frame = [name, time.perf_counter(), 0.0]
    _stack.append(frame)
    try:
        yield
    finally:
        if _stack and _stack[-1] is frame:  # a reset() inside the phase forgot it: nothing to add
            _stack.pop()
            elapsed = time.perf_counter() - frame[1]
            _totals[name] = _totals.get(name, 0.0) + elapsed - frame[2]
            if _stack:
                _stack[-1][2] += elapsed
