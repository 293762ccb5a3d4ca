/// \file
/// The offline Planner agent: decides which kernels to attack, in what order,
/// and with how many candidate evaluations each. Amdahl: a kernel's possible
/// gain is its share of the module's time times its headroom under the
/// roofline, so score = share × (1 − min(roofline_fraction, 1)).
///
/// Contract: pure and deterministic; never throws. Every profiled kernel is
/// listed once. Kept kernels come first, by score descending (ties keep input
/// order), each with budget >= min_budget; then skipped kernels (below
/// min_share, or at/above max_roofline) with budget 0 and a `why` saying so.
/// Kept budgets are proportional to score and sum to total_budget when
/// total_budget >= kept × min_budget, else each kept kernel gets min_budget.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/profiler.hpp"

namespace kernelopt::agents {

struct PlannerPolicy {
  double min_share = 0.01;     // below 1% of module time even an infinite speedup gains < 1% end to end
  double max_roofline = 0.97;  // at >= 97% of the roofline what is left is within measurement noise
  int min_budget = 4;          // fewer evaluations than this cannot get past a first failed attempt and a repair
};

struct PlanItem {
  std::string kernel;
  double score = 0;  // share × headroom, 0..1
  int budget = 0;    // candidate evaluations; 0 = skipped
  std::string why;   // one line
  std::string strategy;  // what to try (the LLM Planner's words); "" = the Coder chooses


  nlohmann::json to_json() const;
};

std::vector<PlanItem> plan(const std::vector<KernelProfile>& profiles, int total_budget,
                           const PlannerPolicy& policy = {});

}  // namespace kernelopt::agents
