// Building a kernel search's candidates. See candidate.hpp.
#include "engine/candidate.hpp"

#include <fmt/format.h>

#include "agents/tuner.hpp"
#include "artifact/config.hpp"
#include "artifact/stitch.hpp"

using nlohmann::json;

namespace kernelopt::engine {

SearchTarget::SearchTarget(Context& context, const artifact::Module& m, const artifact::Kernel& k,
                           json baseline_config)
    : ctx(context), module(m), kernel(k), baseline(std::move(baseline_config)), input(context.input) {
  const json module_json = artifact::to_json(module);  // named: a temporary would dangle in the range-for
  for (const auto& kj : module_json["kernels"]) {
    if (kj["name"] == kernel.name) kernel_json = kj;
  }
  tunable = json::object();
  if (!baseline.is_null()) {
    tunable = {{"num_warps", baseline.value("num_warps", 4)}, {"num_stages", baseline.value("num_stages", 1)}};
    for (const auto& c : kernel.constexprs) {
      if (baseline.contains(c)) tunable[c] = baseline[c];
    }
  }
}

std::string SearchTarget::baseline_label() const {
  return artifact::LaunchConfig::from_json(input.own_config(tunable)).label();
}

std::string SearchTarget::grid_rule() const { return input.grid_rule(kernel); }

agents::KernelTask kernel_task(const SearchTarget& target, const agents::KernelProfile& profile,
                               const std::string& strategy) {
  const auto& kernel = target.kernel;
  agents::KernelTask task;
  task.kernel_name = kernel.name;
  task.kind = kernel.kind;
  task.source = target.module.kernel_source(kernel);
  task.params = kernel.params;
  task.constexprs = kernel.constexprs;
  task.signature = kernel.signature;
  task.aten_ops = kernel.aten_ops;
  task.graph_fragment = kernel.graph_fragment;
  task.size_hints = kernel.size_hints;
  task.current_config = target.tunable;
  for (const auto* l : target.module.launches_of(kernel.name)) {
    task.launch_numels.emplace_back(l->numels.begin(), l->numels.end());
  }
  task.grid_rule = target.grid_rule();
  const auto& o = target.ctx.options;
  task.atol = o.atol;
  task.rtol = o.rtol;
  task.half_atol = o.half_atol;
  task.half_rtol = o.half_rtol;
  task.profile = profile;
  task.diagnosis = profile.diagnosis;
  task.strategy = strategy;
  return task;
}

json launch_only(const json& config) {
  json out = json::object();
  if (!config.is_object()) return out;
  for (const char* k : {"num_warps", "num_stages"}) {
    if (config.contains(k)) out[k] = config[k];
  }
  return out;
}

std::string Candidate::label() const {
  std::string cfg = config.is_null() ? "" : artifact::LaunchConfig::from_json(config).label();
  return origin == "tuner" ? cfg : fmt::format("{}#{} {}", origin, hash.substr(0, 8), cfg);
}

std::vector<Candidate> answer_candidates(const SearchTarget& target, const std::vector<agents::KernelAnswer>& answers,
                                         const std::string& origin, int repair_round) {
  std::vector<Candidate> out;
  for (const auto& a : answers) {
    Candidate c;
    c.origin = origin;
    c.code = a.code;
    c.grid = a.grid;
    c.notes = a.notes;
    c.repair_round = repair_round;
    c.config = target.input.answer_config(target.tunable, a.meta);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Candidate> tuner_candidates(const SearchTarget& target, const std::string& code, const json& around,
                                        const std::string& origin, int max_configs, const json& pinned) {
  std::vector<Candidate> out;
  if (around.is_null() || max_configs <= 0) return out;
  // pinned keys stay as they are: ask for more configs, then drop those that move them
  const int ask = pinned.is_object() && !pinned.empty() ? max_configs * 4 : max_configs;
  for (const auto& cfg : agents::tuner_space(target.kernel_json, around, ask)) {
    bool moves_pinned = false;
    if (pinned.is_object()) {
      for (const auto& [k, v] : pinned.items()) moves_pinned = moves_pinned || cfg.value(k, json()) != v;
    }
    if (moves_pinned) continue;
    if (static_cast<int>(out.size()) >= max_configs) break;
    Candidate c;
    c.origin = origin;
    c.config = cfg;
    c.code = code;
    c.pinned = pinned;
    out.push_back(std::move(c));
  }
  return out;
}

json analyze_args(const SearchTarget& target, const std::string& source, const std::vector<std::string>& grid) {
  json args = {{"source", source}};
  if (!grid.empty()) {
    args["grid"] = grid;
    json names = json::array();
    for (const auto& p : target.kernel.params) {
      if (p.size() >= 5 && p.ends_with("numel")) names.push_back(p);
    }
    args["grid_names"] = names;
  }
  return args;
}

store::CandidateRecord candidate_record(const SearchTarget& target, const Candidate& c, json meta) {
  store::CandidateRecord rec;
  rec.run_id = target.ctx.run_id;
  rec.module = target.module.index;
  rec.kernel = target.kernel.name;
  rec.source_hash = c.hash;
  rec.origin = c.origin;
  rec.meta = std::move(meta);
  return rec;
}

namespace {

/// Where the answer's kernel function is: ast facts of the answer alone (it is never run here), kept on the
/// candidate (gate 1 reuses them where it reads the answer itself).
artifact::FunctionLines answer_function(const SearchTarget& target, Candidate& c) {
  worker::Reply facts = target.ctx.ask("analyze", analyze_args(target, c.code, c.grid));
  if (!facts.ok()) throw artifact::ArtifactError("cannot analyze the answer: " + facts.error);
  c.code_facts = facts.result;
  if (facts.result.value("parse_error", json()).is_string()) {
    throw artifact::ArtifactError("the answer's code does not parse: " + facts.result["parse_error"].get<std::string>());
  }
  artifact::FunctionLines fn;
  for (const auto& f : facts.result["functions"]) {
    if (f["name"] == target.kernel.name) fn = {f.value("first_line", 0), f.value("line", 0), f.value("end_line", 0)};
  }
  if (fn.def_line == 0) throw artifact::ArtifactError("the answer defines no function named " + target.kernel.name);
  return fn;
}

}  // namespace

void compose_source(const SearchTarget& target, Candidate& c) {
  const auto& module = target.module;
  const auto& kernel = target.kernel;
  if (!c.kernel_source.empty()) return;  // a library entry's text as it was stitched and verified: used as is
  if (c.code.empty()) {
    c.kernel_source = target.input.config_source(module, kernel, artifact::LaunchConfig::from_json(c.config));
    return;
  }
  const artifact::FunctionLines fn = answer_function(target, c);
  c.kernel_source = target.input.code_source(module, kernel, c.code, fn, c.config, c.grid);
}

}  // namespace kernelopt::engine
