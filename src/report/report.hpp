/// \file
/// What a run reports: per kernel before/after time, % of roofline, gates
/// passed and what changed; end-to-end numbers measured as the field does.
/// Written as report.json (for tools) and report.md (for people).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/planner.hpp"
#include "agents/profiler.hpp"
#include "verify/stats.hpp"
#include "worker/worker.hpp"

namespace kernelopt::report {

struct KernelOutcome {
  std::string status;            ///< "improved" | "kept baseline" | "skipped"
  std::string why;               ///< one line
  nlohmann::json winner_config;  ///< launch config of the kept candidate, null otherwise
  std::string winner_source;     ///< its kernel source (not serialized)
  verify::SpeedupEstimate kernel_speedup;  ///< of the kept candidate
  double after_ms = 0;           ///< kernel median with the kept candidate, ms
  int screened = 0;              ///< configs timed in the screen
  int gated = 0;                 ///< candidates sent through gates 2-4
  std::map<std::string, int> rejected_by;  ///< gate -> candidates it rejected
  nlohmann::json rewrites_skipped = nlohmann::json::array();  ///< {family, why}: the rewrite families that do not apply
  std::string winner_origin;     ///< tuner | coder | repairer | llm-tuner | rewrite | rewrite-tuner | library; "" when none
  std::string winner_family;     ///< the rewrite family of a rewrite or rewrite-tuner winner; "" otherwise
  std::string winner_code;       ///< the LLM code the winner was built from ("" for a launch config; not serialized)
  nlohmann::json winner_grid;    ///< its LLM grid expressions, null for Inductor's (not serialized)
  std::int64_t library_entry = 0;  ///< the kernel-library entry the winner came from (verified again); 0 = none
  nlohmann::json attempts = nlohmann::json::array();  ///< {origin, label, gate, passed, reason} per verdict that decided
  int worker = -1;               ///< which of the run's workers (one per GPU) searched it; -1: the run had one
};

struct KernelReport {
  agents::KernelProfile profile;
  std::vector<std::string> aten_ops;
  nlohmann::json baseline_config;
  agents::PlanItem plan;
  KernelOutcome outcome;
};

struct ModuleReport {
  int index = 0;
  double module_ms = 0;          ///< median module call before, ms
  double bandwidth_gbps = 0;     ///< measured copy bandwidth of the device
  std::vector<std::string> vendor_calls;
  std::vector<KernelReport> kernels;
  std::string stitch_decision;   ///< what was stitched, or why the baseline stays
};

struct EndToEnd {
  bool passed = false;           ///< outputs correct and every optimized module substituted
  bool ran = false;              ///< the check ran to its verdict (false: it could not run; `why` says why)
  std::string failure;           ///< when it could not run: "out of memory: final_check", or the worker's error
  std::string why;
  int substituted = 0, expected_substitutions = 0;
  double max_err_optimized = 0, max_err_baseline = 0;  ///< max |out - float64 eager| over seeds
  int mismatches = 0;            ///< elements beyond tolerance vs float64 eager where the baseline was within
  double eager_ms = 0, baseline_ms = 0, optimized_ms = 0;              ///< medians
  double eager_mean_ms = 0, baseline_mean_ms = 0, optimized_mean_ms = 0;
  verify::SpeedupEstimate speedup;  ///< baseline / optimized
  int trials = 0;
  /// The same calls timed with the host's time to issue them hidden (the GPU held busy before each start
  /// event): medians, 0 = not measured (under the interpreter, older workers). e2e - these = host time.
  double gpu_eager_ms = 0, gpu_baseline_ms = 0, gpu_optimized_ms = 0;
};

/// Worker ops whose time is the run's GPU time: profiling, gate 2 and gate 3 evidence, timing (screen
/// and gate 4), the end-to-end check. They run on the run's device (on the CPU under Triton's interpreter).
inline constexpr const char* kGpuOps[] = {"profile", "check", "model_check", "bench", "final_check"};
/// Worker ops whose time is the run's compile time: torch.compile's capture, candidate modules' compilation.
inline constexpr const char* kCompileOps[] = {"capture", "compile"};

/// What a run cost, measured by the engine (this invocation only: a continued run counts from its restart).
struct RunCost {
  double wall_s = 0;       ///< the run, from starting its worker to writing the report, s
  bool continued = false;  ///< the run continued a recorded one; earlier invocations are not counted
  std::map<std::string, worker::RequestTime> requests;  ///< worker op -> requests and their time ("start": workers started),
                                                        ///< summed over the run's workers
  int workers = 1;         ///< workers that searched kernels at once, one per GPU
};

/// One Triton kernel as the ceiling sees it: its time alone per model call and its bytes (the storages its
/// launches take, each once; the profile counts no FLOPs per kernel).
struct KernelWork {
  double time_ms = 0, bytes = 0;
};

/// What every Triton kernel at its limit would save per model call, ms: over the kernels, the time minus the
/// limit, its bytes at bandwidth_gbps (never below 0: a kernel already under its estimated limit saves nothing).
double ceiling_saving_ms(const std::vector<KernelWork>& kernels, double bandwidth_gbps);

/// The ceiling of a call of `ms` that could save `saving_ms`: ms / (ms - saving_ms).
double ceiling(double ms, double saving_ms);

/// The kept whole-model decision's name in report.json's "decisions" ({"kept", ...}); "" without --decisions
/// or when default was kept (or the end-to-end check dropped the kept one).
std::string kept_decision(const nlohmann::json& decisions);

struct Report {
  std::string problem, problem_hash, out_dir;
  nlohmann::json versions, options;
  std::vector<ModuleReport> modules;
  EndToEnd end_to_end;
  bool kernels_kept = false;   ///< optimized kernels are in the emitted model (after the end-to-end check)
  std::string reverted_why;      ///< set when the end-to-end check undid the optimized modules
  /// When the optimized modules' own end-to-end check did not pass or could not run (they were reverted):
  /// {"outcome": "did not pass" | "could not run", "why"}; null otherwise (also when reverted as not faster).
  nlohmann::json reverted_check;
  std::string input_kind = "module";  ///< module | triton | helion
  nlohmann::json helion;              ///< helion: the kernel, its config and the exported Triton file (else null)
  nlohmann::json llm;            ///< LLM use: providers, requests, tokens, cost, fallbacks; null when offline
  nlohmann::json library;        ///< kernel library: {"path", "reused": [kernel], "written": [{kernel, fingerprint, result}]}
  nlohmann::json problem_work;   ///< the worker's capture "work": {min_bytes, input_bytes, flops, flop_counter}; null if none
  /// --decisions: {"kept", "settings", "tried": [{name, settings, status, why, gate, checks, speedup}]}
  /// (engine/decisions.hpp); null without it, and then report.json has no "decisions" key
  nlohmann::json decisions;
  RunCost cost;

  /// The emitted model differs from torch.compile default: optimized kernels, or a kept decision.
  bool improved() const { return kernels_kept || !kept_decision(decisions).empty(); }
};

/// report.json's "cost": wall_s, gpu_s (kGpuOps' time), compile_s (kCompileOps'), worker_s (every request and
/// worker start), continued, candidates_screened and candidates_gated (over the run's kernels), requests
/// ({op: {requests, seconds}}) and a one-line method. A GPU op that is a fresh worker's first request also
/// rebuilds the worker's session (torch.compile again): that time counts as GPU time.
nlohmann::json cost_json(const RunCost& cost, int candidates_screened, int candidates_gated);

nlohmann::json to_json(const Report& report);
std::string to_markdown(const nlohmann::json& report_json);
/// Writes report.json and report.md into dir.
void write(const Report& report, const std::filesystem::path& dir);

}  // namespace kernelopt::report
