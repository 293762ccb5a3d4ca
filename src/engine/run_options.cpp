// The options a run was started with, saved for `kernelopt resume` and read back. See optimize.hpp.
#include <filesystem>

#include <fmt/format.h>

#include "engine/optimize.hpp"
#include "util/fs.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kernelopt::engine {

json saved_options(const OptimizeOptions& o) {
  return {{"problem", fs::absolute(o.problem).string()}, {"workspace", fs::absolute(o.workspace).string()},
          {"library", fs::absolute(o.library_path()).string()},
          {"python", o.python}, {"python_path", o.python_path}, {"device", o.device}, {"seeds", o.seeds},
          {"final_seeds", o.final_seeds}, {"atol", o.atol}, {"rtol", o.rtol}, {"half_atol", o.half_atol},
          {"half_rtol", o.half_rtol}, {"check_repeats", o.check_repeats},
          {"budget", o.budget},
          {"gate_top_k", o.gate_top_k}, {"screen_trials", o.screen_trials}, {"gate_trials", o.gate_trials},
          {"request_timeout_s", o.request_timeout_s}, {"final_error_ratio", o.final_error_ratio},
          {"input_kind", o.input_kind}, {"llm", agents::to_json(o.llm)}, {"coder_candidates", o.coder_candidates},
          {"repair_rounds", o.repair_rounds}, {"helion_kernel", o.helion_kernel},
          {"helion_autotune", o.helion_autotune}, {"gpus", o.gpus}};
}

OptimizeOptions load_run_options(const fs::path& run_dir) {
  const fs::path file = run_dir / "options.json";
  if (!fs::is_regular_file(file)) {
    throw UserError(fmt::format("{}: not a kernelopt run directory (no options.json)", run_dir.string()));
  }
  json j;
  try {
    j = json::parse(util::read_file(file));
    OptimizeOptions o;
    o.problem = j.at("problem").get<std::string>();
    o.out_dir = run_dir;
    o.workspace = j.at("workspace").get<std::string>();
    o.library = j.value("library", "");
    o.python = j.at("python");
    o.python_path = j.value("python_path", "");
    o.device = j.at("device");
    o.seeds = j.at("seeds").get<std::vector<int>>();
    o.final_seeds = j.at("final_seeds").get<std::vector<int>>();
    o.atol = j.at("atol");
    o.rtol = j.at("rtol");
    o.half_atol = j.value("half_atol", o.half_atol);  // options.json of runs before per-dtype tolerances
    o.half_rtol = j.value("half_rtol", o.half_rtol);
    o.check_repeats = j.value("check_repeats", 3);  // runs started before the option: the default
    o.budget = j.at("budget");
    o.gate_top_k = j.at("gate_top_k");
    o.screen_trials = j.at("screen_trials");
    o.gate_trials = j.at("gate_trials");
    o.request_timeout_s = j.at("request_timeout_s");
    o.final_error_ratio = j.at("final_error_ratio");
    o.input_kind = j.at("input_kind");
    o.llm = agents::llm_config_from_json(j.at("llm"));
    o.coder_candidates = j.at("coder_candidates");
    o.repair_rounds = j.at("repair_rounds");
    o.helion_kernel = j.value("helion_kernel", "");
    o.helion_autotune = j.value("helion_autotune", false);
    o.gpus = j.value("gpus", "1");
    o.resume = true;
    return o;
  } catch (const UserError&) {
    throw;
  } catch (const std::exception& e) {
    throw UserError(fmt::format("{}: unreadable: {}", file.string(), e.what()));
  }
}

}  // namespace kernelopt::engine
