// The bench's aggregates over its rows. See bench.hpp.
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bench/bench.hpp"
#include "report/json_fields.hpp"
#include "verify/stats.hpp"

using nlohmann::json;

namespace kernelopt::bench {

using namespace report::fields;

namespace {

using Rows = std::vector<const json*>;

constexpr double kFastP[] = {1.0, 1.1, 1.5, 2.0};  // thresholds the field reports fast_p at

json median_or_null(std::vector<double> v) { return v.empty() ? json(nullptr) : json(verify::median(v)); }

json geomean_or_null(const std::vector<double>& v) {
  double logs = 0;
  for (double x : v) logs += std::log(x);
  return v.empty() ? json(nullptr) : json(std::exp(logs / v.size()));
}

json total_or_null(const std::vector<double>& v) {
  double t = 0;
  for (double x : v) t += x;
  return v.empty() ? json(nullptr) : json(t);
}

/// The numbers the rows hold under `key`, skipping rows without one.
std::vector<double> numbers(const Rows& rs, const char* key) {
  std::vector<double> out;
  for (const json* r : rs) {
    // number_or_null, not operator[]: a missing key on a const json is undefined behaviour
    if (const json v = number_or_null(*r, key); v.is_number()) out.push_back(v.get<double>());
  }
  return out;
}

/// Pairs of fractions (before, after) of the rows' "roofline" that have both (older rows have no "roofline").
std::pair<std::vector<double>, std::vector<double>> fraction_pairs(const Rows& rs, const char* before_key,
                                                                   const char* after_key) {
  std::vector<double> before, after;
  for (const json* r : rs) {
    const json& roof = member(*r, "roofline");
    const json b = number_or_null(roof, before_key), a = number_or_null(roof, after_key);
    if (b.is_number() && a.is_number()) {
      before.push_back(b.get<double>());
      after.push_back(a.get<double>());
    }
  }
  return {before, after};
}

/// Geomean speedup (a kept baseline counts 1.0), the status counts and fast_p.
json outcomes(const Rows& rs) {
  double log_sum = 0;
  int improved = 0, incorrect = 0, failed = 0, no_kernel = 0;
  for (const json* r : rs) {
    log_sum += std::log((*r)["speedup"].get<double>());
    improved += (*r)["status"] == "improved";
    incorrect += (*r)["status"] == "incorrect";
    failed += (*r)["status"] == "failed";
    no_kernel += r->value("triton_kernels", -1) == 0;
  }
  json fast = json::object();
  for (double p : kFastP) {
    int n = 0;
    for (const json* r : rs) n += (*r)["correct"] == true && (*r)["speedup"].get<double>() > p;
    fast[fmt::format("fast_{:.1f}", p)] = rs.empty() ? 0.0 : static_cast<double>(n) / rs.size();
  }
  return {{"problems", rs.size()}, {"geomean_speedup", rs.empty() ? 1.0 : std::exp(log_sum / rs.size())},
          {"improved", improved}, {"incorrect", incorrect}, {"failed", failed}, {"no_triton_kernel", no_kernel},
          {"fast_p", fast}};
}

/// Medians of the Triton kernels' bandwidth fractions and of the problems' end-to-end roofline fractions, each
/// over the rows that have both of its pair; how many problems are compute-bound.
json roofline_medians(const Rows& rs) {
  const auto [before, after] = fraction_pairs(rs, "fraction_before", "fraction_after");
  const auto [e2e_before, e2e_after] = fraction_pairs(rs, "e2e_fraction_before", "e2e_fraction_after");
  int compute_bound = 0;
  for (const json* r : rs) {
    const json& roof = member(*r, "roofline");
    if (roof.is_object()) compute_bound += roof.value("bound", json()) == "compute";
  }
  return {{"problems", before.size()},
          {"median_fraction_before", median_or_null(before)},
          {"median_fraction_after", median_or_null(after)},
          {"e2e_problems", e2e_before.size()},
          {"median_e2e_fraction_before", median_or_null(e2e_before)},
          {"median_e2e_fraction_after", median_or_null(e2e_after)},
          {"compute_bound", compute_bound}};
}

/// What the model call costs apart from the kernels: the ceiling's geomean, torch.compile's host time and the
/// speedup of the GPU time alone, over the rows that have each (older rows have none).
json limits(const Rows& rs) {
  const auto ceilings = numbers(rs, "ceiling"), host = numbers(rs, "host_ms");
  return {{"ceiling_problems", ceilings.size()},
          {"ceiling_geomean", geomean_or_null(ceilings)},
          {"host_problems", host.size()},
          {"median_host_ms", median_or_null(host)},
          {"gpu_geomean_speedup", geomean_or_null(numbers(rs, "gpu_speedup"))},
          {"gpu_ceiling_geomean", geomean_or_null(numbers(rs, "gpu_ceiling"))}};
}

/// Medians and totals of the seconds over the rows that have each figure (older rows have none of them).
json cost(const Rows& rs) {
  const auto gpu = numbers(rs, "gpu_s"), compile = numbers(rs, "compile_s"), wall = numbers(rs, "wall_s");
  int screened = 0, gated = 0;
  for (const json* r : rs) {
    screened += static_cast<int>(number_or(*r, "candidates_screened", 0));
    gated += static_cast<int>(number_or(*r, "candidates_gated", 0));
  }
  return {{"problems", gpu.size()},
          {"median_gpu_s", median_or_null(gpu)},
          {"total_gpu_s", total_or_null(gpu)},
          {"median_compile_s", median_or_null(compile)},
          {"total_compile_s", total_or_null(compile)},
          {"median_wall_s", median_or_null(wall)},
          {"total_wall_s", total_or_null(wall)},
          {"candidates_screened", screened},
          {"candidates_gated", gated}};
}

/// --decisions: the geomeans over the best torch.compile mode and of kernelopt without decisions, and which
/// decisions were kept; null when no row searched decisions.
json decisions_summary(const Rows& rs) {
  std::vector<double> vs_best, without, search;
  std::map<std::string, int> kept;
  int n = 0;
  for (const json* r : rs) {
    const json& d = member(*r, "decisions");  // an empty object when the row has none
    if (!d.is_object() || d.empty()) continue;
    ++n;
    kept[d.value("kept", "default")] += 1;
    if (const json v = number_or_null(d, "speedup_vs_best_mode"); v.is_number()) vs_best.push_back(v.get<double>());
    if (const json v = number_or_null(d, "search_s"); v.is_number()) search.push_back(v.get<double>());
    if (const json v = number_or_null(member(d, "without_decisions"), "speedup"); v.is_number()) {
      without.push_back(v.get<double>());
    }
  }
  if (n == 0) return nullptr;
  return {{"problems", n}, {"geomean_vs_best_mode", geomean_or_null(vs_best)}, {"vs_best_mode_problems", vs_best.size()},
          {"geomean_without_decisions", geomean_or_null(without)}, {"without_decisions_problems", without.size()},
          {"median_search_s", median_or_null(search)}, {"kept", kept}};
}

/// A kernel's reason for staying where it is: what the original's row passes read again, where that explains its
/// fraction; the search's verdict; then each rewrite family's own.
std::string reason_of(const json& k) {
  std::string why = string_or_empty(k, "why");
  if (why.empty()) {  // improved: say by what (the rewrite family, else the candidate's origin: tuner, llm, ...)
    const std::string family = string_or_empty(k, "family"), origin = string_or_empty(k, "origin");
    why = !family.empty() ? fmt::format("improved by the {} rewrite, still under the bar", family)
          : !origin.empty() ? fmt::format("improved by the {}, still under the bar", origin)
                            : "improved, still under the bar";
  }
  if (const json f = number_or_null(k, "roofline_with_rereads_before"); f.is_number()) {
    why = fmt::format("Inductor's kernel reads each row again in a later pass: {:.0f}% of the bandwidth counting "
                      "those reads; {}", 100 * f.get<double>(), why);
  }
  const json& skipped = member(k, "rewrites_skipped");
  for (const auto& s : skipped.is_array() ? skipped : json::array()) {
    why += fmt::format("; {}: {}", string_or_empty(s, "family"), string_or_empty(s, "why"));
  }
  return why;
}

json under_roofline(const Rows& rs) {
  json kernels = json::array();
  for (const json* r : rs) {
    const json& ks = member(*r, "kernels");
    if (!ks.is_array()) continue;
    double triton_ms = 0;
    for (const auto& k : ks) triton_ms += number_or(k, "before_ms", 0.0);
    for (const auto& k : ks) {
      const json after = number_or_null(k, "roofline_after");
      const double share = triton_ms > 0 ? number_or(k, "before_ms", 0.0) / triton_ms : 0.0;
      if (string_or_empty(k, "bound") != "memory" || !after.is_number() || share < kUnderRooflineShare ||
          after.get<double>() >= kUnderRooflineFraction) {
        continue;
      }
      kernels.push_back({{"problem", member(*r, "problem")}, {"kernel", string_or_empty(k, "name")}, {"share", share},
                         {"fraction_before", number_or_null(k, "roofline_before")}, {"fraction_after", after},
                         {"status", string_or_empty(k, "status")}, {"reason", reason_of(k)}});
    }
  }
  return {{"kernels", kernels.size()}, {"share_at_least", kUnderRooflineShare},
          {"fraction_under", kUnderRooflineFraction}, {"list", kernels}};
}

json summarize(const Rows& rs) {
  json out = outcomes(rs);
  out.update({{"roofline", roofline_medians(rs)}, {"limits", limits(rs)}, {"cost", cost(rs)},
              {"under_roofline", under_roofline(rs)}});
  if (json d = decisions_summary(rs); !d.is_null()) out["decisions"] = std::move(d);
  return out;
}

}  // namespace

json aggregate(const std::vector<json>& rows) {
  std::map<std::string, Rows> by_level;
  Rows all;
  for (const auto& r : rows) {
    by_level[r["level"].get<std::string>()].push_back(&r);
    if (r["level"] != kSmallLevel) all.push_back(&r);  // small/ problems: their own level only
  }
  json out = {{"overall", summarize(all)}, {"levels", json::object()}};
  for (const auto& [level, rs] : by_level) out["levels"][level] = summarize(rs);
  return out;
}

}  // namespace kernelopt::bench
