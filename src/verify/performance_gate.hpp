/// \file
/// Gate 4, performance: decides from timing samples (CUDA events, L2 flushed,
/// candidate interleaved with the baseline; see shared GPU.md) whether the
/// candidate is faster beyond noise, both for the kernel alone and for the
/// whole model call. Both must hold: a kernel win that does not show end to
/// end is noise or an artefact of measuring the kernel out of context.
///
/// Contract: pure function; never throws (bad samples become a failing
/// verdict). Samples are durations in ms, all finite and > 0. Passes iff every
/// series has at least `min_samples` samples and, for both kernel and model,
/// the lower end of the bootstrap interval of baseline/candidate median ratio
/// (verify/stats.hpp) exceeds its minimum speedup. evidence.kernel and
/// evidence.model carry speedup, ci_low, ci_high, medians, confidence and n.
#pragma once

#include <vector>

#include "verify/verdict.hpp"

namespace kernelopt::verify {

struct PerformancePolicy {
  double min_kernel_speedup = 1.0;  // the kernel's ci_low must exceed this
  double min_model_speedup = 1.0;   // the model's ci_low must exceed this
  double confidence = 0.95;         // coverage of the bootstrap interval
  int min_samples = 10;             // per series; fewer makes the interval's tails meaningless
};

Verdict performance_gate(const std::vector<double>& kernel_base_ms, const std::vector<double>& kernel_cand_ms,
                         const std::vector<double>& model_base_ms, const std::vector<double>& model_cand_ms,
                         const PerformancePolicy& policy = {});

}  // namespace kernelopt::verify
