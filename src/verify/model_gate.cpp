#include "verify/model_gate.hpp"

#include <cmath>
#include <cstdint>
#include <set>
#include <string>

#include <fmt/format.h>

namespace kernelopt::verify {
namespace {

using nlohmann::json;

std::string text(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

bool is_finite_number(const json& j) { return j.is_number() && std::isfinite(j.get<double>()); }

/// One output of a model run: passed when it matches the baseline; where it differs, judged against the float64
/// reference (its error within policy of the baseline's, and no more NaN/Inf positions than the baseline's).
/// Fills `record`; adds a failure line where it fails; counts the outputs judged against float64.
void judge_output(const json& out, const std::string& where, const ModelPolicy& policy, json& record, json& failures,
                  int& fallbacks) {
  if (out.is_object() && out.value("matches_baseline", false)) {
    record["passed"] = true;
    record["how"] = "matches baseline";
  } else {
    const json base = out.is_object() ? out.value("ref_err_baseline", json()) : json();
    const json cand = out.is_object() ? out.value("ref_err_candidate", json()) : json();
    // NaN/Inf where float64 has none (or the reverse): the finite error above cannot see them
    const json base_specials = out.is_object() ? out.value("ref_special_baseline", json()) : json();
    const json cand_specials = out.is_object() ? out.value("ref_special_candidate", json()) : json();
    const bool more_specials = base_specials.is_number_integer() && cand_specials.is_number_integer() &&
                               cand_specials.get<std::int64_t>() > base_specials.get<std::int64_t>();
    if (more_specials) {
      record["passed"] = false;
      record["how"] = "fell back to float64";
      record["ref_special_baseline"] = base_specials;
      record["ref_special_candidate"] = cand_specials;
      failures.push_back(fmt::format("{}: {} NaN/Inf positions differ from float64 (the baseline's: {})", where,
                                     cand_specials.get<std::int64_t>(), base_specials.get<std::int64_t>()));
    } else if (is_finite_number(base) && is_finite_number(cand)) {
      const double limit = policy.max_error_ratio * base.get<double>() + policy.abs_slack;
      const bool ok = cand.get<double>() <= limit;
      ++fallbacks;
      record["passed"] = ok;
      record["how"] = "fell back to float64";
      record["ref_err_baseline"] = base;
      record["ref_err_candidate"] = cand;
      record["limit"] = limit;
      if (!ok)
        failures.push_back(fmt::format(
            "{}: error vs float64 {:.3g} exceeds {:g} x the baseline's {:.3g} + {:g} (limit {:.3g})", where,
            cand.get<double>(), policy.max_error_ratio, base.get<double>(), policy.abs_slack, limit));
    } else {
      record["passed"] = false;
      record["how"] = "differs from baseline and no float64 reference";
      failures.push_back(fmt::format("{} differs from baseline (max abs diff {}) and no float64 reference",
                                     where, out.is_object() ? text(out.value("max_abs_diff", json())) : "?"));
    }
  }
}

}  // namespace

Verdict model_gate(const json& model_check, const ModelPolicy& policy) {
  Verdict v;
  v.gate = "model";
  json failures = json::array();
  json outputs = json::array();
  std::set<json> seeds;
  int fallbacks = 0;

  const json runs = model_check.is_object() ? model_check.value("runs", json::array()) : json::array();
  if (!runs.is_array() || runs.empty()) failures.push_back("nothing compared: the model check produced no runs");

  for (const json& run : runs.is_array() ? runs : json::array()) {
    const json seed = run.is_object() ? run.value("seed", json()) : json();
    const std::string label = "seed " + (seed.is_null() ? std::string("?") : text(seed));
    if (!seed.is_null()) seeds.insert(seed);
    if (run.is_object() && run.contains("error") && !run["error"].is_null()) {
      failures.push_back(fmt::format("model run failed on {}: {}", label, text(run["error"])));
      continue;
    }
    const json outs = run.is_object() ? run.value("outputs", json::array()) : json::array();
    if (!outs.is_array() || outs.empty()) {
      failures.push_back(fmt::format("no model outputs compared on {}", label));
      continue;
    }
    for (const json& out : outs) {
      const json index = out.is_object() ? out.value("index", json()) : json();
      json record = {{"seed", seed}, {"index", index},
                     {"max_abs_diff", out.is_object() ? out.value("max_abs_diff", json()) : json()}};
      const std::string where = fmt::format("{} output {}", label, index.is_null() ? "?" : text(index));
      judge_output(out, where, policy, record, failures, fallbacks);
      outputs.push_back(std::move(record));
    }
  }

  if (!runs.empty() && static_cast<int>(seeds.size()) < policy.min_seeds)
    failures.push_back(
        fmt::format("only {} distinct seed(s) ran; at least {} required", seeds.size(), policy.min_seeds));

  v.passed = failures.empty();
  v.reason = v.passed ? fmt::format("model outputs agree on {} seeds ({} output(s) judged against float64)",
                                    seeds.size(), fallbacks)
                      : failures.front().get<std::string>();
  v.evidence = {{"seeds", json(std::vector<json>(seeds.begin(), seeds.end()))},
                {"min_seeds", policy.min_seeds},
                {"max_error_ratio", policy.max_error_ratio},
                {"abs_slack", policy.abs_slack},
                {"failures", failures},
                {"outputs", outputs}};
  return v;
}

}  // namespace kernelopt::verify
