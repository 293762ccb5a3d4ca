/// \file
/// The four gates for a batch of one kernel's candidates, in order: gate 1 (static
/// validation of the text, then compilation) for each; a short screen of the
/// survivors interleaved with the baseline; then, for the finalists, gate 2
/// (correctness, the kernel alone on every recorded launch), gate 3 (the stitched
/// module vs the baseline, float64 where they differ) and gate 4 (performance,
/// kernel and module). Each verdict is recorded (SearchState::record) before the
/// next gate runs; a candidate is out at its first failed gate. The engine decides
/// every verdict from the worker's evidence (src/verify/); the worker only measures.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/search_state.hpp"
#include "verify/verdict.hpp"
#include "worker/worker.hpp"

namespace kernelopt::engine {

/// The verdict of `gate` for a worker request that failed: the device running out of memory is gate
/// "resource" (never a verdict on the candidate's correctness or speed); an error, hang or fault fails `gate`.
verify::Verdict worker_failure(const std::string& gate, const worker::Reply& reply);

class GatePipeline {
 public:
  /// Reads the original kernel's facts (what gate 1 compares a candidate with) through the worker's
  /// `analyze`; throws UserError when it cannot.
  explicit GatePipeline(SearchState& state);

  /// Sends the batch through the gates; those that pass all four join state.passed. A candidate rejected
  /// earlier in the run, or prepared before in this search, is not evaluated again.
  void evaluate(std::vector<Candidate> batch);

 private:
  /// The kernel search's allowance (--search-seconds) is spent: says how many candidates (`left`) go ungated
  /// and marks the search stopped; false while time is left.
  bool out_of_time(std::size_t left);
  /// Builds the candidate's source, records it, and runs gate 1 (and compilation).
  /// Returns false when the candidate is out (rejected now or earlier, reused, or a duplicate).
  bool prepare(Candidate& c);
  /// Writes the candidate's module and records it in the store; false when an earlier attempt decided it.
  bool admit(Candidate& c);
  bool static_gate(Candidate& c);
  /// The screen's timings of each candidate; a failed screen of several is run again candidate by candidate.
  std::vector<Candidate> screen(std::vector<Candidate>& ready, const nlohmann::json& bench_args);
  /// The screened candidates (fastest first) that go on to gates 2-4; the slower ones may be rejected here.
  std::vector<Candidate*> finalists(std::vector<Candidate>& screened);
  /// Gates 2, 3 and 4 for one finalist (gate 4 times it with the screen's arguments).
  void gate_finalist(Candidate& c, const nlohmann::json& bench_args);
  /// The screen's `bench` arguments for these candidates.
  nlohmann::json bench_args(const std::vector<Candidate>& ready) const;

  SearchState& state_;
  std::string original_text_;  ///< what gate 1 compares with (InputKind::original_text)
  nlohmann::json original_facts_;
};

}  // namespace kernelopt::engine
