// Stitching a module's winners; the end-to-end check. See module_check.hpp.
#include "engine/module_check.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "artifact/stitch.hpp"
#include "util/fs.hpp"
#include "verify/model_gate.hpp"
#include "verify/stats.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kernelopt::engine {

namespace {

std::vector<double> samples(const json& j) { return j.get<std::vector<double>>(); }

}  // namespace

std::string stitch_module(Context& ctx, const artifact::Module& module,
                          const std::map<std::string, std::string>& winners, report::ModuleReport& report) {
  if (winners.empty()) {
    report.stitch_decision = "no kernel improved: the baseline module is kept byte-identical";
    return module.source;
  }
  std::string stitched = artifact::stitch_kernels(module, winners);
  if (winners.size() == 1) {
    report.stitch_decision = "stitched 1 verified kernel";
    return stitched;
  }
  // Several winners were verified one at a time; check them together once more.
  fs::path path = ctx.out / "candidates" / fmt::format("m{}_combined.py", module.index);
  util::write_file_atomic(path, stitched);
  json args = ctx.base_args;
  args["module"] = module.index;
  args["candidate_module"] = path.string();
  args["tolerances"] = ctx.options.tolerances_json();
  worker::Reply mc = ctx.ask("model_check", args);
  if (mc.ok() && verify::model_gate(mc.result).passed) {
    report.stitch_decision = fmt::format("stitched {} verified kernels, re-verified together", winners.size());
    return stitched;
  }
  // Keep only the winner with the largest kernel speedup.
  const report::KernelReport* top = nullptr;
  for (const auto& k : report.kernels) {
    if (k.outcome.status == "improved" && (!top || k.outcome.kernel_speedup.speedup > top->outcome.kernel_speedup.speedup)) {
      top = &k;
    }
  }
  report.stitch_decision = "winners failed together; kept only " + top->profile.name;
  return artifact::stitch_kernels(module, {{top->profile.name, winners.at(top->profile.name)}});
}

report::EndToEnd final_check(Context& ctx, const RunDir& run_dir) {
  report::EndToEnd e;
  json args = {{"run_dir", run_dir.path().string()}, {"device", ctx.options.device},
               {"seeds", ctx.options.final_seeds}, {"tolerances", ctx.options.tolerances_json()},
               {"trials", ctx.options.gate_trials}, {"input_kind", ctx.input.name()}};
  worker::Reply r = ctx.ask("final_check", args);
  if (!r.ok()) {
    e.failure = r.kind == "out_of_memory" ? "out of memory: final_check" : r.error;
    e.why = "end-to-end check failed to run: " + r.error;
    return e;
  }
  e.ran = true;
  const json& res = r.result;
  e.substituted = res["substituted"];
  auto manifest = json::parse(util::read_file(run_dir.path() / "manifest.json"));
  for (const auto& m : manifest["modules"]) e.expected_substitutions += m["optimized"].is_null() ? 0 : 1;
  for (const auto& run : res["runs"]) {
    for (const auto& out : run["outputs"]) {
      double eo = out["err_optimized"], eb = out["err_baseline"];
      e.max_err_optimized = std::max(e.max_err_optimized, eo);
      e.max_err_baseline = std::max(e.max_err_baseline, eb);
      // beyond tolerance vs float64 counts only where it is also worse than the compiler's own error
      if (out["mismatches_vs_eager"].get<int>() > 0 && eo > eb * ctx.options.final_error_ratio + 1e-7) {
        e.mismatches += out["mismatches_vs_eager"].get<int>();
      }
    }
  }
  auto eager = samples(res["samples_ms"]["eager"]), base = samples(res["samples_ms"]["baseline"]),
       opt = samples(res["samples_ms"]["optimized"]);
  e.trials = static_cast<int>(opt.size());
  e.eager_ms = verify::median(eager);
  e.baseline_ms = verify::median(base);
  e.optimized_ms = verify::median(opt);
  e.eager_mean_ms = verify::mean(eager);
  e.baseline_mean_ms = verify::mean(base);
  e.optimized_mean_ms = verify::mean(opt);
  e.speedup = verify::estimate_speedup(base, opt);
  if (const json& g = res.value("gpu_samples_ms", json()); g.is_object()) {
    auto median_of = [&](const char* name) { return g.contains(name) ? verify::median(samples(g[name])) : 0.0; };
    e.gpu_eager_ms = median_of("eager");
    e.gpu_baseline_ms = median_of("baseline");
    e.gpu_optimized_ms = median_of("optimized");
  }
  if (e.substituted < e.expected_substitutions) {
    e.why = fmt::format("only {} of {} optimized modules were substituted when Inductor recompiled", e.substituted,
                        e.expected_substitutions);
  } else if (e.mismatches > 0) {
    e.why = fmt::format("{} output elements beyond tolerance vs float64 eager and less accurate than the baseline",
                        e.mismatches);
  } else {
    e.passed = true;
    e.why = "outputs within tolerance of float64 eager (or no less accurate than torch.compile)";
  }
  return e;
}

}  // namespace kernelopt::engine
