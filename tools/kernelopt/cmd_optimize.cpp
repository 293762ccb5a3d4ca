// `kernelopt optimize MODEL.py --out DIR`: the whole run (see src/engine/optimize.hpp).
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "engine/optimize.hpp"

namespace kernelopt::cli {

namespace {

/// A tolerance: a number, > 0 (or >= 0 with allow_zero), said in one short line when it is not.
CLI::Validator tolerance(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](std::string& s) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(s, v)) return "must be a number, got " + s;
        if (allow_zero ? v >= 0 : v > 0) return "";
        return (allow_zero ? "must be >= 0, got " : "must be > 0, got ") + s;
      },
      allow_zero ? "NONNEGATIVE" : "POSITIVE");
}

}  // namespace

Runner add_optimize(CLI::App& app) {
  auto opts = std::make_shared<engine::OptimizeOptions>();
  auto* sub = app.add_subcommand("optimize", "optimize a KernelBench-format model file (Model, get_inputs, get_init_inputs)");
  sub->add_option("model", opts->problem, "the model file")->required();
  sub->add_option("-o,--out", opts->out_dir, "run directory (new, or a run of the same model)")->required();
  sub->add_option("--workspace", opts->workspace, "directory of the store shared by runs")->capture_default_str();
  sub->add_option("--python", opts->python, "python interpreter with torch and triton")->capture_default_str();
  sub->add_option("--device", opts->device, "torch device")->capture_default_str();
  sub->add_option("--seeds", opts->seeds, "input seeds the gates check on (3 or more)")->capture_default_str();
  sub->add_option("--atol", opts->atol, "fp32 absolute tolerance")->capture_default_str()->check(tolerance(false));
  sub->add_option("--rtol", opts->rtol, "fp32 relative tolerance")->capture_default_str()->check(tolerance(true));
  sub->add_option("--budget", opts->budget, "launch configs screened, over all kernels")
      ->capture_default_str()->check(CLI::Range(1, 100000));
  sub->add_option("--gate-top-k", opts->gate_top_k, "best screened configs per kernel sent through gates 2-4")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  sub->add_option("--trials", opts->gate_trials, "timed trials per series in the performance gate and end to end")
      ->capture_default_str()->check(CLI::Range(10, 100000));
  sub->add_option("--timeout", opts->request_timeout_s, "seconds one worker request may take")
      ->capture_default_str()->check(CLI::Range(1, 86400));
  return [opts] {
    auto report = engine::optimize(*opts);
    std::printf("%s\n", report["summary"]["headline"].get<std::string>().c_str());
    return 0;
  };
}

}  // namespace kernelopt::cli
