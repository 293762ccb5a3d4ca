// One kernel through the offline Tuner and the four gates; module stitching;
// the end-to-end check. See kernel_search.hpp.
#include "engine/kernel_search.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agents/tuner.hpp"
#include "artifact/config.hpp"
#include "artifact/stitch.hpp"
#include "engine/optimize.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"
#include "verify/correctness_gate.hpp"
#include "verify/model_gate.hpp"
#include "verify/performance_gate.hpp"
#include "verify/static_gate.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kernelopt::engine {

json Context::request(const std::string& op, const json& args) {
  worker::Reply r = worker.request(op, args, timeout_ms());
  if (!r.ok()) {
    if (r.kind == "problem" || r.kind == "capture" || r.kind == "no_gpu") throw UserError(r.error);
    throw UserError(fmt::format("worker {} failed ({}): {}", op, worker::to_string(r.status), r.error));
  }
  return r.result;
}

namespace {

std::vector<double> samples(const json& j) { return j.get<std::vector<double>>(); }

/// A candidate under evaluation: one launch config of one kernel.
struct Candidate {
  json config;
  std::string kernel_source, hash, module_path;
  store::CandidateRecord record;
  double screen_ms = 0;
  bool reused = false;  ///< verdicts already in the store from an earlier attempt
};

/// Records a verdict; returns whether it passed.
bool record(Context& ctx, Candidate& c, const verify::Verdict& v, report::KernelOutcome& out) {
  store::VerdictRecord vr;
  vr.candidate_id = c.record.id;
  vr.gate = v.gate;
  vr.passed = v.passed;
  vr.reason = v.reason;
  vr.evidence = v.evidence;
  ctx.store.add_verdict(vr);
  if (!v.passed) {
    ctx.store.set_candidate_status(c.record.id, "rejected");
    out.rejected_by[v.gate]++;
    spdlog::info("    {:<28} rejected by {} gate: {}", artifact::LaunchConfig::from_json(c.config).label(), v.gate,
                 v.reason);
  }
  return v.passed;
}

verify::Verdict worker_failure(const std::string& gate, const worker::Reply& r) {
  verify::Verdict v;
  v.gate = gate;
  v.passed = false;
  v.reason = fmt::format("worker {}: {}", worker::to_string(r.status), r.error);
  v.evidence = {{"status", worker::to_string(r.status)}, {"error", r.error}, {"traceback", r.traceback}};
  return v;
}

/// Gate 1: static validation of the candidate's kernel source, then compilation.
bool static_gate(Context& ctx, Candidate& c, const json& original_facts, report::KernelOutcome& out) {
  worker::Reply facts = ctx.worker.request("analyze", {{"source", c.kernel_source}}, ctx.timeout_ms());
  if (!facts.ok()) return record(ctx, c, worker_failure("static", facts), out);
  verify::Verdict v = verify::static_gate(facts.result, original_facts);
  if (v.passed) {  // only now may the candidate's code run: compile it
    worker::Reply comp = ctx.worker.request("compile", {{"module_path", c.module_path}}, ctx.timeout_ms());
    if (!comp.ok()) {
      v.passed = false;
      v.reason = "compile error: " + comp.error;
      v.evidence["compile_error"] = comp.error;
    }
  }
  return record(ctx, c, v, out);
}

}  // namespace

report::KernelOutcome search_kernel(Context& ctx, const artifact::Module& module, const artifact::Kernel& kernel,
                                    const json& baseline_config, int budget) {
  const auto& o = ctx.options;
  report::KernelOutcome out;
  out.status = "kept baseline";
  if (baseline_config.is_null()) {
    out.why = "the launcher reported no configuration to tune from";
    return out;
  }
  json kernel_json;
  const json module_json = artifact::to_json(module);  // named: a temporary would dangle in the range-for
  for (const auto& k : module_json["kernels"]) {
    if (k["name"] == kernel.name) kernel_json = k;
  }
  // only the tunable keys of the launcher's config: constexprs, num_warps, num_stages
  json tunable = {{"num_warps", baseline_config.value("num_warps", 4)},
                  {"num_stages", baseline_config.value("num_stages", 1)}};
  for (const auto& c : kernel.constexprs) {
    if (baseline_config.contains(c)) tunable[c] = baseline_config[c];
  }
  auto configs = agents::tuner_space(kernel_json, tunable, budget);
  if (configs.empty()) {
    out.why = fmt::format("no tuning space for a {} kernel with constexprs [{}]", kernel.kind,
                          fmt::join(kernel.constexprs, ", "));
    return out;
  }
  spdlog::info("  {}: {} configs to screen (baseline {})", kernel.name, configs.size(),
               artifact::LaunchConfig::from_json(tunable).label());
  worker::Reply orig_facts = ctx.worker.request("analyze", {{"source", module.kernel_source(kernel)}}, ctx.timeout_ms());
  if (!orig_facts.ok()) throw UserError("cannot analyze the original kernel: " + orig_facts.error);

  // Gate 1 for every config, before any of them runs.
  std::vector<Candidate> passed_static;
  for (const auto& cfg : configs) {
    Candidate c;
    c.config = cfg;
    c.kernel_source = artifact::kernel_source_with_config(module, kernel, artifact::LaunchConfig::from_json(cfg));
    c.hash = util::sha256_hex(c.kernel_source);
    c.module_path = (ctx.out / "candidates" / fmt::format("m{}_{}_{}.py", module.index, kernel.name, c.hash.substr(0, 12)))
                        .string();
    util::write_file_atomic(c.module_path, artifact::stitch_kernels(module, {{kernel.name, c.kernel_source}}));
    store::CandidateRecord rec;
    rec.run_id = ctx.run_id;
    rec.module = module.index;
    rec.kernel = kernel.name;
    rec.source_hash = c.hash;
    rec.origin = "tuner";
    rec.meta = {{"config", cfg}};
    auto [stored, inserted] = ctx.store.add_candidate(rec);
    c.record = stored;
    if (!inserted && stored.status == "rejected") continue;  // a failed candidate is never re-evaluated
    if (static_gate(ctx, c, orig_facts.result, out)) passed_static.push_back(std::move(c));
  }
  if (passed_static.empty()) {
    out.why = "no configuration passed the static gate and compiled";
    return out;
  }

  // Screen: a short interleaved timing of all survivors against the baseline.
  json bench_args = ctx.base_args;
  bench_args["module"] = module.index;
  bench_args["kernel"] = kernel.name;
  bench_args["mode"] = "kernel";
  bench_args["trials"] = o.screen_trials;
  bench_args["candidates"] = json::array();
  for (const auto& c : passed_static) bench_args["candidates"].push_back(c.module_path);
  worker::Reply screen = ctx.worker.request("bench", bench_args, ctx.timeout_ms());
  if (!screen.ok()) {
    out.why = "screening failed: " + screen.error;
    return out;
  }
  const double base_ms = verify::median(samples(screen.result["samples_ms"]["baseline"]));
  for (auto& c : passed_static) {
    c.screen_ms = verify::median(samples(screen.result["samples_ms"][c.module_path]));
    ctx.store.add_timing(ctx.run_id, c.record.id, "screen", "ms", samples(screen.result["samples_ms"][c.module_path]));
  }
  out.screened = static_cast<int>(passed_static.size());
  std::sort(passed_static.begin(), passed_static.end(),
            [](const Candidate& a, const Candidate& b) { return a.screen_ms < b.screen_ms; });
  std::vector<Candidate*> finalists;
  for (auto& c : passed_static) {
    if (c.screen_ms < base_ms && static_cast<int>(finalists.size()) < o.gate_top_k) finalists.push_back(&c);
  }
  spdlog::info("    screen: baseline {:.4f} ms, best {:.4f} ms ({}), {} finalist(s)", base_ms,
               passed_static.front().screen_ms, artifact::LaunchConfig::from_json(passed_static.front().config).label(),
               finalists.size());
  if (finalists.empty()) {
    out.why = fmt::format("no configuration beat the baseline's {:.4f} ms in the screen (best {:.4f} ms)", base_ms,
                          passed_static.front().screen_ms);
    return out;
  }

  Candidate* best = nullptr;
  for (Candidate* c : finalists) {
    out.gated++;
    json args = ctx.base_args;
    args["module"] = module.index;
    args["kernel"] = kernel.name;
    args["candidate_module"] = c->module_path;
    args["atol"] = o.atol;
    args["rtol"] = o.rtol;
    // Gate 2: the kernel alone on every launch site's real arguments, for each seed.
    worker::Reply chk = ctx.worker.request("check", args, ctx.timeout_ms());
    if (!record(ctx, *c, chk.ok() ? verify::correctness_gate(chk.result) : worker_failure("correctness", chk), out)) {
      continue;
    }
    // Gate 3: the stitched module vs the baseline, float64 eager where they differ.
    worker::Reply mc = ctx.worker.request("model_check", args, ctx.timeout_ms());
    if (!record(ctx, *c, mc.ok() ? verify::model_gate(mc.result) : worker_failure("model", mc), out)) continue;
    // Gate 4: kernel and whole module, interleaved with the baseline, L2 flushed.
    json kb = bench_args;
    kb["trials"] = o.gate_trials;
    kb["candidates"] = json::array({c->module_path});
    json mb = kb;
    mb["mode"] = "model";
    worker::Reply kr = ctx.worker.request("bench", kb, ctx.timeout_ms());
    worker::Reply mr = kr.ok() ? ctx.worker.request("bench", mb, ctx.timeout_ms()) : kr;
    if (!kr.ok() || !mr.ok()) {
      record(ctx, *c, worker_failure("performance", kr.ok() ? mr : kr), out);
      continue;
    }
    auto kbase = samples(kr.result["samples_ms"]["baseline"]), kcand = samples(kr.result["samples_ms"][c->module_path]);
    auto mbase = samples(mr.result["samples_ms"]["baseline"]), mcand = samples(mr.result["samples_ms"][c->module_path]);
    ctx.store.add_timing(ctx.run_id, c->record.id, "kernel_baseline", "ms", kbase);
    ctx.store.add_timing(ctx.run_id, c->record.id, "kernel_candidate", "ms", kcand);
    ctx.store.add_timing(ctx.run_id, c->record.id, "model_baseline", "ms", mbase);
    ctx.store.add_timing(ctx.run_id, c->record.id, "model_candidate", "ms", mcand);
    verify::Verdict perf = verify::performance_gate(kbase, kcand, mbase, mcand);
    if (!record(ctx, *c, perf, out)) continue;
    ctx.store.set_candidate_status(c->record.id, "passed");
    auto est = verify::estimate_speedup(kbase, kcand);
    spdlog::info("    {:<28} passed all four gates: kernel {:.3f}x [{:.3f}, {:.3f}]",
                 artifact::LaunchConfig::from_json(c->config).label(), est.speedup, est.ci_low, est.ci_high);
    if (best == nullptr || est.speedup > out.kernel_speedup.speedup) {
      best = c;
      out.kernel_speedup = est;
      out.after_ms = est.candidate_median;
    }
  }
  if (best == nullptr) {
    out.why = fmt::format("{} finalist(s) failed a gate", finalists.size());
    return out;
  }
  ctx.store.set_candidate_status(best->record.id, "kept");
  out.status = "improved";
  out.winner_config = best->config;
  out.winner_source = best->kernel_source;
  out.why = fmt::format("launch config {} (was {})", artifact::LaunchConfig::from_json(best->config).label(),
                        artifact::LaunchConfig::from_json(tunable).label());
  return out;
}

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
  args["atol"] = ctx.options.atol;
  args["rtol"] = ctx.options.rtol;
  worker::Reply mc = ctx.worker.request("model_check", args, ctx.timeout_ms());
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
               {"seeds", ctx.options.final_seeds}, {"atol", ctx.options.atol}, {"rtol", ctx.options.rtol},
               {"trials", ctx.options.gate_trials}};
  worker::Reply r = ctx.worker.request("final_check", args, ctx.timeout_ms());
  if (!r.ok()) {
    e.why = "end-to-end check failed to run: " + r.error;
    return e;
  }
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
