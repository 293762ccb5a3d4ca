/// \file
/// Gate 2, multi-seed correctness: decides from the worker's `check` result
/// (the candidate and the original kernel run on the buffers captured at the
/// kernel's launch sites, for several input seeds plus synthetic edge inputs,
/// every written tensor compared at dtype-aware tolerances) whether the
/// candidate computes what the original computes.
///
/// Contract: pure function; never throws on malformed input (missing fields
/// fail closed). Passes iff runs is non-empty, no run reports an error, every
/// run compared at least one tensor, every tensor has zero mismatches, zero
/// NaN-position and zero Inf-position mismatches, and at least `min_seeds`
/// distinct seeds were run with source "model" (or among all runs when none is
/// from the model), and `determinism.failures` is empty (the worker launches
/// each launch R times; where the original's results are bit-identical across
/// them, the candidate's must be too). The reason names the first failure;
/// evidence lists all.
#pragma once

#include <nlohmann/json.hpp>

#include "verify/verdict.hpp"

namespace kernelopt::verify {

struct CorrectnessPolicy {
  /// Distinct input seeds required: one seed can agree by accident (e.g. a
  /// candidate that ignores a mask only misbehaves on some data); three is the
  /// field's usual "several random input sets".
  int min_seeds = 3;
};

/// check_result: {"atol", "rtol", "runs": [{"seed", "launch", "source":
/// "model"|"synthetic"|"stale" (the launch again with its outputs holding
/// another seed's results, as an earlier call leaves them)|"repeat" (a later
/// launch on the same start, compared at tolerance where the original itself
/// is not deterministic; with "repeat": k), "error": null|string, "tensors": [{"arg", "position",
/// "dtype", "numel", "mismatches", "nan_mismatches", "inf_mismatches",
/// "max_abs_err", "max_rel_err", "first_mismatches": [{"index", "got",
/// "expected"}]}]}], "determinism" (optional): {"repeats", "launches_checked",
/// "failures": [reason lines], "original_nondeterministic": [lines], "note"}}.
Verdict correctness_gate(const nlohmann::json& check_result, const CorrectnessPolicy& policy = {});

}  // namespace kernelopt::verify
