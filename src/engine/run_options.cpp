// The options a run was started with, saved for `kernelopt resume` and read back. See optimize.hpp.
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/optimize.hpp"
#include "util/fs.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kernelopt::engine {

json saved_options(const OptimizeOptions& o) {
  json j = {{"problem", fs::absolute(o.problem).string()}, {"workspace", fs::absolute(o.workspace).string()},
          {"library", fs::absolute(o.library_path()).string()},
          {"python", o.python}, {"python_path", o.python_path}, {"device", o.device}, {"seeds", o.seeds},
          {"final_seeds", o.final_seeds}, {"atol", o.atol}, {"rtol", o.rtol}, {"half_atol", o.half_atol},
          {"half_rtol", o.half_rtol}, {"check_repeats", o.check_repeats},
          {"budget", o.budget},
          {"gate_top_k", o.gate_top_k}, {"screen_trials", o.screen_trials}, {"gate_trials", o.gate_trials},
          {"request_timeout_s", o.request_timeout_s}, {"final_error_ratio", o.final_error_ratio},
          {"input_kind", o.input_kind}, {"llm", agents::to_json(o.llm)}, {"coder_candidates", o.coder_candidates},
          {"repair_rounds", o.repair_rounds}, {"helion_kernel", o.helion_kernel},
          {"helion_autotune", o.helion_autotune}, {"gpus", o.gpus}, {"search_seconds", o.search_seconds}};
  if (o.decisions) {  // absent without --decisions: options.json as before
    j["decisions"] = true;
    j["decisions_seconds"] = o.decisions_seconds;
  }
  return j;
}

namespace {

/// options.json's fields, each read with its name in the error: "\"atol\" is missing" or "\"atol\" must be a
/// number, not null", never a raw nlohmann message.
class Fields {
 public:
  explicit Fields(const json& j) : j_(j) {}
  bool has(const char* key) const { return j_.contains(key); }
  template <typename T>
  T get(const char* key) const {
    if (!j_.contains(key)) throw std::runtime_error(fmt::format("\"{}\" is missing", key));
    return as<T>(key, j_[key]);
  }
  template <typename T>
  T get(const char* key, T fallback) const {  // runs started before the option existed: its default
    return j_.contains(key) ? as<T>(key, j_[key]) : fallback;
  }
  /// A tolerance: a finite number >= 0 (an infinite one would switch the gates' comparisons off).
  double tolerance(const char* key) const {
    const double v = get<double>(key);
    if (!std::isfinite(v) || v < 0) throw std::runtime_error(fmt::format("\"{}\" must be a finite number >= 0", key));
    return v;
  }

 private:
  template <typename T>
  static T as(const char* key, const json& v) {
    try {
      return v.get<T>();
    } catch (const json::exception&) {
      throw std::runtime_error(fmt::format("\"{}\" has the wrong type ({})", key, v.type_name()));
    }
  }
  const json& j_;
};

}  // namespace

json read_json_file(const fs::path& file) {
  try {
    return json::parse(util::read_file(file));
  } catch (const json::parse_error& e) {
    throw UserError(fmt::format("{}: not valid JSON (truncated?) at byte {}", file.string(), e.byte));
  } catch (const std::exception& e) {
    throw UserError(fmt::format("{}: cannot read it: {}", file.string(), e.what()));
  }
}

OptimizeOptions load_run_options(const fs::path& run_dir) {
  const fs::path file = run_dir / "options.json";
  if (!fs::is_regular_file(file)) {
    throw UserError(fmt::format("{}: not a kernelopt run directory (no options.json)", run_dir.string()));
  }
  json j = read_json_file(file);
  try {
    if (!j.is_object()) throw std::runtime_error("not a JSON object");
    const Fields f(j);
    OptimizeOptions o;
    o.problem = f.get<std::string>("problem");
    o.out_dir = run_dir;
    o.workspace = f.get<std::string>("workspace");
    o.library = f.get<std::string>("library", "");
    o.python = f.get<std::string>("python");
    o.python_path = f.get<std::string>("python_path", "");
    o.device = f.get<std::string>("device");
    o.seeds = f.get<std::vector<int>>("seeds");
    o.final_seeds = f.get<std::vector<int>>("final_seeds");
    o.atol = f.tolerance("atol");
    o.rtol = f.tolerance("rtol");
    // options.json of runs before per-dtype tolerances has no half_*: the default
    o.half_atol = f.has("half_atol") ? f.tolerance("half_atol") : o.half_atol;
    o.half_rtol = f.has("half_rtol") ? f.tolerance("half_rtol") : o.half_rtol;
    o.check_repeats = f.get<int>("check_repeats", 3);
    o.decisions = f.get<bool>("decisions", false);
    o.decisions_seconds = f.get<int>("decisions_seconds", 0);  // runs from before the allowance had none
    o.search_seconds = f.get<int>("search_seconds", 0);  // runs from before the allowance had none
    o.budget = f.get<int>("budget");
    o.gate_top_k = f.get<int>("gate_top_k");
    o.screen_trials = f.get<int>("screen_trials");
    o.gate_trials = f.get<int>("gate_trials");
    o.request_timeout_s = f.get<int>("request_timeout_s");
    o.final_error_ratio = f.get<double>("final_error_ratio");
    o.input_kind = f.get<std::string>("input_kind");
    o.llm = agents::llm_config_from_json(f.get<json>("llm"));
    o.coder_candidates = f.get<int>("coder_candidates");
    o.repair_rounds = f.get<int>("repair_rounds");
    o.helion_kernel = f.get<std::string>("helion_kernel", "");
    o.helion_autotune = f.get<bool>("helion_autotune", false);
    o.gpus = f.get<std::string>("gpus", "1");
    o.resume = true;
    return o;
  } catch (const std::exception& e) {
    throw UserError(fmt::format("{}: not the options of a kernelopt run: {}", file.string(), e.what()));
  }
}

}  // namespace kernelopt::engine
