// The sources of a kernel search's candidates. See search_strategies.hpp.
#include "engine/search_strategies.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "artifact/stitch.hpp"
#include "engine/agent_calls.hpp"
#include "engine/library_use.hpp"

using nlohmann::json;

namespace kernelopt::engine {

namespace {

/// Evidence trimmed for a prompt: the Repairer needs the first facts, not megabytes.
json trimmed(const json& evidence) {
  std::string text = evidence.dump();
  if (text.size() <= 4000) return evidence;
  return json(text.substr(0, 4000) + " ...(truncated)");
}

/// The answers of one LLM exchange as candidates; an answer that cannot be
/// read is a failed attempt the Repairer may still fix.
std::vector<Candidate> answers_to_candidates(SearchState& state, const AnswerBatch& batch, const std::string& origin,
                                             int round) {
  std::vector<Candidate> out = answer_candidates(state.target, batch.answers, origin, round);
  if (!batch.unreadable.empty()) {
    Candidate c;
    c.origin = origin;
    c.code = batch.raw;
    c.repair_round = round;
    state.reject_unbuildable(c, "unreadable answer: " + batch.unreadable);
  }
  return out;
}

std::optional<store::LibraryEntry> library_entry(const SearchTarget& t) {
  if (t.ctx.library == nullptr) return std::nullopt;
  auto m = t.ctx.fingerprints.find(t.module.index);
  if (m == t.ctx.fingerprints.end()) return std::nullopt;
  auto fp = m->second.find(t.kernel.name);
  if (fp == m->second.end()) return std::nullopt;
  try {
    auto entry = t.ctx.library->find(fp->second);
    if (entry && entry->input_kind == t.input.library_kind()) return entry;
  } catch (const store::StoreError& e) {
    spdlog::warn("  {}: the kernel library cannot be read ({}); searching without it", t.kernel.name, e.what());
  }
  return std::nullopt;
}

}  // namespace

std::vector<Candidate> LibraryReuse::next(SearchState& state, const std::vector<Candidate>&) {
  if (asked_) return {};
  asked_ = true;
  const SearchTarget& t = state.target;
  auto entry = library_entry(t);
  if (!entry) return {};
  Candidate c;
  c.origin = "library";
  c.library_id = entry->id;
  t.input.from_library(*entry, t.kernel.name, c);
  if (entry->grid.is_array()) c.grid = entry->grid.get<std::vector<std::string>>();
  c.notes = fmt::format("library entry {}, verified before at {:.3f}x on {} (run {})", entry->id, entry->speedup,
                        entry->device, entry->run_out_dir);
  spdlog::info("  {}: the kernel library has a winner for this fingerprint (entry {}, {:.3f}x): verifying it again",
               t.kernel.name, entry->id, entry->speedup);
  return {c};
}

std::vector<Candidate> LlmCoder::next(SearchState& state, const std::vector<Candidate>&) {
  if (coder_asked_) return repairer(state);
  coder_asked_ = true;
  return coder(state);
}

std::vector<Candidate> LlmCoder::coder(SearchState& state) {
  const SearchTarget& t = state.target;
  if (!t.llm_on(agents::Role::coder)) return {};
  const int n = std::min(t.ctx.options.coder_candidates, std::max(1, state.left()));
  spdlog::info("  {}: asking the Coder for {} candidate(s)", t.kernel.name, n);
  return answers_to_candidates(state, ask_coder(t.ctx, state.task, n), "coder", 0);
}

std::vector<Candidate> LlmCoder::repairer(SearchState& state) {
  const SearchTarget& t = state.target;
  if (!t.llm_on(agents::Role::repairer)) return {};
  std::vector<Candidate> fixed;
  auto pending = std::move(state.repairs);
  state.repairs.clear();
  for (const auto& r : pending) {
    if (state.left() - static_cast<int>(fixed.size()) <= 0) break;
    agents::KernelAnswer failed{r.candidate.code, r.candidate.config, r.candidate.grid, r.candidate.notes};
    agents::GateFailure why{r.verdict.gate, r.verdict.reason, trimmed(r.verdict.evidence)};
    spdlog::info("  {}: asking the Repairer to fix {} ({} gate)", t.kernel.name, r.candidate.label(), r.verdict.gate);
    if (auto batch = ask_repairer(t.ctx, state.task, failed, why)) {
      for (auto& c : answers_to_candidates(state, *batch, "repairer", r.candidate.repair_round + 1)) {
        fixed.push_back(std::move(c));
      }
    }
  }
  return fixed;
}

std::vector<Candidate> RewriteFamilies::next(SearchState& state, const std::vector<Candidate>&) {
  const SearchTarget& t = state.target;
  if (asked_ || !t.input.rewrites_and_tunes_code() || t.tunable.empty()) return {};
  asked_ = true;
  std::vector<Candidate> out;
  // the ATen ops let a family recognise what the kernel computes (lse_scan: logcumsumexp alone)
  worker::Reply r = t.ctx.ask("rewrite", {{"source", state.task.source},
                                          {"reduction_hint", t.kernel.reduction_hint},
                                          {"aten_ops", t.kernel.aten_ops}});
  if (!r.ok()) {
    spdlog::warn("  {}: the rewrite library failed: {}", t.kernel.name, r.error);
    return out;
  }
  for (const auto& s : r.result["skipped"]) {
    spdlog::debug("  {}: rewrite {} does not apply: {}", t.kernel.name, s["family"].get<std::string>(),
                  s["why"].get<std::string>());
  }
  state.out.rewrites_skipped = r.result["skipped"];  // the report's reasons for a kernel left under its roofline
  for (const auto& a : r.result["candidates"]) {
    Candidate c;
    c.origin = "rewrite";
    c.family = a.value("family", "");
    c.code = a["code"];
    c.notes = a["notes"].get<std::string>();  // names the family
    c.config = t.tunable;
    for (const auto& [k, v] : a["meta"].items()) c.config[k] = v;
    // the rewrite is written for these block sizes (the other meta-parameters may be tuned), and for those its
    // family says it asserts (outer_loop's XBLOCK: a Tuner config moving it failed to compile on the H100)
    c.pinned = json::object();
    const json family_pins = a.value("pinned", json::array());
    for (const auto& [k, v] : a["meta"].items()) {
      const bool asserted = std::find(family_pins.begin(), family_pins.end(), json(k)) != family_pins.end();
      if (asserted || (k != "num_warps" && k != "num_stages" && k != "XBLOCK")) c.pinned[k] = v;
    }
    spdlog::info("  {}: rewrite {}", t.kernel.name, c.notes);
    out.push_back(std::move(c));
  }
  return out;
}

TunerSweep::TunerSweep(const SearchTarget& target)
    : untunable_(target.input.untunable(target.kernel)) {}

std::vector<Candidate> TunerSweep::next(SearchState& state, const std::vector<Candidate>& batch) {
  if (swept_) return around_best(state);
  swept_ = true;
  return around_baseline(state, batch);
}

std::vector<Candidate> TunerSweep::around_baseline(SearchState& state, const std::vector<Candidate>& batch) {
  const SearchTarget& t = state.target;
  if (!untunable_.empty()) {
    spdlog::info("  {}: no launch configs to try: {}", t.kernel.name, untunable_);
    return {};
  }
  std::vector<json> configs;
  const int room = state.left() - static_cast<int>(batch.size());
  if (t.llm_on(agents::Role::tuner) && room > 0) {
    configs = ask_tuner(t.ctx, t.input.tuner_task(state.task), std::max(1, room));
  }
  std::vector<Candidate> tuned;
  if (configs.empty()) {
    // rewritten code in the batch: half of the room stays for tuning the best of it afterwards
    const bool code_first = std::any_of(batch.begin(), batch.end(), [](const Candidate& c) { return !c.code.empty(); });
    tuned = tuner_candidates(t, "", t.tunable, "tuner", code_first ? room - room / 2 : room);
  } else {
    for (const auto& cfg : configs) {
      Candidate c;
      c.origin = "tuner";
      c.config = t.input.own_config(cfg);
      tuned.push_back(std::move(c));
    }
  }
  if (t.baseline.is_null()) spdlog::info("  {}: the launcher reported no configuration to tune from", t.kernel.name);
  spdlog::info("  {}: {} config(s) to screen (baseline {})", t.kernel.name, tuned.size(),
               t.tunable.empty() ? std::string("?") : t.baseline_label());
  return tuned;
}

std::vector<Candidate> TunerSweep::around_best(SearchState& state) {
  const SearchTarget& t = state.target;
  // The best rewritten kernel (LLM or rewrite library) gets its launch config tuned too (the same code, other meta).
  auto best_it = std::max_element(state.passed.begin(), state.passed.end(), [&](const Candidate& a, const Candidate& b) {
    return state.speedup_of(a) < state.speedup_of(b);
  });
  if (best_it == state.passed.end() || best_it->code.empty() || !t.input.rewrites_and_tunes_code() ||
      state.left() <= 0) {
    return {};
  }
  Candidate best = *best_it;
  spdlog::info("  {}: tuning the launch config of {}", t.kernel.name, best.label());
  const bool offline = best.origin == "rewrite" || best.origin == "rewrite-tuner";
  std::vector<Candidate> tuned =
      tuner_candidates(t, best.code, best.config, offline ? "rewrite-tuner" : "llm-tuner", state.left(), best.pinned);
  for (auto& c : tuned) c.family = best.family;  // the same rewrite, other launch configs
  return tuned;
}

}  // namespace kernelopt::engine
