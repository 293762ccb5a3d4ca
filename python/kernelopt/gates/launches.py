"""Gate 2's evidence on recorded kernel launches, shared by both input kinds.

A launch state is anything with `.args`, `.kwargs` and `.copy()` (standalone.Launch, or `Call`
here for the positional launches of an Inductor output module). `check_launches` runs the
original and the candidate kernel on private copies of each recorded state and reports, per
launch:

  - "model"/"synthetic" runs: every tensor argument compared, at the dtype's tolerance where the
    original wrote it and bit for bit where it did not, plus the bytes of each storage that no
    argument's view covers (row padding, the rest of a buffer a slice of which is passed);
  - "stale" runs: the launch again with the tensors the original writes holding the previous
    seed's results (the first seed: the last seed's; an earlier call's answer left in place),
    caught when a candidate skips work;
  - repeats: each launch R times on fresh copies; where the original's results are bit-identical
    across its R launches, the candidate's must be too ("determinism"); where they are not
    (atomics), the candidate's later repeats are compared at tolerance only ("repeat" runs);
  - "halves" runs: the first seed's launches again, the candidate's programs split into two launches
    (upper half, then lower half; and the other way round; program_halves). A kernel whose
    programs are independent computes the same; one whose programs race (a program writing what
    another reads or writes) usually gets away with it on a GPU, where the programs of a small grid
    run side by side, and is caught where the halves meet.

The engine decides from these numbers (src/verify/correctness_gate.cpp); nothing here decides.
"""
import ast

import torch

from kernelopt.gates.compare import _num, _unravel, chunk_pairs, compare_tensors, tolerance_for  # _num: JSON-safe scalars, as the evidence has
# launch-state copies live with the launches (kernels.py); gate 2's callers reach them here too
from kernelopt.device.kernels import GUARD_FILL, clone_values, restore_storage  # noqa: F401 (the triton input kind uses restore_storage)
from kernelopt.worker.phases import phase
from kernelopt.worker.failures import device_failure

DEFAULT_REPEATS = 3
# Inductor names the arguments a kernel writes out_ptr<N> (written) and in_out_ptr<N> (read, then written)
OUTPUT_PREFIXES = ("out_ptr", "in_out_ptr")


def declared_outputs(names, stored=()):
    """Positions of the arguments the original kernel declares as outputs: by Inductor's names, or because its
    own code stores through them (`stored`: param names, from stored_by). An output's bits can equal its
    state before the launch (the caching allocator handed its buffer the block an earlier call on the same
    inputs wrote), so "the original left it as it was" cannot tell an output from an input there; the
    declaration can. Other arguments are judged by what the original does."""
    return {i for i, n in enumerate(names)
            if isinstance(n, str) and (n.startswith(OUTPUT_PREFIXES) or n in set(stored))}


def stored_by(kernel):
    """Names of the pointer parameters a kernel object's own function stores through (tl.store, tl.atomic_*),
    read from its source with ast; () where the source cannot be read. Stores made inside a helper function
    are not seen: there the original's changes still tell."""
    import inspect
    import textwrap
    import types
    from kernelopt.artifact.static import stored_params
    fn = kernel
    for _ in range(4):  # CachingAutotuner -> JITFunction -> function; InterpretedFunction -> function
        if isinstance(fn, types.FunctionType):
            break
        fn = getattr(fn, "fn", None)
    if not isinstance(fn, types.FunctionType):
        return ()
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return ()
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fn.__name__]
    return tuple(stored_params(defs[0])) if defs else ()
_INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


class Call:
    """Positional (and keyword) launch arguments as recorded; copies keep layout and aliasing."""

    def __init__(self, args, kwargs=None):
        self.args, self.kwargs = list(args), dict(kwargs or {})

    def copy(self):
        return Call(*clone_values(self.args, self.kwargs))


def tensors(args, kwargs, names):
    """(label, position, tensor) of each tensor argument, positional then keyword."""
    out = []
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            out.append((names[i] if i < len(names) else str(i), i, a))
    for k, v in kwargs.items():
        if isinstance(v, torch.Tensor):
            out.append((k, names.index(k) if k in names else None, v))
    return out


def same(a, b):
    """Bitwise-equal values, NaNs in the same places (chunk by chunk: no mask of a whole 6-16 GB tensor)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    for _, x, y in chunk_pairs(a, b):
        eq = (x == y) | (torch.isnan(x) & torch.isnan(y)) if (x.is_floating_point() or x.is_complex()) else x == y
        if not bool(eq.all()):
            return False
    return True


def _triples(rec, expected, got, names):
    return zip(tensors(rec.args, rec.kwargs, names), tensors(expected.args, expected.kwargs, names),
               tensors(got.args, got.kwargs, names))


def compare_launch(rec, expected, got, names, tolerances, written=None):
    """Evidence per tensor argument of one launch: got vs expected, both started from rec's state.
    A tensor the original left as it was must stay so bit for bit, unless its position is in
    `written` (known to be an output: the original may rewrite the values it already held)."""
    out = []
    for (label, position, pre), (_, _, e), (_, _, g) in _triples(rec, expected, got, names):
        if (written is None or position not in written) and same(e, pre):
            ev = compare_tensors(g, e, 0.0, 0.0)
            ev["unchanged_by_original"] = True
        else:
            a, r = tolerance_for(e.dtype, tolerances)
            ev = compare_tensors(g, e, a, r)
        ev["arg"] = label
        ev["position"] = position
        out.append(ev)
    out.extend(compare_outside_views(rec, expected, got, names))
    return out


def _whole(t, dtype, numel):
    return torch.empty(0, dtype=dtype, device=t.device).set_(t.untyped_storage(), 0, (numel,))


def _dense_span(t):
    """[start, end) of the storage elements t covers when it covers each of them exactly once (contiguous in
    some order of its dims: channels-last, a permuted or transposed tensor), else None."""
    dims = sorted((stride, size) for size, stride in zip(t.shape, t.stride()) if size != 1)
    step = 1
    for stride, size in dims:
        if stride != step:
            return None
        step *= size
    return t.storage_offset(), t.storage_offset() + t.numel()


def _outside_ranges(views, numel):
    """[start, end) element ranges of a storage of numel elements that no view covers, when every
    view is dense (the common case: no element-by-element index is built); None otherwise. A
    channels-last view of 6.4 GB took the index path on the H100: 70 s of gate 2 for one candidate."""
    spans = [_dense_span(v[1]) for v in views]
    if any(span is None for span in spans):
        return None
    out, at = [], 0
    for s, e in sorted(spans):
        if s > at:
            out.append((at, s))
        at = max(at, e)
    if at < numel:
        out.append((at, numel))
    return out


def compare_outside_views(rec, expected, got, names):
    """Bit-for-bit evidence on the elements of each argument's storage that no tensor argument's view
    covers (row padding, a tail past n, the guard tail of every copy): the original cannot reach them
    through its arguments' shapes, so a candidate that writes there (a store past a row's end or past
    the end of the allocation, a flag kept in the padding) differs."""
    groups = {}  # storage -> [(label, pre, expected, got)]
    for (label, _, pre), (_, _, e), (_, _, g) in _triples(rec, expected, got, names):
        groups.setdefault(pre.untyped_storage().data_ptr(), []).append((label, pre, e, g))
    out = []
    for views in groups.values():
        size = views[0][1].element_size()
        if any(v[1].element_size() != size for v in views):
            continue  # one storage seen as several element sizes: no common indexing
        # the copies' storages: the recorded one plus the guard tail clone_values gave them
        dtype, numel = views[0][1].dtype, views[0][2].untyped_storage().nbytes() // size
        pre_numel = views[0][1].untyped_storage().nbytes() // size
        ranges = _outside_ranges(views, numel)
        if ranges is not None:
            if not ranges:
                continue

            def pick(t, n, spans=ranges):
                whole = _whole(t, dtype, n)
                parts = [whole[a:min(b, n)] for a, b in spans if a < n]
                return torch.cat(parts).cpu() if parts else torch.empty(0, dtype=dtype)
        else:
            covered = torch.zeros(numel, dtype=torch.bool)
            for _, pre, _, _ in views:
                idx = torch.arange(numel).as_strided(pre.size(), pre.stride(), pre.storage_offset())
                covered[idx.reshape(-1)] = True
            outside = (~covered).nonzero().reshape(-1)
            if outside.numel() == 0:
                continue

            def pick(t, n, idx=outside):
                return _whole(t, dtype, n).cpu()[idx[idx < n]]

        ev = compare_tensors(pick(views[0][3], numel), pick(views[0][2], numel), 0.0, 0.0)
        ev["arg"] = f"{views[0][0]} (outside its view)"
        ev["position"] = None
        # the original left the outside as it found it: the recorded bytes, and the guard past them
        exp_tail = _whole(views[0][2], torch.uint8, numel * size)[pre_numel * size:].cpu()
        ev["unchanged_by_original"] = bool(
            same(pick(views[0][2], pre_numel), pick(views[0][1], pre_numel)) and bool((exp_tail == GUARD_FILL).all()))
        out.append(ev)
    return out


def stale_copy(rec, written, earlier, names):
    """A copy of rec whose tensors the original writes hold an earlier call's results instead
    (another seed's output of the same launch, where shape and dtype agree)."""
    stale = rec.copy()
    for (_, position, t), prior in zip(tensors(stale.args, stale.kwargs, names), earlier):
        if position in written and prior is not None and prior.shape == t.shape and prior.dtype == t.dtype:
            t.copy_(prior)
    return stale


def _bits(t):
    """t's elements as integers of the same width (so -0.0 != 0.0 and NaN payloads count), or None."""
    it = _INT_OF_SIZE.get(t.element_size())
    if it is None or t.is_complex():
        return None
    return t if t.dtype == it else t.view(it)


def _first_difference(a, b):
    """Flat index of the first element where a and b (one shape) differ bit for bit, else None."""
    for at, x, y in chunk_pairs(a, b):
        bx, by = _bits(x), _bits(y)
        diff = (bx != by) if bx is not None else ~((x == y) | (torch.isnan(x) & torch.isnan(y)))
        if bool(diff.any()):
            return at + int(diff.nonzero()[0, 0])
    return None


def first_bit_difference(first, later, names):
    """Where two runs of one launch (same start, same kernel) differ bit for bit, else None:
    {"arg", "index", "first", "later"}, the first differing element of the first differing argument
    (its view first, then the rest of its storage: "<arg> (outside its view)", storage index)."""
    pairs = list(zip(tensors(first.args, first.kwargs, names), tensors(later.args, later.kwargs, names)))
    for (label, _, a), (_, _, b) in pairs:
        flat = _first_difference(a, b)
        if flat is not None:
            idx = _unravel(flat, a.shape)
            return {"arg": label, "index": list(idx), "first": _num(a[idx]), "later": _num(b[idx])}
    seen = set()
    for (label, _, a), (_, _, b) in pairs:
        if a.untyped_storage().data_ptr() in seen or _bits(a) is None:
            continue
        seen.add(a.untyped_storage().data_ptr())
        numel = a.untyped_storage().nbytes() // a.element_size()
        wa, wb = _whole(a, a.dtype, numel), _whole(b, b.dtype, numel)
        i = _first_difference(wa, wb)
        if i is not None:
            return {"arg": f"{label} (outside its view)", "index": [i], "first": _num(wa[i]), "later": _num(wb[i])}
    return None


def _label(seed, source):
    return f"seed {seed}" + (" (synthetic)" if source == "synthetic" else "")


def _triton_language(tree):
    """The name this module gives triton.language (`tl` in Inductor's kernels), or None."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.asname for a in node.names if a.name == "triton.language" and a.asname)
            if any(a.name == "triton" and not a.asname for a in node.names):
                names.add("triton.language")
        elif isinstance(node, ast.ImportFrom) and node.module == "triton":
            names.update((a.asname or a.name) for a in node.names if a.name == "language")
    return "tl" if "tl" in names else next(iter(sorted(names)), None)


def program_halves(source, kernel):
    """Two copies of source in which the @triton.jit function `kernel` does its work only in the
    upper, or only in the lower, half of its programs (numbered over every grid axis), the rest
    doing nothing. Launching one copy after the other does the kernel's whole work, with every
    program of one half finished before any program of the other starts: a result that depends on
    which of two programs runs first shows where the halves meet. On a GPU, programs of a small
    grid run side by side, so such a race rarely loses there otherwise.
    The body's leading constant assignments (Inductor's static `xnumel = 8192`) stay before the `if`: Triton
    rejects a branch that rebinds a parameter with another type (an int64 `xnumel` argument, as Inductor passes
    for kernels indexed in 64 bits, rebound to an int32 literal), which failed every candidate of such kernels.
    Returns (upper_text, lower_text), or None where the kernel never reads its program id, returns
    early, or its body cannot be indented (on one line with its def, or indented with tabs)."""
    tree = ast.parse(source)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == kernel), None)
    lang = _triton_language(tree)
    if fn is None or lang is None or fn.body[0].lineno <= fn.lineno:
        return None
    inner = list(ast.walk(fn))
    if any(isinstance(n, ast.Return) for n in inner) or not any(
            isinstance(n, ast.Attribute) and n.attr == "program_id" for n in inner):
        return None
    lines = source.splitlines(keepends=True)
    first, last = fn.body[0].lineno - 1, fn.end_lineno  # body lines, 0-based [first, last)
    if any(line[:len(line) - len(line.lstrip())].count("\t") for line in lines[first:last]):
        return None  # tabs: four more spaces could make the indentation inconsistent
    indent = " " * fn.body[0].col_offset
    kept = first  # lines [first, kept): the leading constant assignments, left before the `if`
    for stmt, after in zip(fn.body, fn.body[1:]):
        if not (_constant_binding(stmt) and after.lineno > stmt.end_lineno):
            break
        kept = stmt.end_lineno
    body = "".join(("    " + line) if line.strip() else line for line in lines[kept:last])
    if not body.endswith("\n"):
        body += "\n"
    pid = [f"{lang}.program_id({a}).to({lang}.int64)" for a in range(3)]
    num = [f"{lang}.num_programs({a}).to({lang}.int64)" for a in range(3)]
    linear = f"({pid[0]} + {pid[1]} * {num[0]} + {pid[2]} * {num[0]} * {num[1]})"
    half = f"({num[0]} * {num[1]} * {num[2]}) // 2"

    def copy(op):
        head = f"{indent}if {linear} {op} {half}:  # kernelopt gate 2: one half of the programs\n"
        return "".join(lines[:kept]) + head + body + "".join(lines[last:])
    return copy(">="), copy("<")


def _constant_binding(stmt):
    """`name = <number>`: binds a constant, whatever program runs it."""
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Constant) and type(stmt.value.value) in (int, float))


class Lazy:
    """A launch state made when it is first needed: load() returns it. The module path records each
    seed's launches on demand (session.Session holds one seed's state on the device at a time), so
    check_launches asks for a seed's states only while it works on that seed."""

    def __init__(self, load):
        self.load = load


def _state(record_state):
    if not isinstance(record_state, Lazy):
        return record_state
    with phase("check.record"):  # the seed's model run that records its launches
        return record_state.load()


def check_launches(records, run_base, run_cand, names, tolerances, repeats=DEFAULT_REPEATS,
                   sync=lambda: None, error_line=None, halves=None, stored=(), stop_early=False):
    """Gate 2's result for one kernel: records are (seed, launch index, source, state) in call
    order, a state given as is or as a Lazy; run_base(state)/run_cand(state) launch the
    original/candidate in place on a state; stored names the parameters the original's code stores
    through (stored_by: they are outputs whatever their bits before a launch); halves, when given, is a function returning
    (run_upper, run_lower), the candidate's upper/lower half of programs, or None; it is called only
    when every earlier run passed (loading the copies compiles two kernels on a GPU: not spent on a
    candidate already rejected).
    Works seed by seed, in record order, holding one seed's copies at a time: each seed's model runs
    and repeats, then its stale runs from the seed before it (whose written results wait on the
    host); the first seed's stale runs, from the last seed, and the halves runs come at the end.
    stop_early: the first run that fails (a mismatch, a launch that raised, a repeat that differs) ends the check,
    and "stopped_early" says where: the candidate is rejected whatever the rest would show, and on a GPU the rest
    of a rejected candidate's runs is most of its gate time (about 40 of the 49 s one spent on a 6 GB cumsum, H100,
    estimated from its phase times, not measured with the stop). The worker's
    check ops pass it; the full evidence of every failure stays a call away.
    Returns {"atol", "rtol" (float32's), "tolerances", "repeats", "runs", "determinism", "stopped_early"} (see the
    module docstring); tolerances is the engine's table (compare.tolerance_for)."""
    error_line = error_line or (lambda exc: f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:500])
    repeats = max(1, int(repeats))
    check = _Check(run_base, run_cand, names, tolerances, repeats, sync, error_line, stored, stop_early)
    groups = {}  # (source, seed) -> [(launch index, state)], in record order
    for seed, i, source, state in records:
        groups.setdefault((source, seed), []).append((i, state))
    previous, first = {}, {}  # source -> (seed, results) of its group done last / its first group
    for (source, seed), states in groups.items():
        results = check.seed_runs(source, seed, states, previous.get(source))
        first.setdefault(source, (seed, states))
        previous[source] = (seed, results)
        if check.stopped:
            break
    for source, (seed, states) in first.items():  # the first seed's stale runs, from the last seed
        if previous[source][0] != seed and not check.stopped:
            check.stale_runs(source, seed, [(i, _state(st)) for i, st in states], previous[source])
    order = {key: n for n, key in enumerate(groups)}
    check.stale.sort(key=lambda run: (order[(run["stale_source"], run["seed"])], run["launch"]))
    for run in check.stale:
        del run["stale_source"]
    runs = check.model + check.stale + check.repeat
    copies = None
    if halves is not None and not check.det["failures"] and _all_passed(runs):
        with phase("check.halves_compile"):
            copies = halves()
    if copies is not None and records:  # the first seed's launches, one half of the programs after the other
        upper, lower = copies
        states = [(i, _state(st)) for i, st in groups[(records[0][2], records[0][0])]]
        for order_name, one, other in (("upper half first", upper, lower), ("lower half first", lower, upper)):
            def in_halves(state, one=one, other=other):
                one(state)
                other(state)
            for i, rec in states:
                run = {"seed": records[0][0], "launch": i, "source": "halves", "order": order_name,
                       "error": None, "tensors": []}
                with phase("check.halves"):
                    check.both(run, rec, candidate=in_halves)
                runs.append(run)
    det = check.det
    if det["original_nondeterministic"]:
        det["note"] = (f"the original differs between its own {repeats} launches on "
                       f"{len(det['original_nondeterministic'])} launch(es) (atomics?): there the candidate's "
                       f"repeats are compared at tolerance only")
    fp32 = tolerances["float32"]
    stopped = (f"stopped at the first failing run ({check.stopped}): the candidate is rejected; the later launches, "
               f"seeds, stale and halves runs were not made") if check.stopped else None
    return {"atol": fp32["atol"], "rtol": fp32["rtol"], "tolerances": tolerances, "repeats": repeats, "runs": runs,
            "determinism": det, "stopped_early": stopped}


class _Check:
    """One check_launches call's runs, built seed by seed; copies of a launch state are made one or
    two at a time and dropped as soon as their comparison is done."""

    def __init__(self, run_base, run_cand, names, tolerances, repeats, sync, error_line, stored=(), stop_early=False):
        self.run_base, self.run_cand, self.names = run_base, run_cand, names
        self.stop_early, self.stopped = stop_early, None  # stopped: where the first failing run was, once stopped
        self.tolerances, self.repeats, self.sync, self.error_line = tolerances, repeats, sync, error_line
        self.model, self.stale, self.repeat = [], [], []
        self.written = {}  # (source, seed, launch) -> positions the original writes
        self.declared = declared_outputs(names, stored)  # outputs by name or by the original's stores
        self.det = {"repeats": repeats, "launches_checked": 0, "failures": [], "original_nondeterministic": []}

    def launched(self, run, start, kernel):
        """A fresh copy of start, kernel launched on it; None with run["error"] when it raised."""
        state = start.copy()
        try:
            with torch.no_grad():
                kernel(state)
            self.sync()
        except Exception as exc:
            if device_failure(exc):
                raise  # the device's, not the candidate's: the server answers it as such
            run["error"] = self.error_line(exc)
            return None
        return state

    def both(self, run, start, written=None, candidate=None):
        """The original and the candidate on fresh copies of start, compared into run["tensors"]:
        (expected, got), or None with run["error"] when a launch raised."""
        expected = self.launched(run, start, self.run_base)
        got = self.launched(run, start, candidate or self.run_cand) if expected is not None else None
        if got is None:
            return None
        run["tensors"] = compare_launch(start, expected, got, self.names, self.tolerances,
                                        self.declared | (written or set()))
        return expected, got

    def seed_runs(self, source, seed, states, previous):
        """One seed's model runs and repeats, then its stale runs from `previous` (seed, results);
        returns this seed's results: per launch, the tensors the original wrote, on the host."""
        results, loaded = {}, []
        for i, state in states:
            rec = _state(state)
            loaded.append((i, rec))
            run = {"seed": seed, "launch": i, "source": source, "error": None, "tensors": []}
            with phase("check.model_runs"):  # the original and the candidate on a copy each, compared
                pair = self.both(run, rec)
            self.model.append(run)
            if self.failed([run], f"{_label(seed, source)}, launch {i}"):
                return results
            if pair is None:
                continue
            expected, got = pair
            written = self.declared | {ev["position"] for ev in run["tensors"] if not ev.get("unchanged_by_original")}
            self.written[(source, seed, i)] = written
            with phase("check.results_to_host"):
                results[i] = [t.cpu() if position in written else None
                              for _, position, t in tensors(expected.args, expected.kwargs, self.names)]
            if self.repeats > 1:
                with phase("check.repeats"):
                    repeats = self.repeat_runs(seed, i, source, rec, expected, got)
                self.repeat.extend(repeats)
                if self.failed(repeats, f"{_label(seed, source)}, launch {i}, its repeats"):
                    return results
            del pair, expected, got
        if previous is not None:
            self.stale_runs(source, seed, loaded, previous)
        return results

    def stale_runs(self, source, seed, loaded, previous):
        """Each launch again, the tensors its original writes holding the previous seed's results."""
        other, earlier = previous
        for i, rec in loaded:
            written = self.written.get((source, seed, i))
            if other == seed or not written or i not in earlier:
                continue
            run = {"seed": seed, "launch": i, "source": "stale", "stale_from_seed": other, "error": None,
                   "tensors": [], "stale_source": source}
            with phase("check.stale"):
                self.both(run, stale_copy(rec, written, earlier[i], self.names), written)
            self.stale.append(run)
            if self.failed([run], f"the stale run of {_label(seed, source)} from seed {other}, launch {i}"):
                return

    def failed(self, runs, where):
        """With stop_early: whether runs (or the determinism verdict) failed; the first such place is kept."""
        if self.stop_early and self.stopped is None and (self.det["failures"] or not _all_passed(runs)):
            self.stopped = where
        return self.stopped is not None

    def repeat_runs(self, seed, i, source, rec, expected, got):
        """Launches 2..repeats of one record (launch 1 is the comparison run already done), the
        original's and then the candidate's, one copy at a time. Adds the verdict to det; returns
        the "repeat" runs to report (only where the original is not deterministic, or a launch raised)."""
        base_diff = cand_diff = None
        tolerance_runs = []
        for k in range(2, self.repeats + 1):
            run = {"seed": seed, "launch": i, "source": "repeat", "repeat": k, "error": None, "tensors": []}
            again = self.launched(run, rec, self.run_base)
            if again is None:
                return [run]
            bd = first_bit_difference(expected, again, self.names)
            if not bd:
                again = expected  # bit-identical: the first run stands in for it, one copy fewer held
            cand_again = self.launched(run, rec, self.run_cand)
            if cand_again is None:
                return [run]
            cd = first_bit_difference(got, cand_again, self.names)
            base_diff = base_diff or (bd and (k, bd))
            cand_diff = cand_diff or (cd and (k, cd))
            if bd or cd:  # this repeat's comparison may differ from launch 1's: kept for the fallback
                run["tensors"] = compare_launch(rec, again, cand_again, self.names, self.tolerances, self.declared)
                tolerance_runs.append(run)
            del again, cand_again
        where = f"{_label(seed, source)}, launch {i}"
        if base_diff:
            k, d = base_diff
            self.det["original_nondeterministic"].append(
                f"{where}: the original's repeat {k} differs from repeat 1 in {d['arg']} at {d['index']} "
                f"({d['later']} vs {d['first']})")
            return tolerance_runs
        self.det["launches_checked"] += 1
        if cand_diff:
            k, d = cand_diff
            self.det["failures"].append(
                f"non-deterministic: repeat {k} of {_label(seed, source)} differs from repeat 1 at {d['index']} "
                f"({d['later']} vs {d['first']}) in {d['arg']}, launch {i}; the original is bit-identical "
                f"across {self.repeats} repeats")
        return []


def _all_passed(runs):
    """No run raised and every tensor compared matched (the engine's own reading, done early)."""
    return all(run["error"] is None and all(
        t.get("mismatches", 1) == 0 and t.get("nan_mismatches", 1) == 0 and t.get("inf_mismatches", 1) == 0
        for t in run["tensors"]) for run in runs)
