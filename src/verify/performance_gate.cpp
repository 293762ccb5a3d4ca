#include "verify/performance_gate.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "verify/stats.hpp"

namespace kernelopt::verify {
namespace {

using nlohmann::json;

json estimate_json(const SpeedupEstimate& e, double min_speedup) {
  return {{"speedup", e.speedup},
          {"ci_low", e.ci_low},
          {"ci_high", e.ci_high},
          {"confidence", e.confidence},
          {"baseline_median_ms", e.baseline_median},
          {"candidate_median_ms", e.candidate_median},
          {"n_baseline", e.n_baseline},
          {"n_candidate", e.n_candidate},
          {"min_speedup", min_speedup},
          {"faster_beyond_noise", e.faster_beyond_noise(min_speedup)}};
}

// "kernel 1.210x [1.180, 1.240]"
std::string describe(const char* what, const SpeedupEstimate& e) {
  return fmt::format("{} {:.3f}x [{:.3f}, {:.3f}]", what, e.speedup, e.ci_low, e.ci_high);
}

// Why an estimate does not clear its minimum: slower, within noise, or short of the required speedup.
std::string shortfall(const SpeedupEstimate& e, double min_speedup) {
  if (e.ci_high < 1.0) return "is slower";
  if (e.ci_low <= 1.0) return "is within noise";
  return fmt::format("does not clear the required {:.3f}x", min_speedup);
}

}  // namespace

Verdict performance_gate(const std::vector<double>& kernel_base_ms, const std::vector<double>& kernel_cand_ms,
                         const std::vector<double>& model_base_ms, const std::vector<double>& model_cand_ms,
                         const PerformancePolicy& policy) {
  Verdict v;
  v.gate = "performance";
  const std::pair<const char*, const std::vector<double>*> series[] = {
      {"kernel baseline", &kernel_base_ms}, {"kernel candidate", &kernel_cand_ms},
      {"model baseline", &model_base_ms},   {"model candidate", &model_cand_ms}};
  json counts = json::object();
  for (const auto& [name, samples] : series) counts[name] = samples->size();
  v.evidence = {{"samples", counts}, {"min_samples", policy.min_samples}, {"confidence", policy.confidence}};

  for (const auto& [name, samples] : series) {
    if (static_cast<int>(samples->size()) < policy.min_samples) {
      v.reason = fmt::format("too few samples: {} has {}, at least {} required", name, samples->size(),
                             policy.min_samples);
      return v;
    }
  }

  SpeedupEstimate kernel, model;
  try {
    kernel = estimate_speedup(kernel_base_ms, kernel_cand_ms, policy.confidence);
    model = estimate_speedup(model_base_ms, model_cand_ms, policy.confidence);
  } catch (const std::invalid_argument& e) {
    v.reason = fmt::format("bad timing samples: {}", e.what());
    return v;
  }
  v.evidence["kernel"] = estimate_json(kernel, policy.min_kernel_speedup);
  v.evidence["model"] = estimate_json(model, policy.min_model_speedup);

  const bool kernel_ok = kernel.faster_beyond_noise(policy.min_kernel_speedup);
  const bool model_ok = model.faster_beyond_noise(policy.min_model_speedup);
  v.passed = kernel_ok && model_ok;
  const std::string k = describe("kernel", kernel), m = describe("model", model);
  if (v.passed)
    v.reason = fmt::format("{} and {} are faster beyond noise", k, m);
  else if (kernel_ok)
    v.reason = fmt::format("{} but {} {}", k, m, shortfall(model, policy.min_model_speedup));
  else if (model_ok)
    v.reason = fmt::format("{} {} (although {})", k, shortfall(kernel, policy.min_kernel_speedup), m);
  else
    v.reason = fmt::format("{} {} and {} {}", k, shortfall(kernel, policy.min_kernel_speedup), m,
                           shortfall(model, policy.min_model_speedup));
  return v;
}

}  // namespace kernelopt::verify
