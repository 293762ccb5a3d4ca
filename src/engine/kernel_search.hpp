/// \file
/// Tuning one kernel through the four gates, combining a module's winners,
/// and the end-to-end check. Every candidate's verdicts go to the store
/// before the next candidate runs, so an interrupted run loses nothing that
/// was verified, and a rerun into the same directory re-uses those verdicts.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "agents/llm_session.hpp"
#include "agents/profiler.hpp"
#include "artifact/artifact.hpp"
#include "engine/options.hpp"
#include "engine/run_dir.hpp"
#include "report/report.hpp"
#include "store/library.hpp"
#include "store/store.hpp"
#include "worker/worker.hpp"

namespace kernelopt::engine {

/// What every step of a run shares.
struct Context {
  const OptimizeOptions& options;
  worker::Worker& worker;
  store::Store& store;
  std::int64_t run_id = 0;
  std::filesystem::path out;
  nlohmann::json base_args;  ///< problem, device, seeds, input_kind: identifies the captured session
  agents::LlmSession* llm = nullptr;
  bool continuing = false;   ///< this run was started before (resume): reuse what it recorded  ///< the LLM agents; null or disabled roles = the offline agents
  store::Library* library = nullptr;  ///< the kernel library; null = none
  std::map<int, std::map<std::string, std::string>> fingerprints;  ///< module -> kernel -> library fingerprint

  /// A worker request whose failure ends the run (capture, profile): throws
  /// UserError with the worker's one-line message.
  nlohmann::json request(const std::string& op, const nlohmann::json& args);
  /// A worker request whose failure is a verdict, not the end of the run (gates, screening).
  worker::Reply ask(const std::string& op, const nlohmann::json& args);
  int timeout_ms() const { return options.request_timeout_s * 1000; }
};

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

/// The module with all winners stitched in, re-verified together (gate 3 and
/// the model-level timing); falls back to the single best winner, then to the
/// baseline. Records the decision in `report`.
std::string stitch_module(Context& ctx, const artifact::Module& module,
                          const std::map<std::string, std::string>& winners, report::ModuleReport& report);

/// The finished run loaded as users load it, on fresh seeds: outputs vs
/// float64 eager and vs torch.compile, and timing of eager, baseline, optimized.
report::EndToEnd final_check(Context& ctx, const RunDir& run_dir);

}  // namespace kernelopt::engine
