#include "verify/correctness_gate.hpp"

#include <cstdint>
#include <set>
#include <string>

#include <fmt/format.h>

namespace kernelopt::verify {
namespace {

using nlohmann::json;

std::int64_t int_at(const json& j, const char* key, std::int64_t fallback = 0) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<std::int64_t>() : fallback;
}

std::string text(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

// "seed 1" or "seed 1 (synthetic)"; a missing seed reads "seed ?".
std::string seed_label(const json& run) {
  const std::string seed = run.is_object() && run.contains("seed") ? text(run["seed"]) : "?";
  const std::string source = run.is_object() ? run.value("source", "") : "";
  if (source == "synthetic") return fmt::format("seed {} (synthetic)", seed);
  // the launch run again with its outputs holding another seed's results (an earlier call's answer)
  if (source == "stale") return fmt::format("seed {} (stale output)", seed);
  // a later launch on the same start, where the original itself differs between launches
  if (source == "repeat") return fmt::format("seed {} (repeat {})", seed, run.contains("repeat") ? text(run["repeat"]) : "?");
  // the candidate's programs in two launches, one half after the other: a race between programs shows here
  if (source == "halves") return fmt::format("seed {} ({})", seed, run.value("order", std::string("halves")));
  return fmt::format("seed {}", seed);
}

// One line describing a tensor's mismatches, e.g.
// "seed 0: out_ptr0 has 12 of 1000 elements mismatching (3 NaN, 0 Inf positions); first at [3, 7]: got 1.5, expected 1.25".
std::string mismatch_message(const json& run, const json& tensor) {
  std::string msg = fmt::format("{}: {} has {} of {} elements mismatching ({} NaN, {} Inf positions)",
                                seed_label(run), tensor.value("arg", std::string("?")),
                                int_at(tensor, "mismatches"), int_at(tensor, "numel"),
                                int_at(tensor, "nan_mismatches"), int_at(tensor, "inf_mismatches"));
  auto first = tensor.find("first_mismatches");
  if (first != tensor.end() && first->is_array() && !first->empty()) {
    const json& m = first->front();
    msg += fmt::format("; first at {}: got {}, expected {}", m.contains("index") ? m["index"].dump() : "?",
                       m.contains("got") ? text(m["got"]) : "?", m.contains("expected") ? text(m["expected"]) : "?");
  }
  return msg;
}

}  // namespace

Verdict correctness_gate(const json& check_result, const CorrectnessPolicy& policy) {
  Verdict v;
  v.gate = "correctness";
  json failures = json::array();
  json compared = json::array();
  std::set<json> model_seeds, all_seeds;  // seeds as sent (numbers), compared by value
  bool any_model = false;

  const json runs = check_result.is_object() ? check_result.value("runs", json::array()) : json::array();
  if (!runs.is_array() || runs.empty()) failures.push_back("nothing compared: the check produced no runs");

  for (const json& run : runs.is_array() ? runs : json::array()) {
    const json seed = run.is_object() ? run.value("seed", json()) : json();
    const bool from_model = run.is_object() && run.value("source", "") == "model";
    any_model = any_model || from_model;
    if (!seed.is_null()) {
      all_seeds.insert(seed);
      if (from_model) model_seeds.insert(seed);
    }

    if (run.is_object() && run.contains("error") && !run["error"].is_null()) {
      failures.push_back(fmt::format("launch {} failed on {}: {}", int_at(run, "launch"), seed_label(run),
                                     text(run["error"])));
      continue;
    }
    const json tensors = run.is_object() ? run.value("tensors", json::array()) : json::array();
    if (!tensors.is_array() || tensors.empty()) {
      failures.push_back(fmt::format("nothing compared on {} (launch {})", seed_label(run), int_at(run, "launch")));
      continue;
    }
    for (const json& t : tensors) {
      const bool bad = !t.is_object() || !t.contains("mismatches") || int_at(t, "mismatches", 1) != 0 ||
                       int_at(t, "nan_mismatches", 1) != 0 || int_at(t, "inf_mismatches", 1) != 0;
      compared.push_back({{"seed", run.value("seed", json())},
                          {"launch", run.value("launch", json())},
                          {"arg", t.is_object() ? t.value("arg", json()) : json()},
                          {"max_abs_err", t.is_object() ? t.value("max_abs_err", json()) : json()},
                          {"max_rel_err", t.is_object() ? t.value("max_rel_err", json()) : json()},
                          {"passed", !bad}});
      if (bad) failures.push_back(mismatch_message(run, t.is_object() ? t : json::object()));
    }
  }

  // repeats: the worker's own lines, e.g. "non-deterministic: repeat 2 of seed 0 differs from repeat 1 at [3, 7] (0 vs 0.25) ..."
  const json determinism = check_result.is_object() ? check_result.value("determinism", json()) : json();
  const json det_failures = determinism.is_object() ? determinism.value("failures", json::array()) : json::array();
  for (const json& f : det_failures.is_array() ? det_failures : json::array()) failures.push_back(text(f));
  const json nondet = determinism.is_object() ? determinism.value("original_nondeterministic", json::array()) : json::array();
  const std::size_t nondet_launches = nondet.is_array() ? nondet.size() : 0;

  const std::set<json>& seeds = any_model ? model_seeds : all_seeds;
  if (!runs.empty() && static_cast<int>(seeds.size()) < policy.min_seeds)
    failures.push_back(fmt::format("only {} distinct {}seed(s) ran; at least {} required", seeds.size(),
                                   any_model ? "model " : "", policy.min_seeds));

  v.passed = failures.empty();
  v.reason = v.passed ? fmt::format("all outputs match on {} seeds ({} tensor comparisons)", seeds.size(),
                                    compared.size())
                      : failures.front().get<std::string>();
  if (v.passed && determinism.is_object()) {
    const auto repeats = int_at(determinism, "repeats", 1);
    if (nondet_launches > 0)
      v.reason += fmt::format("; the original differs between its own {} launches on {} launch(es): there the "
                              "candidate's repeats were compared at tolerance only",
                              repeats, nondet_launches);
    else if (repeats > 1)
      v.reason += fmt::format("; bit-identical across {} repeats", repeats);
  }
  v.evidence = {{"atol", check_result.is_object() ? check_result.value("atol", json()) : json()},
                {"rtol", check_result.is_object() ? check_result.value("rtol", json()) : json()},
                {"seeds", json(std::vector<json>(seeds.begin(), seeds.end()))},
                {"min_seeds", policy.min_seeds},
                {"failures", failures},
                {"determinism", determinism},
                // the worker's check ends at the first failing run: the runs after it were not made
                {"stopped_early", check_result.is_object() ? check_result.value("stopped_early", json()) : json()},
                {"compared", compared}};
  return v;
}

}  // namespace kernelopt::verify
