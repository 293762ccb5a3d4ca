// Asking the LLM agents and reading their answers. See agent_calls.hpp.
#include "engine/agent_calls.hpp"

#include <spdlog/spdlog.h>

namespace kernelopt::engine {

using nlohmann::json;

namespace {

bool on(Context& ctx, agents::Role role) { return ctx.llm != nullptr && ctx.llm->enabled(role); }

}  // namespace

std::map<std::string, std::string> ask_profiler(Context& ctx, const std::vector<agents::KernelProfile>& profiles,
                                                double bandwidth_gbps) {
  if (!on(ctx, agents::Role::profiler) || profiles.empty()) return {};
  auto answer = ctx.llm->ask(agents::Role::profiler, agents::profiler_request(profiles, bandwidth_gbps));
  if (!answer) return {};
  std::vector<std::string> names;
  for (const auto& p : profiles) names.push_back(p.name);
  try {
    return agents::parse_profiler_answer(answer->text, names);
  } catch (const agents::AnswerError& e) {
    spdlog::warn("  the Profiler's answer is unreadable ({}); keeping the rules' diagnoses", e.what());
    return {};
  }
}

std::optional<std::vector<agents::PlanItem>> ask_planner(Context& ctx, const std::vector<agents::KernelProfile>& profiles,
                                                         int total_budget) {
  if (!on(ctx, agents::Role::planner) || profiles.empty()) return std::nullopt;
  auto answer = ctx.llm->ask(agents::Role::planner, agents::planner_request(profiles, total_budget));
  if (!answer) return std::nullopt;
  try {
    return agents::parse_planner_answer(answer->text, profiles, total_budget);
  } catch (const agents::AnswerError& e) {
    spdlog::warn("  the Planner's answer is unusable ({}); using the offline plan", e.what());
    return std::nullopt;
  }
}

AnswerBatch ask_coder(Context& ctx, const agents::KernelTask& task, int n) {
  AnswerBatch batch;
  if (!on(ctx, agents::Role::coder)) return batch;
  auto answer = ctx.llm->ask(agents::Role::coder, agents::coder_request(task, n));
  if (!answer) return batch;
  batch.raw = answer->text;
  try {
    batch.answers = agents::parse_kernel_answers(answer->text, task);
  } catch (const agents::AnswerError& e) {
    batch.unreadable = e.what();
  }
  return batch;
}

std::optional<AnswerBatch> ask_repairer(Context& ctx, const agents::KernelTask& task, const agents::KernelAnswer& failed,
                                        const agents::GateFailure& failure) {
  if (!on(ctx, agents::Role::repairer)) return std::nullopt;
  auto answer = ctx.llm->ask(agents::Role::repairer, agents::repairer_request(task, failed, failure));
  if (!answer) return std::nullopt;
  AnswerBatch batch;
  batch.raw = answer->text;
  try {
    batch.answers = agents::parse_kernel_answers(answer->text, task);
    if (batch.answers.size() > 1) batch.answers.resize(1);  // one fix per failure
  } catch (const agents::AnswerError& e) {
    batch.unreadable = e.what();
  }
  return batch;
}

std::vector<json> ask_tuner(Context& ctx, const agents::KernelTask& task, int max_configs) {
  if (!on(ctx, agents::Role::tuner) || max_configs <= 0) return {};
  auto answer = ctx.llm->ask(agents::Role::tuner, agents::tuner_request(task, max_configs));
  if (!answer) return {};
  try {
    return agents::parse_tuner_answer(answer->text, task.constexprs, max_configs);
  } catch (const agents::AnswerError& e) {
    spdlog::warn("  the Tuner's answer is unusable ({}); using the offline Tuner", e.what());
    return {};
  }
}

}  // namespace kernelopt::engine
