/// \file
/// Where a kernel search's candidates come from, each behind one interface: the
/// kernel library (a winner verified before for the same fingerprint), the LLM
/// Coder and Repairer, the offline rewrite library's families, and the Tuner's
/// launch configs. The search (kernel_search.cpp) decides when each is asked and
/// sends what they give through the gates (gate_pipeline.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/search_state.hpp"
#include "store/library.hpp"

namespace kernelopt::engine {

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  /// The strategy's next candidates, given the batch gathered so far for the same evaluation (a strategy
  /// may size itself by what came before it); empty = nothing (more) to try.
  virtual std::vector<Candidate> next(SearchState& state, const std::vector<Candidate>& batch) = 0;
};

/// The library's entry for the kernel's exact fingerprint and input kind, once, renamed to this module's
/// kernel (origin "library"). A library that cannot be read is skipped with a warning.
class LibraryReuse final : public SearchStrategy {
 public:
  std::vector<Candidate> next(SearchState& state, const std::vector<Candidate>& batch) override;

 private:
  bool asked_ = false;
};

/// The LLM Coder's candidates first (when the role is on), then on each later call the Repairer's fixes of
/// the candidates that failed a gate (state.repairs, each with its exact failure), within the budget.
class LlmCoder final : public SearchStrategy {
 public:
  std::vector<Candidate> next(SearchState& state, const std::vector<Candidate>& batch) override;

 private:
  std::vector<Candidate> coder(SearchState& state);
  std::vector<Candidate> repairer(SearchState& state);
  bool coder_asked_ = false;
};

/// The offline Coder: the rewrite library's structural rewrites of an Inductor kernel (worker op
/// `rewrite`), each pinned to the block sizes it was written for. Once; none for a standalone kernel.
class RewriteFamilies final : public SearchStrategy {
 public:
  std::vector<Candidate> next(SearchState& state, const std::vector<Candidate>& batch) override;

 private:
  bool asked_ = false;
};

/// First: launch configs of the original kernel (the LLM Tuner's, else the offline Tuner's space around the
/// baseline, leaving half the room for the next step when the batch holds rewritten code). Then: configs of
/// the fastest rewritten kernel that passed every gate (an Inductor kernel's; its pinned meta-parameters kept).
class TunerSweep final : public SearchStrategy {
 public:
  explicit TunerSweep(const SearchTarget& target);
  std::vector<Candidate> next(SearchState& state, const std::vector<Candidate>& batch) override;
  /// Why the kernel's launch config is not tuned ("" = it is): a standalone kernel under autotune/heuristics.
  const std::string& untunable() const { return untunable_; }

 private:
  std::vector<Candidate> around_baseline(SearchState& state, const std::vector<Candidate>& batch);
  std::vector<Candidate> around_best(SearchState& state);
  std::string untunable_;
  bool swept_ = false;
};

}  // namespace kernelopt::engine
