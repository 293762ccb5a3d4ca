// report.json and report.md of a run. See report.hpp.
#include "report/report.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "util/fs.hpp"
#include "util/version.hpp"

using nlohmann::json;

namespace kernelopt::report {

namespace {

json estimate_json(const verify::SpeedupEstimate& e) {
  return {{"speedup", e.speedup}, {"ci_low", e.ci_low}, {"ci_high", e.ci_high}, {"confidence", e.confidence},
          {"baseline_median", e.baseline_median}, {"candidate_median", e.candidate_median},
          {"n_baseline", e.n_baseline}, {"n_candidate", e.n_candidate}};
}

/// What the optimized code is measured against: the compiler's output, or the user's own kernel.
std::string baseline_name(const std::string& input_kind) {
  if (input_kind == "triton") return "the original kernel";
  if (input_kind == "helion") return "Helion's kernel";
  return "torch.compile";
}

/// What the end-to-end check undid: the optimized kernels, a kept decision (both with why); "" when nothing.
std::string reverted(const Report& r) {
  std::string out = r.reverted_why.empty() ? "" : "; the optimized kernels were reverted: " + r.reverted_why;
  if (r.decisions.is_object() && r.decisions.contains("dropped")) {
    const json& d = r.decisions["dropped"];
    out += fmt::format("; decision {} dropped: {}", d.value("name", "?"), d.value("why", ""));
  }
  return out;
}

std::string headline(const Report& r) {
  const auto& e = r.end_to_end;
  const std::string base = baseline_name(r.input_kind);
  if (!r.improved()) {
    return fmt::format("baseline kept (byte-identical to {}{}){}", base, r.input_kind == "module" ? "'s output" : "",
                       reverted(r));
  }
  // a kept decision is part of what is measured: the baseline is torch.compile default either way
  const std::string decision = kept_decision(r.decisions);
  std::string what = decision.empty() ? ""
                     : r.kernels_kept ? fmt::format("; decision {} kept, with the optimized kernels", decision)
                                      : fmt::format("; decision {} kept, no kernel rewritten", decision);
  what += reverted(r);
  return fmt::format("{:.3f}x vs {} [{:.3f}, {:.3f}] ({:.4f} -> {:.4f} ms median), correct on fresh seeds{}",
                     e.speedup.speedup, base, e.speedup.ci_low, e.speedup.ci_high, e.baseline_ms, e.optimized_ms,
                     what);
}

double seconds_of(const RunCost& c, const char* const* ops, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) {
    if (auto it = c.requests.find(ops[i]); it != c.requests.end()) s += it->second.seconds;
  }
  return s;
}

}  // namespace

std::string kept_decision(const json& decisions) {
  if (!decisions.is_object()) return "";
  const std::string kept = decisions.value("kept", "default");
  return kept == "default" ? "" : kept;
}

json cost_json(const RunCost& c, int candidates_screened, int candidates_gated) {
  json requests = json::object();
  double worker_s = 0, peak = -1;
  std::string peak_op;
  for (const auto& [op, t] : c.requests) {
    requests[op] = {{"requests", t.requests}, {"seconds", t.seconds},
                    {"peak_gb", t.peak_bytes >= 0 ? json(t.peak_bytes / 1e9) : json(nullptr)}};
    if (!t.phases.empty()) requests[op]["phases_s"] = t.phases;
    worker_s += t.seconds;
    if (t.peak_bytes > peak) peak = t.peak_bytes, peak_op = op;
  }
  return {{"wall_s", c.wall_s},
          {"peak_gb", peak >= 0 ? json(peak / 1e9) : json(nullptr)},
          {"peak_op", peak >= 0 ? json(peak_op) : json(nullptr)},
          {"gpu_s", seconds_of(c, kGpuOps, std::size(kGpuOps))},
          {"compile_s", seconds_of(c, kCompileOps, std::size(kCompileOps))},
          {"worker_s", worker_s},
          {"continued", c.continued},
          {"workers", c.workers},
          {"candidates_screened", candidates_screened},
          {"candidates_gated", candidates_gated},
          {"requests", requests},
          {"method", fmt::format("engine-side wall time of worker requests, request to reply; gpu_s: {}; compile_s: {}; "
                                 "worker_s: every request and worker start; phases_s: the worker's own phases of an op, host wall time{}{}",
                                 fmt::join(kGpuOps, ", "), fmt::join(kCompileOps, ", "),
                                 c.continued ? "; this invocation of a continued run only" : "",
                                 c.workers > 1 ? fmt::format("; summed over {} workers searching at once", c.workers)
                                               : "")}};
}

namespace {

/// The run's peak device memory against the problem's working set (one eager forward's): the factor
/// that the memory budget is about. Nulls where either was not measured (CPU, older workers).
json memory_json(const json& cost, const json& work) {
  const json peak = cost.value("peak_gb", json());
  const json ws = work.is_object() && work.contains("working_set_bytes") ? json(work["working_set_bytes"].get<double>() / 1e9)
                                                                           : json(nullptr);
  const bool both = peak.is_number() && ws.is_number() && ws.get<double>() > 0;
  json by_op = json::object();  // each op's own peak, so that the store keeps where the memory went
  if (cost.contains("requests") && cost["requests"].is_object()) {
    for (const auto& [op, t] : cost["requests"].items()) {
      if (t.is_object() && t.contains("peak_gb") && t["peak_gb"].is_number()) by_op[op] = t["peak_gb"];
    }
  }
  return {{"peak_gb", peak}, {"peak_op", cost.value("peak_op", json())}, {"peak_gb_by_op", by_op}, {"working_set_gb", ws},
          {"factor", both ? json(peak.get<double>() / ws.get<double>()) : json(nullptr)},
          {"method", "peak: torch.cuda.max_memory_allocated, reset before each worker op, the largest over the run's "
                     "ops; working set: inputs, parameters and buffers + one eager forward's peak allocation"}};
}

}  // namespace

double ceiling_saving_ms(const std::vector<KernelWork>& kernels, double bandwidth_gbps) {
  double saving = 0;
  for (const auto& k : kernels) {
    const double limit = bandwidth_gbps > 0 ? k.bytes / (bandwidth_gbps * 1e6) : 0.0;  // GB/s * 1e6 = bytes per ms
    saving += std::max(0.0, k.time_ms - limit);
  }
  return saving;
}

double ceiling(double ms, double saving_ms) { return ms / std::max(ms - saving_ms, 1e-9); }

namespace {

/// The run's ceiling (see ceiling_saving_ms) over torch.compile's end-to-end and GPU-alone medians; null
/// without a Triton kernel, the measured bandwidth or the end-to-end time.
json run_ceiling(const Report& r) {
  std::vector<KernelWork> kernels;
  double bandwidth = 0;
  for (const auto& m : r.modules) {
    bandwidth = std::max(bandwidth, m.bandwidth_gbps);
    for (const auto& k : m.kernels) kernels.push_back({k.profile.time_ms, k.profile.bytes});
  }
  const double base = r.end_to_end.baseline_ms, gpu = r.end_to_end.gpu_baseline_ms;
  if (kernels.empty() || bandwidth <= 0 || base <= 0) return nullptr;
  const double saving = ceiling_saving_ms(kernels, bandwidth);
  return {{"saving_ms", saving},
          {"end_to_end", ceiling(base, saving)},
          {"gpu_alone", gpu > 0 ? json(ceiling(gpu, saving)) : json(nullptr)},
          {"method", "every Triton kernel at its limit (its bytes at the measured bandwidth), the rest of the call as "
                     "torch.compile has it: torch.compile's median / (that median - the kernels' saving); gpu_alone "
                     "over its GPU-alone median"}};
}

}  // namespace

json to_json(const Report& r) {
  json modules = json::array();
  int improved = 0, kernels = 0, screened = 0, gated = 0;
  for (const auto& m : r.modules) {
    json ks = json::array();
    for (const auto& k : m.kernels) {
      kernels++;
      screened += k.outcome.screened;
      gated += k.outcome.gated;
      improved += k.outcome.status == "improved";
      json o = {{"status", k.outcome.status}, {"why", k.outcome.why}, {"winner_config", k.outcome.winner_config},
                {"screened", k.outcome.screened}, {"gated", k.outcome.gated}, {"rejected_by", k.outcome.rejected_by},
                {"winner_origin", k.outcome.winner_origin}, {"attempts", k.outcome.attempts}};
      if (!k.outcome.winner_family.empty()) o["winner_family"] = k.outcome.winner_family;
      if (!k.outcome.rewrites_skipped.empty()) o["rewrites_skipped"] = k.outcome.rewrites_skipped;
      if (k.outcome.library_entry != 0) o["library_entry"] = k.outcome.library_entry;
      if (k.outcome.worker >= 0) o["worker"] = k.outcome.worker;
      if (k.outcome.status == "improved") {
        o["kernel_speedup"] = estimate_json(k.outcome.kernel_speedup);
        o["after_ms"] = k.outcome.after_ms;
        const double after_gbps = k.outcome.after_ms > 0 ? k.profile.bytes / (k.outcome.after_ms * 1e6) : 0;
        o["after_achieved_gbps"] = after_gbps;
        o["after_roofline_fraction"] = m.bandwidth_gbps > 0 ? after_gbps / m.bandwidth_gbps : 0;
      }
      json plan = {{"score", k.plan.score}, {"budget", k.plan.budget}, {"why", k.plan.why}};
      ks.push_back({{"name", k.profile.name}, {"aten_ops", k.aten_ops}, {"profile", k.profile.to_json()},
                    {"baseline_config", k.baseline_config}, {"plan", plan}, {"outcome", o}});
    }
    modules.push_back({{"index", m.index}, {"module_ms", m.module_ms}, {"bandwidth_gbps", m.bandwidth_gbps},
                       {"vendor_calls", m.vendor_calls}, {"kernels", ks}, {"stitch_decision", m.stitch_decision}});
  }
  const auto& e = r.end_to_end;
  json e2e = {{"passed", e.passed}, {"ran", e.ran}, {"failure", e.failure}, {"why", e.why}, {"substituted", e.substituted},
              {"expected_substitutions", e.expected_substitutions}, {"max_err_optimized", e.max_err_optimized},
              {"max_err_baseline", e.max_err_baseline}, {"mismatches", e.mismatches},
              {"eager_ms", {{"median", e.eager_ms}, {"mean", e.eager_mean_ms}}},
              {"baseline_ms", {{"median", e.baseline_ms}, {"mean", e.baseline_mean_ms}}},
              {"optimized_ms", {{"median", e.optimized_ms}, {"mean", e.optimized_mean_ms}}},
              {"speedup_vs_compile", estimate_json(e.speedup)},
              {"speedup_vs_eager", e.optimized_ms > 0 ? e.eager_ms / e.optimized_ms : 0.0}, {"trials", e.trials},
              {"method", "CUDA events; 3 warm-up calls; L2 flushed (256 MB write) before each trial; "
                         "eager, torch.compile and optimized interleaved; median and mean"}};
  if (json c = run_ceiling(r); !c.is_null()) e2e["ceiling"] = std::move(c);
  if (e.gpu_baseline_ms > 0 && e.gpu_optimized_ms > 0) {
    e2e["gpu_ms"] = {{"eager", e.gpu_eager_ms}, {"baseline", e.gpu_baseline_ms}, {"optimized", e.gpu_optimized_ms},
                     {"method", "the same calls, medians, with the GPU held busy before each start event until the "
                                "host has issued the call: GPU time alone; end-to-end ms minus this = the host time "
                                "per call that the L2 flush does not hide"}};
  }
  json cost = cost_json(r.cost, screened, gated);
  json memory = memory_json(cost, r.problem_work);
  json summary = {{"headline", headline(r)}, {"improved", r.improved()}, {"kernels_kept", r.kernels_kept}, {"kernels", kernels},
                  {"kernels_improved", improved}, {"correct", e.passed}, {"memory", memory}};
  json out = {{"kernelopt", util::version()}, {"problem", r.problem}, {"problem_hash", r.problem_hash},
          {"out_dir", r.out_dir}, {"versions", r.versions}, {"options", r.options}, {"summary", summary},
          {"modules", modules}, {"end_to_end", e2e}, {"reverted_why", r.reverted_why},
          {"reverted_check", r.reverted_check}, {"input_kind", r.input_kind}, {"llm", r.llm}, {"helion", r.helion}, {"library", r.library},
          {"problem_work", r.problem_work}, {"cost", cost}, {"memory", memory}};
  if (!r.decisions.is_null()) out["decisions"] = r.decisions;
  return out;
}

namespace {

/// The title, headline, device and versions (and a Helion run's export).
std::string markdown_header(const json& j) {
  std::string md = fmt::format("# kernelopt report: {}\n\n**{}**\n\n", j["problem"].get<std::string>(),
                               j["summary"]["headline"].get<std::string>());
  const auto& v = j["versions"];
  md += fmt::format("Device: {}; torch {}; triton {}; kernelopt {}.\n\n", v.value("gpu", "?"), v.value("torch", "?"),
                    v.value("triton", "?"), j["kernelopt"].get<std::string>());
  if (j.contains("helion") && j["helion"].is_object()) {
    const auto& h = j["helion"];
    md += fmt::format("Helion kernel `{}` (Helion {}), {}: `{}`; optimized as its generated Triton code, `{}`.\n\n",
                      h.value("kernel", "?"), h.value("helion", "?"), h.value("config_source", "?"),
                      h.value("config", "?"), h.value("path", "?"));
  }
  return md;
}

/// The end-to-end table, ceiling, device memory, speedup and correctness lines, a revert.
std::string markdown_end_to_end(const json& j) {
  std::string md;
  const auto& e = j["end_to_end"];
  const json gpu = e.value("gpu_ms", json());  // absent under the interpreter and in older reports
  md += gpu.is_object() ? "## End to end\n\n| | median ms | mean ms | GPU alone ms | host ms |\n|---|---:|---:|---:|---:|\n"
                        : "## End to end\n\n| | median ms | mean ms |\n|---|---:|---:|\n";
  for (const char* k : {"eager", "baseline", "optimized"}) {
    const std::string key = std::string(k) + "_ms";
    const double median = e[key]["median"].get<double>();
    md += fmt::format("| {} | {:.4f} | {:.4f} |", key, median, e[key]["mean"].get<double>());
    if (gpu.is_object()) {
      const double alone = gpu.value(k, 0.0);
      md += fmt::format(" {:.4f} | {:.4f} |", alone, std::max(0.0, median - alone));
    }
    md += "\n";
  }
  if (gpu.is_object()) md += "\nGPU alone: " + gpu.value("method", std::string()) + ".\n";
  if (const json c = e.value("ceiling", json()); c.is_object()) {
    md += fmt::format("\nCeiling: with every Triton kernel at its limit (its bytes at the measured bandwidth) and the rest "
                      "of the call as torch.compile has it, this model could be at most {:.3f}x faster end to end",
                      c.value("end_to_end", 0.0));
    if (c["gpu_alone"].is_number()) md += fmt::format(" ({:.3f}x with the GPU alone)", c["gpu_alone"].get<double>());
    md += "; kernelopt rewrites only the Triton kernels.\n";
  }
  if (const json m = j.value("memory", json()); m.is_object() && m["peak_gb"].is_number()) {
    md += fmt::format("\nDevice memory: peak {:.2f} GB (in `{}`)", m["peak_gb"].get<double>(),
                      m.value("peak_op", std::string("?")));
    if (m["factor"].is_number()) {
      md += fmt::format(", {:.2f}x the problem's working set of {:.2f} GB", m["factor"].get<double>(),
                        m["working_set_gb"].get<double>());
    }
    md += ".\n";
  }
  const auto& s = e["speedup_vs_compile"];
  md += fmt::format("\nSpeedup vs torch.compile: {:.3f}x (95% CI [{:.3f}, {:.3f}], {} trials each). {}\n\n",
                    s["speedup"].get<double>(), s["ci_low"].get<double>(), s["ci_high"].get<double>(),
                    e["trials"].get<int>(), e["method"].get<std::string>());
  md += fmt::format("Correctness on fresh seeds: {} ({}); max |err| vs float64 eager: optimized {:.3g}, "
                    "torch.compile {:.3g}; modules substituted {}/{}.\n\n",
                    e["passed"].get<bool>() ? "pass" : "FAIL", e["why"].get<std::string>(),
                    e["max_err_optimized"].get<double>(), e["max_err_baseline"].get<double>(),
                    e["substituted"].get<int>(), e["expected_substitutions"].get<int>());
  if (!j["reverted_why"].get<std::string>().empty()) {
    md += "The optimized modules were reverted to the baseline: " + j["reverted_why"].get<std::string>() + "\n\n";
  }
  return md;
}

/// One section per module: its kernels, the gates per kernel, each kernel's candidates, the stitch.
std::string markdown_modules(const json& j) {
  std::string md;
  for (const auto& m : j["modules"]) {
    md += fmt::format("## Module {} ({:.4f} ms)\n\n", m["index"].get<int>(), m["module_ms"].get<double>());
    md += fmt::format("Vendor calls kept as the compiler chose: {}.\n\n",
                      m["vendor_calls"].empty() ? "none" : fmt::format("{}", fmt::join(m["vendor_calls"], ", ")));
    md += "| kernel | kind | before ms | share | % of bandwidth | after ms | % after | outcome |\n";
    md += "|---|---|---:|---:|---:|---:|---:|---|\n";
    for (const auto& k : m["kernels"]) {
      const auto& p = k["profile"];
      const auto& o = k["outcome"];
      const bool imp = o["status"] == "improved";
      // a two-pass row read from memory twice: the fraction counting the re-reads, where they explain it
      const std::string rereads = p.contains("fraction_with_rereads")
                                      ? fmt::format(" ({:.0f}% counting its row re-reads)",
                                                    100 * p["fraction_with_rereads"].get<double>())
                                      : "";
      md += fmt::format("| `{}` | {} | {:.4f} | {:.0f}% | {:.0f}%{} | {} | {} | {}: {} |\n", k["name"].get<std::string>(),
                        p["kind"].get<std::string>(), p["time_ms"].get<double>(), 100 * p["share"].get<double>(),
                        100 * p["roofline_fraction"].get<double>(), rereads,
                        imp ? fmt::format("{:.4f}", o["after_ms"].get<double>()) : "-",
                        imp ? fmt::format("{:.0f}%", 100 * o["after_roofline_fraction"].get<double>()) : "-",
                        o["status"].get<std::string>(), o["why"].get<std::string>());
    }
    md += "\nGates per kernel (candidates rejected by each gate; screened = configs timed, gated = sent through "
          "gates 2-4):\n\n";
    for (const auto& k : m["kernels"]) {
      const auto& o = k["outcome"];
      md += fmt::format("- `{}`: plan: {}; screened {}, gated {}, rejected {}\n", k["name"].get<std::string>(),
                        k["plan"]["why"].get<std::string>(), o["screened"].get<int>(), o["gated"].get<int>(),
                        o["rejected_by"].dump());
    }
    for (const auto& k : m["kernels"]) {
      const auto& attempts = k["outcome"].value("attempts", json::array());
      if (attempts.empty()) continue;
      md += fmt::format("\nCandidates of `{}` (origin, candidate, verdict):\n\n", k["name"].get<std::string>());
      for (const auto& a : attempts) {
        md += fmt::format("- {} `{}`: {}{}\n", a["origin"].get<std::string>(), a["label"].get<std::string>(),
                          a["passed"].get<bool>() ? "passed all four gates, " : "rejected by " + a["gate"].get<std::string>() + " gate: ",
                          a["reason"].get<std::string>());
      }
    }
    md += "\n" + m["stitch_decision"].get<std::string>() + ".\n\n";
  }
  return md;
}

/// The problem's work, the run's cost, the kernel library and the language models (each where reported).
std::string markdown_problem_cost_library_llm(const json& j) {
  std::string md;
  if (j.contains("problem_work") && j["problem_work"].is_object()) {
    const auto& w = j["problem_work"];
    md += fmt::format("## Problem\n\nMinimum bytes (inputs, parameters and buffers, outputs; each storage once): {:.1f} MB; "
                      "FLOPs: {:.4g} ({}).\n\n",
                      w.value("min_bytes", 0.0) / 1e6, w.value("flops", 0.0), w.value("flop_counter", std::string("?")));
  }
  if (j.contains("cost") && j["cost"].is_object()) {
    const auto& c = j["cost"];
    md += fmt::format("## Cost\n\nWall {:.1f} s; GPU {:.1f} s; compile {:.1f} s; all worker requests {:.1f} s; "
                      "candidates screened {}, gated {}{}{}.\n\n",
                      c.value("wall_s", 0.0), c.value("gpu_s", 0.0), c.value("compile_s", 0.0), c.value("worker_s", 0.0),
                      c.value("candidates_screened", 0), c.value("candidates_gated", 0),
                      c.value("workers", 1) > 1
                          ? fmt::format("; {} workers searched kernels at once (GPU and worker seconds are their sum)",
                                        c.value("workers", 1))
                          : "",
                      c.value("continued", false) ? " (this invocation of a continued run)" : "");
    if (c.contains("requests") && c["requests"].is_object() && !c["requests"].empty()) {
      md += "| worker op | requests | seconds |\n|---|---:|---:|\n";
      for (const auto& [op, t] : c["requests"].items()) {
        md += fmt::format("| {} | {} | {:.2f} |\n", op, t.value("requests", 0), t.value("seconds", 0.0));
      }
      md += "\n";
    }
  }
  if (j.contains("library") && j["library"].is_object()) {
    const auto& lib = j["library"];
    md += "## Kernel library\n\n";
    md += fmt::format("`{}`: {} kernel(s) from the library (verified again), {} verified winner(s) written.\n",
                      lib.value("path", std::string("?")), lib.value("reused", json::array()).size(),
                      lib.value("written", json::array()).size());
    for (const auto& w : lib.value("written", json::array())) {
      md += fmt::format("- `{}` ({}): {}\n", w.value("kernel", std::string("?")),
                        w.value("fingerprint", std::string("?")).substr(0, 12), w.value("result", std::string("?")));
    }
    md += "\n";
  }
  if (j.contains("llm") && j["llm"].is_object()) {
    const auto& l = j["llm"];
    md += "## Language models\n\n";
    const auto& t = l.value("total", json::object());
    md += fmt::format("{} request(s), {} answered from the store; {} input and {} output tokens; ${:.4f}.\n\n",
                      t.value("requests", 0), t.value("cached", 0), t.value("input_tokens", 0LL),
                      t.value("output_tokens", 0LL), t.value("cost_usd", 0.0));
    if (l.contains("roles") && l["roles"].is_object()) {
      md += "| agent | provider | requests | cached | input tokens | output tokens | USD |\n|---|---|---:|---:|---:|---:|---:|\n";
      for (const auto& [role, u] : l["roles"].items()) {
        md += fmt::format("| {} | {} | {} | {} | {} | {} | {:.4f} |\n", role, u.value("provider", std::string("-")),
                          u.value("requests", 0), u.value("cached", 0), u.value("input_tokens", 0LL),
                          u.value("output_tokens", 0LL), u.value("cost_usd", 0.0));
      }
    }
    for (const auto& f : l.value("fallbacks", json::array())) {
      md += "\nFell back to the offline agents: " + (f.is_string() ? f.get<std::string>() : f.dump()) + "\n";
    }
    md += "\n";
  }
  return md;
}

}  // namespace

/// --decisions: every whole-model decision tried, its verdict, speedup over torch.compile default with its
/// interval, and why it was kept or not.
std::string markdown_decisions(const json& j) {
  if (!j.contains("decisions") || !j["decisions"].is_object()) return "";
  const json& d = j["decisions"];
  const json& dropped = d.value("dropped", json());
  const std::string drop = dropped.is_object() ? fmt::format(" ({} passed its gates; the end-to-end check dropped it: {})",
                                                             dropped.value("name", "?"), dropped.value("why", ""))
                                               : "";
  std::string md = fmt::format("## Whole-model decisions\n\nKept: **{}**{}.\n\n| decision | verdict | speedup vs "
                               "torch.compile default [interval] | seconds | why |\n|---|---|---|---:|---|\n",
                               d.value("kept", "?"), drop);
  for (const auto& t : d.value("tried", json::array())) {
    const json& s = t.value("speedup", json());
    const std::string speed = s.is_object() ? fmt::format("{:.3f}x [{:.3f}, {:.3f}]", s.value("speedup", 0.0),
                                                          s.value("ci_low", 0.0), s.value("ci_high", 0.0))
                                            : "-";
    std::string why = t.value("why", "");
    if (!t.value("gate", "").empty()) why = "gate " + t.value("gate", "") + ": " + why;
    const json& secs = t.value("seconds", json());
    const std::string seconds = secs.is_number() ? fmt::format("{:.0f}", secs.get<double>()) : "-";
    md += fmt::format("| {} | {} | {} | {} | {} |\n", t.value("name", "?"), t.value("status", "?"), speed, seconds, why);
  }
  return md + "\n";
}

std::string to_markdown(const json& j) {
  return markdown_header(j) + markdown_decisions(j) + markdown_end_to_end(j) + markdown_modules(j) +
         markdown_problem_cost_library_llm(j);
}

void write(const Report& r, const std::filesystem::path& dir) {
  json j = to_json(r);
  util::write_file_atomic(dir / "report.json", j.dump(1) + "\n");
  util::write_file_atomic(dir / "report.md", to_markdown(j));
}

}  // namespace kernelopt::report
