"""Tensor comparison with dtype-aware tolerances; the evidence the correctness gates read.

An element mismatches when |got - expected| > atol + rtol * |expected|, or when
their NaN or ±Inf status differs. The engine decides pass/fail from these
numbers; this module only measures.
"""
import torch

FIRST_MISMATCHES = 5  # enough for a repair prompt or a human to see the pattern


CHUNK = 1 << 24  # elements compared at once: float64 work of a few hundred MB, whatever the tensor's size


def chunk_pairs(a, b, chunk=None):
    """(offset, a part, b part) over two tensors of one shape, flattened in row-major order, chunk
    elements at a time: comparisons of a 6-16 GB tensor hold float64 temporaries of one chunk, not of
    the whole (a non-contiguous tensor is made contiguous first: one copy of it)."""
    chunk = chunk or CHUNK
    fa, fb = a.reshape(-1), b.reshape(-1)
    for at in range(0, fa.numel(), chunk):
        yield at, fa[at:at + chunk], fb[at:at + chunk]


def compare_tensors(got, expected, atol, rtol, round_expected_to=None):
    """Evidence dict comparing two tensors of the same shape, chunk by chunk (chunk_pairs). With
    round_expected_to (a dtype), expected (a float64 reference) is compared as rounded to that dtype,
    one chunk at a time, instead of needing a rounded copy of the whole."""
    dtype = round_expected_to or expected.dtype
    ev = {"dtype": str(dtype).replace("torch.", ""), "numel": expected.numel(),
          "shape": list(expected.shape), "mismatches": 0, "nan_mismatches": 0,
          "inf_mismatches": 0, "max_abs_err": 0.0, "max_rel_err": 0.0, "first_mismatches": []}
    if got.shape != expected.shape or got.dtype != dtype:
        ev["mismatches"] = expected.numel()
        ev["error"] = f"shape/dtype {tuple(got.shape)}/{got.dtype} != {tuple(expected.shape)}/{dtype}"
        return ev
    for at, g, e in chunk_pairs(got, expected):
        if round_expected_to is not None:
            e = e.to(round_expected_to)
        bad = _compare_chunk(ev, g, e, atol, rtol)
        if len(ev["first_mismatches"]) < FIRST_MISMATCHES and bool(bad.any()):
            _first(ev, at, bad, g, e, expected.shape)
    return ev


def _compare_chunk(ev, got, expected, atol, rtol):
    """Adds one chunk's counts and maxima to ev; returns its mask of mismatching elements."""
    if not expected.is_floating_point():
        bad = got != expected
        ev["mismatches"] += int(bad.sum())
        return bad
    g, e = got.double(), expected.double()
    g_nan, e_nan = torch.isnan(g), torch.isnan(e)
    g_inf, e_inf = torch.isinf(g), torch.isinf(e)
    nan_bad = g_nan != e_nan
    inf_bad = (g_inf != e_inf) | (g_inf & e_inf & (torch.sign(g) != torch.sign(e)))
    finite = ~(g_nan | e_nan | g_inf | e_inf)
    diff = torch.where(finite, (g - e).abs(), torch.zeros_like(g))
    del g
    bad = finite & (diff > atol + rtol * e.abs())
    rel = torch.where(finite, diff / e.abs().clamp_min(1e-30), torch.zeros_like(diff))
    ev["nan_mismatches"] += int(nan_bad.sum())
    ev["inf_mismatches"] += int(inf_bad.sum())
    ev["mismatches"] += int(bad.sum())
    if diff.numel():
        ev["max_abs_err"] = max(ev["max_abs_err"], float(diff.max()))
        ev["max_rel_err"] = max(ev["max_rel_err"], float(rel.max()))
    return bad | nan_bad | inf_bad


def _first(ev, at, bad, got, expected, shape):
    """The first mismatches of a chunk starting at flat offset `at`, as indices into the whole shape."""
    for flat in bad.nonzero().reshape(-1)[:FIRST_MISMATCHES - len(ev["first_mismatches"])].tolist():
        index = list(_unravel(at + flat, shape))
        ev["first_mismatches"].append({"index": index, "got": _num(got[flat]), "expected": _num(expected[flat])})


def _unravel(flat, shape):
    out = []
    for size in reversed(list(shape)):
        out.append(flat % size if size else 0)
        flat //= max(size, 1)
    return tuple(reversed(out))


def _num(x):
    v = x.item()
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return str(v)
    return v


def tolerance_for(dtype, tolerances):
    """(atol, rtol) for a dtype from the engine's table ({"float32": {"atol", "rtol"}, "float16": ...,
    "bfloat16": ...}: the engine decides them, the worker only looks them up): the dtype's own entry,
    float32's for another floating dtype, exact for integers and booleans."""
    if not dtype.is_floating_point:
        return 0.0, 0.0
    entry = tolerances.get(str(dtype).replace("torch.", "")) or tolerances["float32"]
    return entry["atol"], entry["rtol"]


def error_vs_reference(out, ref):
    """max |out - ref| over finite elements, computed in float64, chunk by chunk."""
    worst = 0.0
    for _, o, r in chunk_pairs(out, ref):
        d = (o.double() - r.double()).abs()
        d = torch.where(torch.isfinite(d), d, torch.zeros_like(d))
        if d.numel():
            worst = max(worst, float(d.max()))
    return worst


def specials_vs_reference(out, ref):
    """Elements whose NaN or +-Inf status differs from the reference's: error_vs_reference skips
    non-finite elements, so an Inf where the reference is finite is counted here instead."""
    count = 0
    for _, o, r in chunk_pairs(out, ref):
        o, r = o.double(), r.double()
        nan_bad = torch.isnan(o) != torch.isnan(r)
        inf_bad = (torch.isinf(o) != torch.isinf(r)) | (torch.isinf(o) & torch.isinf(r) & (torch.sign(o) != torch.sign(r)))
        count += int((nan_bad | inf_bad).sum())
    return count
