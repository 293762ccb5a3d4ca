#include "agents/planner.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <utility>

#include <fmt/format.h>

namespace kernelopt::agents {
namespace {

int percent(double fraction) { return static_cast<int>(std::lround(fraction * 100.0)); }

// Splits `total` over `scores` proportionally, each share at least `floor_each`
// (water-filling: items whose proportional share falls below the floor get the
// floor and leave the pool), rounded by largest remainder; ties to the earlier item.
// Precondition: total >= floor_each * scores.size().
std::vector<int> split_budget(const std::vector<double>& scores, int total, int floor_each) {
  const std::size_t n = scores.size();
  std::vector<double> ideal(n, 0.0);
  std::vector<bool> floored(n, false);
  double pool = total;
  for (bool changed = true; changed;) {
    changed = false;
    double sum = 0;
    std::size_t open = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (!floored[i]) sum += scores[i], ++open;
    if (open == 0) break;
    for (std::size_t i = 0; i < n; ++i)
      if (!floored[i]) ideal[i] = sum > 0 ? pool * scores[i] / sum : pool / static_cast<double>(open);
    for (std::size_t i = 0; i < n; ++i)
      if (!floored[i] && ideal[i] < floor_each) {
        floored[i] = true;
        ideal[i] = floor_each;
        pool -= floor_each;
        changed = true;
      }
  }
  std::vector<int> out(n);
  int given = 0;
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = static_cast<int>(std::floor(ideal[i] + 1e-9));  // 1e-9: 3.9999999 from division is 4
    given += out[i];
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return ideal[a] - std::floor(ideal[a] + 1e-9) > ideal[b] - std::floor(ideal[b] + 1e-9);
  });
  for (std::size_t k = 0; given < total && k < n; ++k, ++given) ++out[order[k]];
  return out;
}

}  // namespace

nlohmann::json PlanItem::to_json() const {
  nlohmann::json j = {{"kernel", kernel}, {"score", score}, {"budget", budget}, {"why", why}};
  if (!strategy.empty()) j["strategy"] = strategy;
  return j;
}

std::vector<PlanItem> plan(const std::vector<KernelProfile>& profiles, int total_budget, const PlannerPolicy& policy) {
  std::vector<PlanItem> kept, skipped;
  for (const KernelProfile& p : profiles) {
    const double roof = std::clamp(p.roofline_fraction, 0.0, 1.0);
    PlanItem item{p.name, p.share * (1.0 - roof), 0, {}};
    const std::string facts = fmt::format("{:.1f}% of module time at {}% of roofline ({}-bound)", p.share * 100.0,
                                          percent(p.roofline_fraction), p.bound);
    if (p.share < policy.min_share) {
      item.why = fmt::format("skipped: {}; below the {:.1f}% minimum share", facts, policy.min_share * 100.0);
      skipped.push_back(std::move(item));
    } else if (p.roofline_fraction >= policy.max_roofline) {
      item.why = fmt::format("skipped: {}; at or above the {}% roofline ceiling", facts, percent(policy.max_roofline));
      skipped.push_back(std::move(item));
    } else {
      item.why = fmt::format("{}; score {:.4f}", facts, item.score);
      kept.push_back(std::move(item));
    }
  }
  const auto by_score = [](const PlanItem& a, const PlanItem& b) { return a.score > b.score; };
  std::stable_sort(kept.begin(), kept.end(), by_score);
  std::stable_sort(skipped.begin(), skipped.end(), by_score);

  const int min_budget = std::max(policy.min_budget, 0);
  const auto n = static_cast<long long>(kept.size());
  if (n > 0) {
    if (static_cast<long long>(total_budget) <= n * min_budget) {
      for (PlanItem& item : kept) item.budget = min_budget;
    } else {
      std::vector<double> scores;
      for (const PlanItem& item : kept) scores.push_back(item.score);
      const std::vector<int> budgets = split_budget(scores, total_budget, min_budget);
      for (std::size_t i = 0; i < kept.size(); ++i) kept[i].budget = budgets[i];
    }
  }
  kept.insert(kept.end(), std::make_move_iterator(skipped.begin()), std::make_move_iterator(skipped.end()));
  return kept;
}

}  // namespace kernelopt::agents
