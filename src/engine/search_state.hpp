/// \file
/// What one kernel search has done so far, shared by its gate pipeline and its
/// strategies: the candidate evaluations it spent, every verdict (written to the
/// store at once, so an interrupted run loses nothing verified), the failed LLM
/// candidates due for the Repairer, and the candidates that passed all four gates.
/// A continued run's earlier verdicts are read back here: a rejected candidate is
/// not re-run, a passed one keeps its timings.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "agents/llm_agents.hpp"
#include "engine/candidate.hpp"
#include "report/report.hpp"
#include "verify/stats.hpp"
#include "verify/verdict.hpp"

namespace kernelopt::engine {

struct SearchState {
  SearchState(const SearchTarget& target, agents::KernelTask task, int budget)
      : target(target), task(std::move(task)), budget(budget) {}

  const SearchTarget& target;
  agents::KernelTask task;      ///< what the agents are told; `earlier` grows with every verdict
  report::KernelOutcome out;    ///< the search's outcome so far (tallies, attempts)
  int budget = 0;               ///< candidate evaluations allowed
  int used = 0;                 ///< candidate evaluations spent
  std::set<std::string> seen;   ///< source hashes prepared in this search
  struct Repair {
    Candidate candidate;
    verify::Verdict verdict;
  };
  std::vector<Repair> repairs;  ///< failed LLM candidates the Repairer may still fix
  std::vector<Candidate> passed;  ///< passed all four gates
  std::map<std::int64_t, verify::SpeedupEstimate> estimates;  ///< kernel speedup of each passed candidate
  bool out_of_time = false;     ///< the kernel search's allowance (--search-seconds) stopped this search

  int left() const { return budget - used; }
  verify::SpeedupEstimate estimate_of(const Candidate& c) const { return estimates.at(c.record.id); }
  double speedup_of(const Candidate& c) const { return estimate_of(c).speedup; }

  /// Stores the verdict; a failed one rejects the candidate (tally, attempt, Repairer queue). Returns v.passed.
  bool record(Candidate& c, const verify::Verdict& v);
  /// The candidate passed all four gates with kernel speedup `estimate`.
  void accept(const Candidate& c, const verify::SpeedupEstimate& estimate);
  /// A candidate that could not be built (an unreadable answer, code that cannot be stitched): nothing of it
  /// ran; it is recorded as rejected by the static gate with `reason`, for the Repairer.
  void reject_unbuildable(Candidate& c, const std::string& reason);
  /// A continued run: the candidate's stored failing verdict stands (and its Repairer round may still be due).
  void requeue(const Candidate& c);
  /// A continued run: the candidate passed every gate before, with these timings; false if they are missing.
  bool reuse(Candidate& c);
  /// A continued run: the candidate passed `gate` before the run was interrupted (that verdict stands).
  bool passed_earlier(const Candidate& c, const std::string& gate) const;

 private:
  void failed(const Candidate& c, const verify::Verdict& v);
};

}  // namespace kernelopt::engine
