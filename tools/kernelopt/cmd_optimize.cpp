// `kernelopt optimize MODEL.py --out DIR`, `kernelopt optimize-kernel FILE.py --out DIR`,
// `kernelopt optimize-helion FILE.py --out DIR`
// and `kernelopt resume DIR`: the whole run (see src/engine/optimize.hpp).
#include <cmath>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "engine/input_kind.hpp"
#include "engine/optimize.hpp"
#include "util/fs.hpp"

namespace kernelopt::cli {

namespace {

/// A tolerance: a finite number, > 0 (or >= 0 with allow_zero), said in one short line when it is not
/// (an infinite tolerance would switch the comparisons of gates 2 and 3 off).
CLI::Validator tolerance(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](std::string& s) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(s, v)) return "must be a number, got " + s;
        if (!std::isfinite(v)) return "must be a finite number, got " + s;
        if (allow_zero ? v >= 0 : v > 0) return "";
        return (allow_zero ? "must be >= 0, got " : "must be > 0, got ") + s;
      },
      allow_zero ? "NONNEGATIVE" : "POSITIVE");
}

/// The LLM flags as given; folded into OptimizeOptions::llm after parsing (config file first, flags on top).
struct LlmFlags {
  std::string config_file, provider, base_url;
  std::vector<std::string> agents, options;
  long long max_tokens = 0;
  double max_usd = 0, max_seconds = 0;
  bool no_replay = false;
  bool required = false;
};

void add_llm_flags(CLI::App* sub, LlmFlags& f, engine::OptimizeOptions& o) {
  sub->add_option("--config", f.config_file, "JSON config file; its \"llm\" object selects providers (flags override)")
      ->check(CLI::ExistingFile);
  sub->add_option("--llm", f.provider,
                  "LLM for every agent: openai:MODEL, anthropic:MODEL, exec:COMMAND or relay:DIR (default: none, "
                  "the offline agents)");
  sub->add_option("--llm-agent", f.agents, "ROLE=SPEC: another LLM for one agent (profiler, planner, coder, repairer, tuner)");
  sub->add_option("--llm-option", f.options, "KEY=VALUE for the providers, e.g. timeout_s=120 or price_input_per_mtok=2");
  sub->add_option("--llm-base-url", f.base_url, "API root of an OpenAI-compatible or Anthropic server");
  sub->add_option("--llm-max-tokens", f.max_tokens, "stop asking LLMs after this many tokens (0 = no limit)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--llm-max-usd", f.max_usd, "stop asking LLMs after this many US dollars (0 = no limit)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--llm-max-seconds", f.max_seconds, "stop asking LLMs after this much wall time (0 = no limit)")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--no-llm-replay", f.no_replay, "ask the LLM again even where the store holds an identical exchange");
  sub->add_flag("--llm-required", f.required,
                "an LLM that cannot be used (no key, endpoint not reachable, failing) is an error, not a fall-back to "
                "the offline agents");
  sub->add_option("--coder-candidates", o.coder_candidates, "candidates asked of the Coder per kernel")
      ->capture_default_str()->check(CLI::Range(1, 16));
  sub->add_option("--repair-rounds", o.repair_rounds, "Repairer rounds for a failed LLM candidate")
      ->capture_default_str()->check(CLI::Range(0, 10));
}

/// Config file, then flags; throws UserError with one line for anything malformed.
void apply_llm_flags(const LlmFlags& f, engine::OptimizeOptions& o) {
  try {
    nlohmann::json cfg = nlohmann::json::object();
    if (!f.config_file.empty()) {
      nlohmann::json file = nlohmann::json::parse(util::read_file(f.config_file));
      if (!file.is_object()) throw std::invalid_argument("the config is not a JSON object");
      for (const auto& [key, value] : file.items()) {
        if (key != "llm") throw std::invalid_argument("unknown key '" + key + "' (known: llm)");
      }
      if (file.contains("llm")) cfg = file["llm"];
    }
    if (!f.provider.empty()) cfg["provider"] = f.provider;
    for (const auto& a : f.agents) {
      auto eq = a.find('=');
      if (eq == std::string::npos || eq == 0) throw std::invalid_argument("--llm-agent wants ROLE=SPEC, got " + a);
      cfg["agents"][a.substr(0, eq)] = a.substr(eq + 1);
    }
    for (const auto& kv : f.options) {
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) throw std::invalid_argument("--llm-option wants KEY=VALUE, got " + kv);
      cfg["options"][kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    if (!f.base_url.empty()) cfg["options"]["base_url"] = f.base_url;
    if (f.max_tokens > 0) cfg["budget"]["tokens"] = f.max_tokens;
    if (f.max_usd > 0) cfg["budget"]["usd"] = f.max_usd;
    if (f.max_seconds > 0) cfg["budget"]["seconds"] = f.max_seconds;
    if (f.no_replay) cfg["replay"] = false;
    if (f.required) cfg["required"] = true;
    o.llm = agents::llm_config_from_json(cfg);
  } catch (const nlohmann::json::exception& e) {
    throw engine::UserError(f.config_file + ": not valid JSON: " + e.what());
  } catch (const std::exception& e) {
    throw engine::UserError(std::string("LLM configuration: ") + e.what());
  }
}

int run_and_print(const engine::OptimizeOptions& o) {
  try {
    auto report = engine::optimize(o);
    std::printf("%s\n", report["summary"]["headline"].get<std::string>().c_str());
    const auto& e = report["end_to_end"];
    if (!e.value("ran", true)) {
      std::fprintf(stderr, "kernelopt: the end-to-end check could not run (%s); the baseline was kept, unverified\n",
                   e.value("failure", std::string("?")).c_str());
      return kExitCheckFailed;
    }
    if (!e.value("passed", false)) {
      std::fprintf(stderr, "kernelopt: the end-to-end check did not pass: %s\n", e.value("why", std::string()).c_str());
      return kExitCheckFailed;
    }
    if (const auto& r = report.value("reverted_check", nlohmann::json()); r.is_object()) {
      // the baseline passed, but the optimized kernels' check did not pass or could not run: not a success
      std::fprintf(stderr, "kernelopt: the end-to-end check of the optimized kernels %s (%s); the baseline was kept\n",
                   r.value("outcome", std::string("did not pass")).c_str(), r.value("why", std::string()).c_str());
      return kExitCheckFailed;
    }
    return 0;
  } catch (const engine::WaitingForAnswers& e) {
    std::fprintf(stderr, "kernelopt: %s\n", e.what());
    return kExitWaiting;
  }
}

}  // namespace

CLI::Validator torch_device() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const bool indexed = s.rfind("cuda:", 0) == 0 && s.size() > 5 &&
                             s.find_first_not_of("0123456789", 5) == std::string::npos;
        return s == "cuda" || s == "cpu" || indexed ? "" : "must be cuda, cuda:N or cpu, got " + s;
      },
      "DEVICE");
}

namespace {

Runner add_run_command(CLI::App& app, const char* name, const char* help, const char* input_kind, const char* what) {
  auto opts = std::make_shared<engine::OptimizeOptions>();
  auto llm = std::make_shared<LlmFlags>();
  opts->input_kind = input_kind;
  auto* sub = app.add_subcommand(name, help);
  sub->add_option(engine::input_kind_named(input_kind).problem_argument(), opts->problem, what)->required();
  sub->add_option("-o,--out", opts->out_dir, "run directory (new, or a run of the same input)")->required();
  sub->add_option("--workspace", opts->workspace, "directory of the store shared by runs")->capture_default_str();
  sub->add_option("--library", opts->library,
                  "kernel library file: verified winners are tried first and written back (default: "
                  "WORKSPACE/library.kolib)");
  sub->add_option("--python", opts->python, "python interpreter with torch and triton")->capture_default_str();
  sub->add_option("--device", opts->device, "torch device: cuda, cuda:N or cpu (Triton's interpreter)")
      ->capture_default_str()
      ->check(torch_device());
  sub->add_option("--seeds", opts->seeds, "input seeds the gates check on (3 or more)")->capture_default_str();
  sub->add_option("--atol", opts->atol, "fp32 absolute tolerance")->capture_default_str()->check(tolerance(false));
  sub->add_option("--rtol", opts->rtol, "fp32 relative tolerance")->capture_default_str()->check(tolerance(true));
  sub->add_option("--check-repeats", opts->check_repeats,
                  "gate 2 launches each kernel launch this often; where the original is bit-identical across them, "
                  "the candidate must be too (1 = no determinism check)")
      ->capture_default_str()->check(CLI::Range(1, 100));
  sub->add_option("--budget", opts->budget, "candidates evaluated, over all kernels")
      ->capture_default_str()->check(CLI::Range(1, 100000));
  sub->add_option("--gate-top-k", opts->gate_top_k, "best screened configs per kernel sent through gates 2-4")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  sub->add_option("--trials", opts->gate_trials, "timed trials per series in the performance gate and end to end")
      ->capture_default_str()->check(CLI::Range(10, 100000));
  sub->add_option("--timeout", opts->request_timeout_s, "seconds one worker request may take")
      ->capture_default_str()->check(CLI::Range(1, 86400));
  sub->add_option("--search-seconds", opts->search_seconds,
                  "seconds the kernel search may take over all kernels (0 = no limit): then no further candidate is "
                  "gated, what passed is kept and verified end to end")
      ->capture_default_str()->check(CLI::Range(0, 86400));
  sub->add_option("--gpus", opts->gpus,
                  "workers searching kernels at once, one per GPU (N or all; the first N of CUDA_VISIBLE_DEVICES, "
                  "else of nvidia-smi -L); with --device cpu, N workers on the CPU")
      ->capture_default_str();
  if (opts->input_kind == "module") {
    sub->add_flag("--decisions", opts->decisions,
                  "first search whole-model decisions (CUDA graphs, max-autotune, coordinate descent, combo kernels, "
                  "freezing, channels_last, cuDNN autotuning), keep the best that passes every gate, then search kernels on "
                  "its output");
    sub->add_option("--decisions-seconds", opts->decisions_seconds,
                    "with --decisions: seconds the decision search may take (0 = no limit); a decision not "
                    "started or not finished within them is skipped, and says so")
        ->capture_default_str()->check(CLI::Range(0, 86400));
  }
  if (opts->input_kind == "helion") {
    sub->add_option("--helion-kernel", opts->helion_kernel, "which @helion.kernel of the file (default: its only one)");
    sub->add_flag("--helion-autotune", opts->helion_autotune,
                  "let Helion's autotuner choose the config whose code is optimized (default: the kernel's own "
                  "config, else Helion's default config)");
  }
  add_llm_flags(sub, *llm, *opts);
  return [opts, llm] {
    apply_llm_flags(*llm, *opts);
    return run_and_print(*opts);
  };
}

}  // namespace

Runner add_optimize(CLI::App& app) {
  return add_run_command(app, "optimize",
                         "optimize a KernelBench-format model file (Model, get_inputs, get_init_inputs)", "module",
                         "the model file");
}

Runner add_optimize_kernel(CLI::App& app) {
  return add_run_command(app, "optimize-kernel",
                         "optimize a standalone Triton kernel file (@triton.jit kernels, launch(), get_inputs(), "
                         "optional reference())",
                         "triton", "the kernel file");
}

Runner add_optimize_helion(CLI::App& app) {
  return add_run_command(app, "optimize-helion",
                         "optimize a Helion kernel file (@helion.kernel, get_inputs(), optional reference()) through "
                         "the Triton code Helion generates for it",
                         "helion", "the Helion kernel file");
}

Runner add_resume(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("resume", "continue an interrupted or waiting run: nothing verified is measured again");
  sub->add_option("run_dir", *dir, "the run directory (--out of the run)")->required();
  return [dir] { return run_and_print(engine::load_run_options(*dir)); };
}

}  // namespace kernelopt::cli
