// One kernel through the strategies and the four gates. See kernel_search.hpp.
#include "engine/kernel_search.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine/gate_pipeline.hpp"
#include "engine/search_strategies.hpp"

using nlohmann::json;

namespace kernelopt::engine {

namespace {

/// Who wrote a kept kernel, in the report's words.
std::string origin_words(const std::string& origin) {
  if (origin == "llm-tuner") return "Coder, then tuned";
  if (origin == "rewrite") return "rewrite library";
  if (origin == "rewrite-tuner") return "rewrite library, then tuned";
  return origin;
}

class KernelSearch {
 public:
  KernelSearch(Context& ctx, const artifact::Module& module, const artifact::Kernel& kernel, json baseline_config,
               int budget, const agents::KernelProfile& profile, const std::string& strategy)
      : target_(ctx, module, kernel, std::move(baseline_config)),
        state_(target_, kernel_task(target_, profile, strategy), budget) {}

  report::KernelOutcome run();

 private:
  /// The library's winner for this kernel through all four gates; true if it passed.
  bool try_library(GatePipeline& gates);
  /// Round 1 (Coder, rewrite library, Tuner), the Repairer's rounds, then the best rewritten
  /// kernel's launch config. False (out.why set) when there was no candidate at all.
  bool search_rounds(GatePipeline& gates);
  /// Why round 1 had no candidate.
  std::string no_candidate_why(const std::string& untunable) const;
  /// The outcome: the fastest candidate that passed every gate is kept, else why the baseline stays.
  report::KernelOutcome decide();

  SearchTarget target_;
  SearchState state_;
};

bool KernelSearch::try_library(GatePipeline& gates) {
  LibraryReuse library;
  std::vector<Candidate> entry = library.next(state_, {});
  if (entry.empty()) return false;
  const std::int64_t id = entry.front().library_id;
  const size_t before = state_.passed.size();
  try {
    gates.evaluate(std::move(entry));
  } catch (const artifact::ArtifactError& e) {  // an entry whose text cannot be stitched: not used
    spdlog::warn("    library entry {} cannot be stitched: {}", id, e.what());
    state_.out.attempts.push_back({{"origin", "library"}, {"label", fmt::format("library entry {}", id)},
                                   {"gate", "static"}, {"passed", false}, {"reason", e.what()}});
    return false;
  }
  if (state_.passed.size() > before) return true;
  spdlog::info("  {}: the library's winner did not pass this run's gates; searching as usual", target_.kernel.name);
  return false;
}

std::string KernelSearch::no_candidate_why(const std::string& untunable) const {
  const auto& kernel = target_.kernel;
  if (!untunable.empty()) {
    return fmt::format("no candidate: the Tuner leaves {} alone ({}){}", kernel.name, untunable,
                       target_.llm_on(agents::Role::coder) ? "" : "; configure an LLM (--llm) to rewrite it");
  }
  return target_.input.no_tuning_space(kernel);
}

bool KernelSearch::search_rounds(GatePipeline& gates) {
  LlmCoder llm;
  RewriteFamilies rewrites;
  TunerSweep tuner(target_);
  // Round 1: the Coder (LLM), the rewrite library and the Tuner's configs around the baseline.
  std::vector<Candidate> first;
  for (SearchStrategy* strategy : {static_cast<SearchStrategy*>(&llm), static_cast<SearchStrategy*>(&rewrites),
                                   static_cast<SearchStrategy*>(&tuner)}) {
    for (auto& c : strategy->next(state_, first)) first.push_back(std::move(c));
  }
  if (first.empty()) {
    state_.out.why = no_candidate_why(tuner.untunable());
    return false;
  }
  gates.evaluate(std::move(first));
  // Repair rounds: each failed LLM candidate goes back to the Repairer with its gate failure.
  for (int round = 1; round <= target_.ctx.options.repair_rounds && !state_.repairs.empty() && state_.left() > 0;
       ++round) {
    std::vector<Candidate> fixed = llm.next(state_, {});
    if (fixed.empty()) break;
    gates.evaluate(std::move(fixed));
  }
  if (std::vector<Candidate> tuned = tuner.next(state_, {}); !tuned.empty()) gates.evaluate(std::move(tuned));
  return true;
}

report::KernelOutcome KernelSearch::decide() {
  auto& out = state_.out;
  const Candidate* best = nullptr;
  for (const auto& c : state_.passed) {
    if (best == nullptr || state_.speedup_of(c) > state_.speedup_of(*best)) best = &c;
  }
  if (best == nullptr) {
    std::string tally;
    for (const auto& [gate, n] : out.rejected_by) tally += fmt::format("{}{} by {}", tally.empty() ? "" : ", ", n, gate);
    out.why = out.screened == 0 && out.rejected_by.empty()
                  ? "no candidate could be evaluated"
                  : fmt::format("no candidate passed all four gates ({} evaluated{}{})", state_.used,
                                tally.empty() ? "" : "; rejected ", tally);
    if (state_.out_of_time) {
      out.why += fmt::format("; the kernel search's {} s were spent (--search-seconds)",
                             target_.ctx.options.search_seconds);
    }
    return out;
  }
  target_.ctx.store.set_candidate_status(best->record.id, "kept");
  out.status = "improved";
  out.winner_config = best->config;
  out.winner_source = best->kernel_source;
  out.winner_origin = best->origin;
  out.winner_family = best->family;
  out.winner_code = best->code;
  out.winner_grid = best->grid.empty() ? json(nullptr) : json(best->grid);
  out.library_entry = best->library_id;
  out.kernel_speedup = state_.estimate_of(*best);
  out.after_ms = out.kernel_speedup.candidate_median;
  const std::string stopped = state_.out_of_time ? fmt::format(" (the kernel search's {} s were spent: the best that "
                                                                "passed before)", target_.ctx.options.search_seconds)
                                                  : "";
  out.why = best->origin == "library"
                ? fmt::format("from the library (verified again): {}", best->notes)
            : best->code.empty()
                ? fmt::format("launch config {} (was {})", best->label(), target_.baseline_label())
                : fmt::format("rewritten by the {} ({}){}", origin_words(best->origin),
                              best->label(), best->notes.empty() ? "" : ": " + best->notes);
  out.why += stopped;
  return out;
}

report::KernelOutcome KernelSearch::run() {
  state_.out.status = "kept baseline";
  GatePipeline gates(state_);  // reads the original kernel's facts first
  // The library first: a winner verified for this exact kernel before, verified again here.
  // When it passes, the search ends with it (it already was the best of a search of this kernel).
  const bool from_library = try_library(gates);
  if (!from_library && !search_rounds(gates)) return state_.out;
  return decide();
}

}  // namespace

report::KernelOutcome search_kernel(Context& ctx, const artifact::Module& module, const artifact::Kernel& kernel,
                                    const json& baseline_config, int budget, const agents::KernelProfile& profile,
                                    const std::string& strategy) {
  KernelSearch search(ctx, module, kernel, baseline_config, budget, profile, strategy);
  return search.run();
}

}  // namespace kernelopt::engine
