"""Tensor comparison with dtype-aware tolerances; the evidence the correctness gates read.

An element mismatches when |got - expected| > atol + rtol * |expected|, or when
their NaN or ±Inf status differs. The engine decides pass/fail from these
numbers; this module only measures.
"""
import torch

FIRST_MISMATCHES = 5  # enough for a repair prompt or a human to see the pattern


def compare_tensors(got, expected, atol, rtol):
    """Evidence dict comparing two tensors of the same shape."""
    ev = {"dtype": str(expected.dtype).replace("torch.", ""), "numel": expected.numel(),
          "shape": list(expected.shape), "mismatches": 0, "nan_mismatches": 0,
          "inf_mismatches": 0, "max_abs_err": 0.0, "max_rel_err": 0.0, "first_mismatches": []}
    if got.shape != expected.shape or got.dtype != expected.dtype:
        ev["mismatches"] = expected.numel()
        ev["error"] = f"shape/dtype {tuple(got.shape)}/{got.dtype} != {tuple(expected.shape)}/{expected.dtype}"
        return ev
    if not expected.is_floating_point():
        bad = got != expected
        ev["mismatches"] = int(bad.sum())
        _first(ev, bad, got, expected)
        return ev
    g, e = got.double(), expected.double()
    g_nan, e_nan = torch.isnan(g), torch.isnan(e)
    g_inf, e_inf = torch.isinf(g), torch.isinf(e)
    nan_bad = g_nan != e_nan
    inf_bad = (g_inf != e_inf) | (g_inf & e_inf & (torch.sign(g) != torch.sign(e)))
    finite = ~(g_nan | e_nan | g_inf | e_inf)
    diff = torch.where(finite, (g - e).abs(), torch.zeros_like(g))
    rel = diff / e.abs().clamp_min(1e-30)
    bad = finite & (diff > atol + rtol * e.abs())
    ev["nan_mismatches"] = int(nan_bad.sum())
    ev["inf_mismatches"] = int(inf_bad.sum())
    ev["mismatches"] = int(bad.sum())
    ev["max_abs_err"] = float(diff.max()) if diff.numel() else 0.0
    ev["max_rel_err"] = float(torch.where(finite, rel, torch.zeros_like(rel)).max()) if rel.numel() else 0.0
    _first(ev, bad | nan_bad | inf_bad, got, expected)
    return ev


def _first(ev, bad, got, expected):
    if not bool(bad.any()):
        return
    idx = bad.nonzero()[:FIRST_MISMATCHES]
    for row in idx.tolist():
        t = tuple(row)
        ev["first_mismatches"].append({"index": row, "got": _num(got[t]), "expected": _num(expected[t])})


def _num(x):
    v = x.item()
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return str(v)
    return v


def tolerance_for(dtype, atol_fp32, rtol_fp32):
    """(atol, rtol) for a dtype: the fp32 pair given by the engine, 1e-2 for half types, exact for ints."""
    if dtype in (torch.float16, torch.bfloat16):
        return 1e-2, 1e-2
    if dtype.is_floating_point:
        return atol_fp32, rtol_fp32
    return 0.0, 0.0


def error_vs_reference(out, ref):
    """max |out - ref| over finite elements, computed in float64."""
    d = (out.double() - ref.double()).abs()
    d = torch.where(torch.isfinite(d), d, torch.zeros_like(d))
    return float(d.max()) if d.numel() else 0.0


def specials_vs_reference(out, ref):
    """Elements whose NaN or +-Inf status differs from the reference's: error_vs_reference skips
    non-finite elements, so an Inf where the reference is finite is counted here instead."""
    o, r = out.double(), ref.double()
    nan_bad = torch.isnan(o) != torch.isnan(r)
    inf_bad = (torch.isinf(o) != torch.isinf(r)) | (torch.isinf(o) & torch.isinf(r) & (torch.sign(o) != torch.sign(r)))
    return int((nan_bad | inf_bad).sum())
