/// \file
/// Gate 3, model-level check with float64 fallback: decides from the worker's
/// `model` result (the re-stitched module against the compiled baseline on
/// several input seeds) whether the candidate keeps the model's outputs. An
/// output that differs from the baseline beyond tolerance is judged against a
/// float64 eager reference: the candidate may be no less accurate than the
/// baseline, within `max_error_ratio` (a reassociated reduction legitimately
/// differs from Inductor's order, but must not drift further from the truth).
///
/// Contract: pure function; never throws on malformed input (missing fields
/// fail closed). Fails on an empty run list, any run error, a run without
/// outputs, fewer than `min_seeds` distinct seeds, or any failing output.
/// evidence.outputs records per output how it passed ("matches baseline" or
/// "fell back to float64") or why not.
#pragma once

#include <nlohmann/json.hpp>

#include "verify/verdict.hpp"

namespace kernelopt::verify {

struct ModelPolicy {
  double max_error_ratio = 1.0;  // candidate's error vs float64 may be at most this times the baseline's
  double abs_slack = 1e-7;       // absolute floor for near-zero baseline errors (about fp32 epsilon on O(1) values)
  int min_seeds = 3;             // distinct input seeds, as in the correctness gate
};

/// model_check: {"runs": [{"seed", "error": null|string, "outputs": [{"index",
/// "matches_baseline", "max_abs_diff", "ref_err_baseline": number|null,
/// "ref_err_candidate": number|null, "ref_special_baseline": int|null,
/// "ref_special_candidate": int|null}]}]}. The ref_err_* errors cover finite
/// elements only; ref_special_* count elements whose NaN/Inf status differs
/// from float64's, and a candidate with more of them than the baseline fails.
Verdict model_gate(const nlohmann::json& model_check, const ModelPolicy& policy = {});

}  // namespace kernelopt::verify
