"""Gate 3's evidence, output by output, for both input kinds: the candidate model's outputs against
the baseline's at the dtype's tolerance, and, where they differ, each against a float64 reference
(the engine then asks whether the candidate is at least as close to it as the baseline)."""
from kernelopt.gates.compare import compare_tensors, error_vs_reference, specials_vs_reference, tolerance_for
from kernelopt.worker.failures import device_failure


def compare_outputs(base_out, cand_out, tolerances, reference=None, error_line=None):
    """[evidence per output]; reference, when given, is a zero-argument callable returning the
    float64 outputs, called at most once and only when an output differs. With error_line, a
    reference that raises is recorded on the output ("reference_error") instead of failing the op."""
    outs, ref = [], None
    for i, (b, c) in enumerate(zip(base_out, cand_out)):
        a, r = tolerance_for(b.dtype, tolerances)
        ev = compare_tensors(c, b, a, r)
        out = {"index": i, "matches_baseline": ev["mismatches"] == 0 and ev["nan_mismatches"] == 0
               and ev["inf_mismatches"] == 0, "max_abs_diff": ev["max_abs_err"],
               "ref_err_baseline": None, "ref_err_candidate": None,
               "ref_special_baseline": None, "ref_special_candidate": None}
        if not out["matches_baseline"] and reference is not None:
            try:
                if ref is None:
                    ref = reference()
                if len(ref) == len(base_out) and ref[i].shape == b.shape:
                    out["ref_err_baseline"] = error_vs_reference(b, ref[i])
                    out["ref_err_candidate"] = error_vs_reference(c, ref[i])
                    out["ref_special_baseline"] = specials_vs_reference(b, ref[i])
                    out["ref_special_candidate"] = specials_vs_reference(c, ref[i])
            except Exception as exc:
                if error_line is None or device_failure(exc):
                    raise
                out["reference_error"] = error_line(exc)
        outs.append(out)
    return outs
