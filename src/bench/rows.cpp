// A bench row from a finished run's report.json. See bench.hpp.
#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "agents/profiler.hpp"
#include "bench/bench.hpp"
#include "report/json_fields.hpp"
#include "report/report.hpp"
#include "verify/stats.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kernelopt::bench {

using namespace report::fields;

namespace {

/// One entry per Triton kernel of the report. `kept`: the optimized model is what the bench counts
/// (row status "improved"), so an improved kernel's after time applies; otherwise after = before and an
/// improved kernel that was reverted says so.
json kernel_rows(const json& report, bool kept) {
  json out = json::array();
  const json& modules = member(report, "modules");
  if (!modules.is_array()) return out;
  for (const auto& m : modules) {
    const json& kernels = member(m, "kernels");
    if (!kernels.is_array()) continue;
    for (const auto& k : kernels) {
      const json& p = member(k, "profile");
      const json& o = member(k, "outcome");
      const std::string status = string_or_empty(o, "status");
      const bool applied = status == "improved" && kept && number_or(o, "after_ms", 0.0) > 0;
      const double before = number_or(p, "time_ms", 0.0);
      const json roofline_before = number_or_null(p, "roofline_fraction");
      std::string name = string_or_empty(k, "name");
      if (name.empty()) name = string_or_empty(p, "name");
      out.push_back({{"name", name},
                     {"module", static_cast<int>(number_or(m, "index", 0.0))},
                     {"kind", string_or_empty(p, "kind")},
                     {"bound", string_or_empty(p, "bound")},
                     {"status", status == "improved" && !kept ? "reverted" : status},
                     {"origin", applied && o.contains("winner_origin") ? o["winner_origin"] : json(nullptr)},
                     {"family", applied && o.contains("winner_family") ? o["winner_family"] : json(nullptr)},
                     // why it stays as it is, where it does: the search's verdict and each rewrite family's reason
                     {"why", applied ? json(nullptr)
                             : status != "improved" ? json(string_or_empty(o, "why"))
                             : json(kept ? "improved, but its time after is not recorded" : "the end-to-end check kept the baseline")},
                     {"rewrites_skipped", o.is_object() && o.contains("rewrites_skipped") ? o["rewrites_skipped"]
                                                                                          : json::array()},
                     {"before_ms", before},
                     {"after_ms", applied ? o["after_ms"].get<double>() : before},
                     {"bytes", number_or(p, "bytes", 0.0)},
                     {"flops", number_or_null(p, "flops")},
                     {"roofline_before", roofline_before},
                     // the original's fraction counting what its row passes read again, where that explains it
                     {"roofline_with_rereads_before", number_or_null(p, "fraction_with_rereads")},
                     {"roofline_after", applied ? number_or_null(o, "after_roofline_fraction") : roofline_before}});
    }
  }
  return out;
}

/// The device's measured copy bandwidth, GB/s; the highest when modules measured it apart; 0 = not measured.
double measured_bandwidth(const json& report) {
  double bandwidth = 0;
  const json& modules = member(report, "modules");
  if (modules.is_array()) {
    for (const auto& m : modules) bandwidth = std::max(bandwidth, number_or(m, "bandwidth_gbps", 0.0));
  }
  return bandwidth;
}

/// The problem's Triton kernels together: bytes, time and the fraction of the measured bandwidth they reach
/// before and after. A fraction is null where the bandwidth was not measured or there is no time or no bytes.
json triton_roofline(const json& kernels, double bandwidth) {
  double bytes = 0, before = 0, after = 0, flops = 0;
  bool all_flops = true;
  for (const auto& k : kernels) {
    bytes += k["bytes"].get<double>();
    before += k["before_ms"].get<double>();
    after += k["after_ms"].get<double>();
    if (k["flops"].is_number()) flops += k["flops"].get<double>();
    else all_flops = false;
  }
  auto fraction = [&](double ms) -> json {
    if (bandwidth <= 0 || ms <= 0 || bytes <= 0) return nullptr;
    return bytes / (ms * 1e6) / bandwidth;  // bytes per ms * 1e-6 = GB/s
  };
  return {{"bytes", bytes},
          {"flops", all_flops ? json(flops) : json(nullptr)},
          {"bandwidth_gbps", bandwidth > 0 ? json(bandwidth) : json(nullptr)},
          {"before_ms", before},
          {"after_ms", after},
          {"fraction_before", fraction(before)},
          {"fraction_after", fraction(after)}};
}

/// The problem end to end against its roofline (see bench.hpp): `work` is report.json's "problem_work".
json end_to_end_roofline(const json& work, double bandwidth, double peak_tflops, double before_ms, double after_ms) {
  const double bytes = number_or(work, "min_bytes", 0.0), flops = number_or(work, "flops", 0.0);
  const double memory_ms = bandwidth > 0 ? bytes / (bandwidth * 1e6) : 0.0;  // GB/s * 1e6 = bytes per ms
  const double compute_ms = peak_tflops > 0 ? flops / (peak_tflops * 1e9) : 0.0;  // TFLOP/s * 1e9 = FLOP per ms
  std::string bound;
  double limit_ms = 0;
  if (flops <= 0 || (peak_tflops > 0 && bandwidth > 0 && memory_ms >= compute_ms)) {
    bound = "memory";  // no counted FLOPs: bytes set the limit
    limit_ms = memory_ms;
  } else if (peak_tflops > 0 && bandwidth > 0) {
    bound = "compute";
    limit_ms = compute_ms;
  }
  auto fraction = [&](double ms) -> json { return limit_ms > 0 && ms > 0 ? json(limit_ms / ms) : json(nullptr); };
  auto positive = [](double v) -> json { return v > 0 ? json(v) : json(nullptr); };
  return {{"min_bytes", number_or_null(work, "min_bytes")},
          {"model_flops", number_or_null(work, "flops")},
          {"intensity", bytes > 0 ? json(flops / bytes) : json(nullptr)},
          {"peak_tflops", positive(peak_tflops)},
          {"ridge", bandwidth > 0 && peak_tflops > 0 ? json(peak_tflops * 1e12 / (bandwidth * 1e9)) : json(nullptr)},
          {"bound", bound.empty() ? json(nullptr) : json(bound)},
          {"limit_ms", positive(limit_ms)},
          {"e2e_fraction_before", fraction(before_ms)},
          {"e2e_fraction_after", fraction(after_ms)}};
}

/// The row's "roofline": the Triton kernels' (null fields without one) and the problem's end to end (without
/// the problem's work, from a standalone kernel or an older report, those fields are absent); null with neither.
json problem_roofline(const json& report, const json& kernels, double before_ms, double after_ms) {
  const json& work = member(report, "problem_work");
  const bool have_work = work.is_object() && work.contains("min_bytes") && work["min_bytes"].is_number();
  if (kernels.empty() && !have_work) return nullptr;
  const double bandwidth = measured_bandwidth(report);
  json out = kernels.empty() ? json{{"bytes", nullptr}, {"flops", nullptr},
                                    {"bandwidth_gbps", bandwidth > 0 ? json(bandwidth) : json(nullptr)},
                                    {"before_ms", nullptr}, {"after_ms", nullptr}, {"fraction_before", nullptr},
                                    {"fraction_after", nullptr}}
                             : triton_roofline(kernels, bandwidth);
  if (have_work) {
    const double peak = agents::datasheet_fp32_tflops(string_or_empty(member(report, "versions"), "gpu"));
    out.update(end_to_end_roofline(work, bandwidth, peak, before_ms, after_ms));
  }
  return out;
}

/// What every Triton kernel of the row at its limit would save per model call, ms (report::ceiling_saving_ms).
/// 0 without a Triton kernel; null where the bandwidth is unknown.
json kernel_saving_ms(const json& kernels, double bandwidth) {
  if (kernels.empty()) return 0.0;
  if (bandwidth <= 0) return nullptr;
  std::vector<report::KernelWork> work;
  for (const auto& k : kernels) work.push_back({k["before_ms"].get<double>(), k["bytes"].get<double>()});
  return report::ceiling_saving_ms(work, bandwidth);
}

/// report::ceiling of a call of `ms`; null where it or the saving is unknown.
json ceiling_of(double ms, const json& saving) {
  return ms > 0 && saving.is_number() ? json(report::ceiling(ms, saving.get<double>())) : json(nullptr);
}

/// Candidates over the report's kernels: {screened, gated}.
std::pair<int, int> candidates(const json& report) {
  int screened = 0, gated = 0;
  const json& modules = member(report, "modules");
  if (!modules.is_array()) return {0, 0};
  for (const auto& m : modules) {
    const json& kernels = member(m, "kernels");
    if (!kernels.is_array()) continue;
    for (const auto& k : kernels) {
      screened += static_cast<int>(number_or(member(k, "outcome"), "screened", 0));
      gated += static_cast<int>(number_or(member(k, "outcome"), "gated", 0));
    }
  }
  return {screened, gated};
}

}  // namespace

std::string level_of(const fs::path& relative) {
  for (const auto& part : relative) {
    const std::string s = part.string();
    if (s.rfind("level", 0) == 0 || s == kSmallLevel) return s;
  }
  return "other";
}

/// --decisions: torch.compile default's time, the best of torch.compile's own modes (the decisions that are
/// pure modes and passed the model gate: rejected only on speed still counts, it is a correct mode) and
/// kernelopt with decisions (the end-to-end optimized median); null fields where a time is unknown.
json decision_columns(const json& report) {
  if (!report.is_object() || !report.contains("decisions") || !report["decisions"].is_object()) return nullptr;
  const json& d = report["decisions"];
  static const std::set<std::string> modes = {"default", "cudagraphs", "max_autotune", "cudagraphs_max_autotune"};
  std::vector<double> defaults;
  std::string best_mode = "default";
  double best_ms = 0;
  for (const auto& t : d.value("tried", json::array())) {
    const json& s = t.value("speedup", json());
    if (!s.is_object()) continue;
    defaults.push_back(s.value("baseline_ms", 0.0));
    const std::string status = t.value("status", "");
    const bool correct = status == "kept" || status == "passed" || t.value("gate", "") == "performance";
    const double ms = s.value("candidate_ms", 0.0);
    if (modes.count(t.value("name", "")) && correct && ms > 0 && (best_ms == 0 || ms < best_ms)) {
      best_ms = ms;
      best_mode = t.value("name", "");
    }
  }
  const double default_ms = defaults.empty() ? 0.0 : verify::median(defaults);
  if (default_ms > 0 && (best_ms == 0 || default_ms <= best_ms)) {
    best_ms = default_ms;
    best_mode = "default";
  }
  const json& e = member(report, "end_to_end");
  const json& dropped = member(d, "dropped");  // passed its gates; the end-to-end check dropped it
  return {{"kept", d.value("kept", "default")},
          {"dropped", dropped.is_object() ? json(dropped.value("name", "")) : json(nullptr)},
          {"compile_default_ms", default_ms > 0 ? json(default_ms) : json(nullptr)},
          {"best_mode", best_mode},
          {"best_mode_ms", best_ms > 0 ? json(best_ms) : json(nullptr)},
          {"with_decisions_ms", number_or_null(member(e, "optimized_ms"), "median")},
          // the decision search's cost: its decide requests (each compiles the model twice and times both)
          {"search_s", number_or_null(member(member(member(report, "cost"), "requests"), "decide"), "seconds")}};
}

json bench_row(const fs::path& relative, const json& report, const std::string& error) {
  json row = {{"problem", relative.string()}, {"level", level_of(relative)}};
  // cost: what the run's report.json says (null in reports from before it had "cost"); run_bench replaces
  // wall_s with its own measurement for a run it made
  const json& cost = member(report, "cost");
  const auto [screened, gated] = candidates(report);
  const json& memory = member(report, "memory");
  row.update({{"peak_gb", number_or_null(memory, "peak_gb")}, {"working_set_gb", number_or_null(memory, "working_set_gb")},
              {"memory_factor", number_or_null(memory, "factor")}});
  row.update({{"wall_s", number_or_null(cost, "wall_s")}, {"gpu_s", number_or_null(cost, "gpu_s")},
              {"compile_s", number_or_null(cost, "compile_s")}, {"candidates_screened", screened},
              {"candidates_gated", gated}});
  if (!error.empty()) {
    row.update({{"status", "failed"}, {"error", error}, {"speedup", 1.0}, {"correct", nullptr},
                {"kernels", json::array()}, {"roofline", nullptr}});
    return row;
  }
  if (report.contains("decisions")) row["decisions"] = decision_columns(report);
  const auto& e = report["end_to_end"];
  if (!e.value("ran", true)) {
    // the check could not run: nothing was judged incorrect (the emitted model is the baseline, unverified)
    const std::string failure = e.value("failure", std::string());
    row.update({{"status", "failed"}, {"error", failure.empty() ? e.value("why", std::string()) : failure},
                {"speedup", 1.0}, {"correct", nullptr}, {"kernels", json::array()}, {"roofline", nullptr}});
    return row;
  }
  const bool correct = e.value("passed", false);
  const bool improved = report["summary"].value("improved", false);
  int kernels = 0;
  for (const auto& m : report["modules"]) kernels += static_cast<int>(m["kernels"].size());
  double speedup = 1.0;  // a kept baseline counts as 1.0
  if (improved && correct) speedup = e["speedup_vs_compile"]["speedup"].get<double>();
  if (row.contains("decisions") && row["decisions"].is_object()) {
    // over the best torch.compile mode: the row's speedup over default (the final check's series) times
    // default / best mode (the decision search's series): each ratio within one interleaved series
    json& d = row["decisions"];
    const json def = number_or_null(d, "compile_default_ms"), best = number_or_null(d, "best_mode_ms");
    d["speedup_vs_best_mode"] = def.is_number() && best.is_number() && best.get<double>() > 0
                                    ? json(speedup * def.get<double>() / best.get<double>())
                                    : json(nullptr);
  }
  // a kept decision improves the model with no kernel changed: its kernels stay as profiled (older reports: improved)
  const bool kernels_kept = report["summary"].value("kernels_kept", improved);
  json per_kernel = kernel_rows(report, kernels_kept && correct);
  const double baseline_ms = number_or(member(e, "baseline_ms"), "median", 0.0);
  const double after_ms = improved && correct ? number_or(member(e, "optimized_ms"), "median", 0.0) : baseline_ms;
  json roofline = problem_roofline(report, per_kernel, baseline_ms, after_ms);
  const json saving = kernel_saving_ms(per_kernel, measured_bandwidth(report));
  // GPU alone (host time hidden; absent under the interpreter and in older reports)
  const json& gpu = member(e, "gpu_ms");
  const double gpu_base = number_or(gpu, "baseline", 0.0), gpu_opt = number_or(gpu, "optimized", 0.0);
  const bool have_gpu = gpu_base > 0 && gpu_opt > 0;
  row.update({{"host_ms", have_gpu ? json(std::max(0.0, baseline_ms - gpu_base)) : json(nullptr)},
              {"gpu_speedup", have_gpu ? json(improved && correct ? gpu_base / gpu_opt : 1.0) : json(nullptr)},
              {"ceiling", ceiling_of(baseline_ms, saving)},
              {"gpu_ceiling", have_gpu ? ceiling_of(gpu_base, saving) : json(nullptr)}});
  row.update({{"status", !correct ? "incorrect" : improved ? "improved" : "baseline kept"},
              {"correct", correct},
              {"speedup", speedup},
              {"speedup_ci", {e["speedup_vs_compile"]["ci_low"], e["speedup_vs_compile"]["ci_high"]}},
              {"speedup_vs_eager", e.value("speedup_vs_eager", 0.0)},
              {"baseline_ms", e["baseline_ms"]["median"]},
              {"optimized_ms", e["optimized_ms"]["median"]},
              {"eager_ms", e["eager_ms"]["median"]},
              {"triton_kernels", kernels},
              {"kernels_improved", report["summary"].value("kernels_improved", 0)},
              {"kernels", std::move(per_kernel)},
              {"roofline", std::move(roofline)}});
  return row;
}

void attach_without_decisions(json& row, const json& without) {
  if (!row.contains("decisions") || !row["decisions"].is_object()) return;
  json w = {{"status", without.value("status", "failed")}, {"speedup", number_or_null(without, "speedup")},
            {"optimized_ms", number_or_null(without, "optimized_ms")},
            {"baseline_ms", number_or_null(without, "baseline_ms")}};
  if (without.contains("speedup_ci")) w["speedup_ci"] = without["speedup_ci"];
  if (without.contains("error")) w["error"] = without["error"];
  row["decisions"]["without_decisions"] = std::move(w);
}

}  // namespace kernelopt::bench
