/// \file
/// The LLM side of the five agents: what each one is asked (a ChatRequest
/// rendered from the templates in prompts/, compiled in) and how its answer is
/// read (agents/answer.hpp). The session (agents/llm_session.hpp) decides
/// whether to ask at all and which model; the engine acts on the parsed
/// answers, and every kernel goes through the four gates before anything of
/// it runs.
///
/// Prompts: system = prompts/system.md; user = prompts/<role>.md, with the
/// shared parts prompts/kernel.md (what is known about one kernel) and
/// prompts/kernel_answer.md (the rules and answer format for kernel code).
/// Golden files under tests/unit/golden/ show every prompt in full.
///
/// Tags: each request's tag is "<role>" (profiler, planner) or
/// "<role>.<kernel>" (coder, repairer, tuner); LlmSession::ask appends
/// ".<n>", the number of earlier requests with that tag in the run, so the
/// first Coder request for kernel K is "coder.K.0" and the third Repairer
/// request for it "repairer.K.2" (relay answers may be scripted by tag).
///
/// Contract: request builders are pure and deterministic (equal inputs give
/// byte-equal requests, so answers replay from the store); they throw
/// PromptError only if a template and this code disagree (a bug the golden
/// tests catch). Numbers are printed with fixed precision.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/answer.hpp"
#include "agents/planner.hpp"
#include "agents/profiler.hpp"
#include "agents/role.hpp"
#include "llm/chat.hpp"

namespace kernelopt::agents {

/// An earlier candidate for the same kernel and its verdict.
struct Attempt {
  std::string origin;  ///< coder | repairer | tuner | llm-tuner
  std::string label;   ///< how the engine names it (hash prefix, launch config)
  std::string gate;    ///< the gate that decided (static, correctness, model, performance)
  std::string reason;  ///< the verdict's one-line reason
  bool passed = false; ///< true: passed all four gates
};

/// What the Coder, Repairer and Tuner see about one kernel.
struct KernelTask {
  std::string kernel_name;
  std::string kind;                           ///< pointwise | reduction | persistent_reduction | ...
  std::string source;                         ///< the kernel's full text as it runs now
  std::vector<std::string> params;            ///< non-constexpr parameters, in order
  std::vector<std::string> constexprs;        ///< tunable constexpr parameters, in order
  std::map<std::string, std::string> signature;  ///< param -> Triton type ("*fp32", "i32", "constexpr")
  std::vector<std::string> aten_ops;
  std::string graph_fragment;
  nlohmann::json size_hints;                  ///< e.g. {"x": 4096, "r0_": 8192}; null if unknown
  nlohmann::json current_config;              ///< constexprs + num_warps/num_stages now; null/{} if unknown
  std::vector<std::vector<long long>> launch_numels;  ///< numel arguments of each launch site
  std::string grid_rule;                      ///< the grid now, e.g. "(cdiv(xnumel, XBLOCK), 1, 1)"
  KernelProfile profile;
  std::string diagnosis, strategy;            ///< the Profiler's diagnosis, the Planner's strategy ("" = none)
  std::vector<Attempt> earlier;
  std::vector<std::string> outputs;           ///< pointers the original stores to; empty = read from source
  double bandwidth_gbps = 0;                  ///< measured copy bandwidth; 0 = derived from the profile
  double atol = 0, rtol = 0;                  ///< the correctness gates' fp32 tolerances (the run's: engine::kernel_task)
  double half_atol = 0, half_rtol = 0;        ///< their fp16 and bf16 tolerances
};

/// Why a candidate failed: the gate's verdict.
struct GateFailure {
  std::string gate, reason;
  nlohmann::json evidence;  ///< shown as compact JSON, cut to kMaxEvidenceChars
};

inline constexpr std::size_t kMaxEvidenceChars = 3000;
inline constexpr std::size_t kMaxEarlierAttempts = 12;  ///< most recent attempts shown to the Coder

/// Output tokens asked for per request.
inline constexpr int kKernelMaxTokens = 8192;  ///< Coder, Repairer
inline constexpr int kSmallMaxTokens = 2048;   ///< Profiler, Planner, Tuner

/// Profiler: the measured per-kernel table; asks for {"kernel": "diagnosis"}.
llm::ChatRequest profiler_request(const std::vector<KernelProfile>& profiles, double bandwidth_gbps);
/// Planner: profiles with diagnoses and the total budget; asks for
/// [{"kernel", "budget", "strategy"}]. min_budget: the smallest useful budget (PlannerPolicy).
llm::ChatRequest planner_request(const std::vector<KernelProfile>& profiles, int total_budget, int min_budget = 4);
/// Coder: `candidates` (>= 1) new kernels for task.
llm::ChatRequest coder_request(const KernelTask& task, int candidates);
/// Repairer: one fixed candidate for `failed`, which failed `failure`.
llm::ChatRequest repairer_request(const KernelTask& task, const KernelAnswer& failed, const GateFailure& failure);
/// Tuner: at most max_configs launch configs for task's kernel.
llm::ChatRequest tuner_request(const KernelTask& task, int max_configs);

/// parse_kernel_answers(text, task.constexprs).
std::vector<KernelAnswer> parse_kernel_answers(const std::string& text, const KernelTask& task);

/// Pointer parameters `source` stores to (tl.store / tl.atomic_* on a param
/// expression), in parameter order: a textual scan for the prompt, not a gate.
std::vector<std::string> stored_pointers(const std::string& source, const std::vector<std::string>& params);

}  // namespace kernelopt::agents
