/// \file
/// The run loop's questions to the LLM agents, each with its offline answer
/// when the LLM is off, unreachable or out of budget: the session (see
/// agents/llm_session.hpp) says which, these functions only ask and read.
/// Answers are data: kernel code comes back as text for the static gate,
/// plans and configs are validated against the kernels that exist.
///
/// Contract: never throws for a bad or missing answer (an unreadable Coder or
/// Repairer answer comes back as AnswerBatch::unreadable, for the Repairer);
/// llm::PendingAnswer propagates (the run stops, resumable).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/llm_agents.hpp"
#include "agents/planner.hpp"
#include "agents/profiler.hpp"
#include "engine/context.hpp"

namespace kernelopt::engine {

/// The kernels of one Coder or Repairer answer.
struct AnswerBatch {
  std::vector<agents::KernelAnswer> answers;  ///< every candidate that parsed
  std::string unreadable;                     ///< why the answer could not be read ("" = it could)
  std::string raw;                            ///< the answer's text (for the Repairer when unreadable)
};

/// Kernel name -> the LLM Profiler's diagnosis; empty when the LLM is off or failed.
std::map<std::string, std::string> ask_profiler(Context& ctx, const std::vector<agents::KernelProfile>& profiles,
                                                double bandwidth_gbps);
/// The LLM Planner's plan; nullopt (use the offline plan) when off, failed or invalid.
std::optional<std::vector<agents::PlanItem>> ask_planner(Context& ctx, const std::vector<agents::KernelProfile>& profiles,
                                                         int total_budget);
/// n candidates from the Coder (fewer if it gave fewer).
AnswerBatch ask_coder(Context& ctx, const agents::KernelTask& task, int n);
/// One fixed candidate; nullopt when the Repairer is off or failed.
std::optional<AnswerBatch> ask_repairer(Context& ctx, const agents::KernelTask& task, const agents::KernelAnswer& failed,
                                        const agents::GateFailure& failure);
/// Launch configs from the LLM Tuner; empty = use the offline Tuner.
std::vector<nlohmann::json> ask_tuner(Context& ctx, const agents::KernelTask& task, int max_configs);

}  // namespace kernelopt::engine
