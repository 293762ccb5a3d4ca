/// \file
/// Tuning one kernel through the four gates. Every candidate's verdicts go to
/// the store before the next candidate runs, so an interrupted run loses
/// nothing that was verified, and a rerun into the same directory re-uses those
/// verdicts. The parts: candidate.hpp (building candidates), gate_pipeline.hpp
/// (the gates in order), search_strategies.hpp (where candidates come from),
/// search_state.hpp (what a search has done so far).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "agents/profiler.hpp"
#include "artifact/artifact.hpp"
#include "engine/context.hpp"
#include "report/report.hpp"

namespace kernelopt::engine {

/// Searches one kernel within `budget` candidate evaluations. First, if the
/// kernel library holds an entry for the kernel's exact fingerprint, that
/// winner (origin "library") goes through all four gates on this run's data;
/// if it passes, it is the kernel's result and nothing else is evaluated for
/// the kernel; if not, the search below runs as if there were no entry. The Coder's
/// candidates (LLM) and the Tuner's launch configs (LLM or offline) go through
/// gate 1 and a short screen; those faster than the baseline go through gates
/// 2-4. LLM candidates that fail a gate go back to the Repairer with the exact
/// failure, for at most options.repair_rounds rounds; the best passing
/// LLM-written kernel then gets its launch config tuned. Candidates rejected
/// earlier in the same run are never re-evaluated, and ones that passed keep
/// their verdicts. Outcome "improved" carries the winning kernel source;
/// otherwise the reason the baseline stays.
report::KernelOutcome search_kernel(Context& ctx, const artifact::Module& module, const artifact::Kernel& kernel,
                                    const nlohmann::json& baseline_config, int budget,
                                    const agents::KernelProfile& profile, const std::string& strategy);

}  // namespace kernelopt::engine
