// The bench harness. See bench.hpp.
#include "engine/bench.hpp"
#include "engine/bench_fields.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "agents/profiler.hpp"
#include "engine/optimize.hpp"
#include "report/bench_html.hpp"
#include "report/report.hpp"
#include "util/fs.hpp"
#include "verify/stats.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kernelopt::engine {

using namespace fields;

namespace {

constexpr double kFastP[] = {1.0, 1.1, 1.5, 2.0};  // thresholds the field reports fast_p at

constexpr const char* kMethod =
    "speedup = torch.compile time / optimized time per model call (median, CUDA events, L2 flushed, interleaved); "
    "baseline kept = 1.0; correctness vs float64 eager on fresh seeds; % of bandwidth = the Triton kernels' bytes "
    "(distinct tensor storages their launches take, not vendor calls) / their time per model call (median, each "
    "kernel timed alone; after = the kept candidate's time) / the measured device copy bandwidth; % of roofline end to "
    "end = the problem's roofline time (min bytes / measured bandwidth or FLOPs / peak, whichever is longer) / its time "
    "per model call (before = torch.compile, after = optimized when kept); min bytes = the model's inputs, parameters, "
    "buffers and outputs, each storage once; FLOPs = torch.utils.flop_counter.FlopCounterMode over one eager forward "
    "(matmuls, convolutions, attention; pointwise ops are not counted); peak = NVIDIA's datasheet fp32 dense figure "
    "for the device (not measured); gpu s = the worker's profile, check, model_check, bench and final_check requests, "
    "compile s = its capture and compile requests, timed by the engine; host ms = torch.compile's end-to-end median "
    "minus its median timed with the host's time to issue the call hidden (the GPU held busy before each start "
    "event); GPU-alone speedup = the ratio of those hidden-host medians, torch.compile / optimized (1.0 when the "
    "baseline was kept); ceiling = torch.compile ms / (torch.compile ms - the sum over its Triton kernels of their "
    "time alone minus their limit, bytes / measured bandwidth): the speedup if every Triton kernel reached its "
    "limit and all else stayed; GPU-alone ceiling = the same over the GPU-alone "
    "median (no host time at all)";

/// Problems under a `small/` folder: a suite's host-bound sizes, reported as their own level and kept out of the
/// overall aggregate (bench/problems/small/).
constexpr const char* kSmallLevel = "small";

std::string level_of(const fs::path& relative) {
  for (const auto& part : relative) {
    const std::string s = part.string();
    if (s.rfind("level", 0) == 0 || s == kSmallLevel) return s;
  }
  return "other";
}

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
                     {"before_ms", before},
                     {"after_ms", applied ? o["after_ms"].get<double>() : before},
                     {"bytes", number_or(p, "bytes", 0.0)},
                     {"flops", number_or_null(p, "flops")},
                     {"roofline_before", roofline_before},
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

std::vector<fs::path> select_problems(const BenchOptions& o) {
  if (!fs::is_directory(o.problems_dir)) {
    throw UserError(fmt::format("{}: no such directory", o.problems_dir.string()));
  }
  if (o.shard_count < 1 || o.shard_index < 1 || o.shard_index > o.shard_count) {
    throw UserError(fmt::format("--shard {}/{}: want i/n with 1 <= i <= n", o.shard_index, o.shard_count));
  }
  std::vector<fs::path> all;
  for (const auto& e : fs::recursive_directory_iterator(o.problems_dir)) {
    if (!e.is_regular_file() || e.path().extension() != ".py") continue;
    fs::path rel = fs::relative(e.path(), o.problems_dir);
    if (rel.filename().string().rfind("_", 0) == 0) continue;  // __init__.py and helpers
    if (!o.filter.empty() && rel.string().find(o.filter) == std::string::npos) continue;
    if (o.level > 0 && level_of(rel) != fmt::format("level{}", o.level)) continue;
    all.push_back(rel);
  }
  std::sort(all.begin(), all.end());
  std::vector<fs::path> mine;
  for (size_t i = 0; i < all.size(); ++i) {
    if (static_cast<int>(i % o.shard_count) == o.shard_index - 1) mine.push_back(all[i]);
  }
  return mine;
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
  json per_kernel = kernel_rows(report, improved && correct);
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

json aggregate(const std::vector<json>& rows) {
  auto summarize = [](const std::vector<const json*>& rs) {
    double log_sum = 0;
    int improved = 0, incorrect = 0, failed = 0, no_kernel = 0;
    json fast = json::object();
    for (const json* r : rs) {
      log_sum += std::log((*r)["speedup"].get<double>());
      improved += (*r)["status"] == "improved";
      incorrect += (*r)["status"] == "incorrect";
      failed += (*r)["status"] == "failed";
      no_kernel += r->value("triton_kernels", -1) == 0;
    }
    for (double p : kFastP) {
      int n = 0;
      for (const json* r : rs) n += (*r)["correct"] == true && (*r)["speedup"].get<double>() > p;
      fast[fmt::format("fast_{:.1f}", p)] = rs.empty() ? 0.0 : static_cast<double>(n) / rs.size();
    }
    // roofline: medians over the problems whose Triton kernels have both fractions (rows from older
    // bench.json files have no "roofline" and are left out)
    std::vector<double> before, after;
    for (const json* r : rs) {
      const json& roof = member(*r, "roofline");
      // number_or_null, not operator[]: a missing key on a const json is undefined behaviour
      const json b = number_or_null(roof, "fraction_before"), a = number_or_null(roof, "fraction_after");
      if (b.is_number() && a.is_number()) {
        before.push_back(b.get<double>());
        after.push_back(a.get<double>());
      }
    }
    // end to end against the problem's roofline: medians over the problems with both fractions
    std::vector<double> e2e_before, e2e_after;
    int compute_bound = 0;
    for (const json* r : rs) {
      const json& roof = member(*r, "roofline");
      if (!roof.is_object()) continue;
      compute_bound += roof.value("bound", json()) == "compute";
      const json b = number_or_null(roof, "e2e_fraction_before"), a = number_or_null(roof, "e2e_fraction_after");
      if (b.is_number() && a.is_number()) {
        e2e_before.push_back(b.get<double>());
        e2e_after.push_back(a.get<double>());
      }
    }
    auto median_or_null = [](std::vector<double> v) { return v.empty() ? json(nullptr) : json(verify::median(v)); };
    // what the model call costs apart from the kernels: the ceiling's geomean, torch.compile's host time
    // and the speedup of the GPU time alone, over the rows that have each (older rows have none)
    std::vector<double> ceilings, gpu_ceilings, host, gpu_speedups;
    for (const json* r : rs) {
      if (const json v = number_or_null(*r, "ceiling"); v.is_number()) ceilings.push_back(v.get<double>());
      if (const json v = number_or_null(*r, "gpu_ceiling"); v.is_number()) gpu_ceilings.push_back(v.get<double>());
      if (const json v = number_or_null(*r, "host_ms"); v.is_number()) host.push_back(v.get<double>());
      if (const json v = number_or_null(*r, "gpu_speedup"); v.is_number()) gpu_speedups.push_back(v.get<double>());
    }
    auto geomean_or_null = [](const std::vector<double>& v) {
      double logs = 0;
      for (double x : v) logs += std::log(x);
      return v.empty() ? json(nullptr) : json(std::exp(logs / v.size()));
    };
    json limits = {{"ceiling_problems", ceilings.size()},
                   {"ceiling_geomean", geomean_or_null(ceilings)},
                   {"host_problems", host.size()},
                   {"median_host_ms", median_or_null(host)},
                   {"gpu_geomean_speedup", geomean_or_null(gpu_speedups)},
                   {"gpu_ceiling_geomean", geomean_or_null(gpu_ceilings)}};
    json roofline = {{"problems", before.size()},
                     {"median_fraction_before", median_or_null(before)},
                     {"median_fraction_after", median_or_null(after)},
                     {"e2e_problems", e2e_before.size()},
                     {"median_e2e_fraction_before", median_or_null(e2e_before)},
                     {"median_e2e_fraction_after", median_or_null(e2e_after)},
                     {"compute_bound", compute_bound}};
    // cost: medians and totals over the rows that have each figure (older rows have none of them)
    std::vector<double> gpu, compile, wall;
    int screened = 0, gated = 0;
    for (const json* r : rs) {
      if (const json v = number_or_null(*r, "gpu_s"); v.is_number()) gpu.push_back(v.get<double>());
      if (const json v = number_or_null(*r, "compile_s"); v.is_number()) compile.push_back(v.get<double>());
      if (const json v = number_or_null(*r, "wall_s"); v.is_number()) wall.push_back(v.get<double>());
      screened += static_cast<int>(number_or(*r, "candidates_screened", 0));
      gated += static_cast<int>(number_or(*r, "candidates_gated", 0));
    }
    auto total_or_null = [](const std::vector<double>& v) {
      double t = 0;
      for (double x : v) t += x;
      return v.empty() ? json(nullptr) : json(t);
    };
    json cost = {{"problems", gpu.size()},
                 {"median_gpu_s", median_or_null(gpu)},
                 {"total_gpu_s", total_or_null(gpu)},
                 {"median_compile_s", median_or_null(compile)},
                 {"total_compile_s", total_or_null(compile)},
                 {"median_wall_s", median_or_null(wall)},
                 {"total_wall_s", total_or_null(wall)},
                 {"candidates_screened", screened},
                 {"candidates_gated", gated}};
    return json{{"problems", rs.size()}, {"geomean_speedup", rs.empty() ? 1.0 : std::exp(log_sum / rs.size())},
                {"improved", improved}, {"incorrect", incorrect}, {"failed", failed},
                {"no_triton_kernel", no_kernel}, {"fast_p", fast}, {"roofline", roofline}, {"limits", limits},
                {"cost", cost}};
  };
  std::map<std::string, std::vector<const json*>> by_level;
  std::vector<const json*> all;
  for (const auto& r : rows) {
    by_level[r["level"].get<std::string>()].push_back(&r);
    if (r["level"] != kSmallLevel) all.push_back(&r);
  }
  json out = {{"overall", summarize(all)}, {"levels", json::object()}};
  for (const auto& [level, rs] : by_level) out["levels"][level] = summarize(rs);
  return out;
}

json run_bench(const BenchOptions& o) {
  auto problems = select_problems(o);
  if (problems.empty()) throw UserError(fmt::format("{}: no problem files selected", o.problems_dir.string()));
  util::ensure_dir(o.out_dir);
  std::vector<json> rows;
  for (size_t i = 0; i < problems.size(); ++i) {
    const fs::path& rel = problems[i];
    fs::path run_out = o.out_dir / "runs" / fs::path(rel).replace_extension("");
    spdlog::info("=== [{}/{}] {}", i + 1, problems.size(), rel.string());
    json report;
    std::string error;
    bool reused = false;
    const auto started = std::chrono::steady_clock::now();
    if (fs::exists(run_out / "report.json")) {  // resumable: a finished problem is read back
      report = json::parse(util::read_file(run_out / "report.json"));
      spdlog::info("  finished earlier; reusing {}", (run_out / "report.json").string());
      reused = true;
    } else {
      OptimizeOptions po = o.optimize;
      po.problem = o.problems_dir / rel;
      po.out_dir = run_out;
      try {
        report = optimize(po);
      } catch (const std::exception& e) {  // one problem's failure never stops the others
        error = e.what();
        spdlog::error("  {}: {}", rel.string(), error);
      }
    }
    json row = bench_row(rel, report, error);
    // a run read back keeps the wall time its report.json recorded (null in older reports)
    if (!reused) row["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    rows.push_back(row);
    json partial = {{"problems", rows}, {"aggregate", aggregate(rows)}};
    util::write_file_atomic(o.out_dir / "bench.json", partial.dump(1) + "\n");
  }
  json bench = {{"problems", rows}, {"aggregate", aggregate(rows)},
                {"shard", fmt::format("{}/{}", o.shard_index, o.shard_count)}, {"method", kMethod}};
  util::write_file_atomic(o.out_dir / "bench.json", bench.dump(1) + "\n");
  util::write_file_atomic(o.out_dir / "bench.md", bench_markdown(bench));
  util::write_file_atomic(o.out_dir / "bench.html", report::bench_html(bench));
  return bench;
}

json merge_bench(const std::vector<fs::path>& bench_dirs, const fs::path& out_dir, const std::string& shard,
                 bool later_wins) {
  if (bench_dirs.empty()) throw UserError("bench merge: no bench directories given");
  std::map<std::string, std::pair<json, size_t>> rows;  // problem -> its row, index of the input it came from
  json sources = json::array();
  for (const auto& dir : bench_dirs) {
    if (fs::exists(out_dir) && fs::exists(dir) && fs::equivalent(dir, out_dir)) {
      throw UserError(fmt::format("bench merge: --out {} is one of the inputs; give a new directory", out_dir.string()));
    }
    const fs::path file = dir / "bench.json";
    if (!fs::exists(file)) throw UserError(fmt::format("bench merge: {} has no bench.json", dir.string()));
    json bench;
    try {
      bench = json::parse(util::read_file(file));
    } catch (const json::exception& e) {
      throw UserError(fmt::format("bench merge: {} is not valid JSON ({})", file.string(), e.what()));
    }
    if (!bench.contains("shard") || !bench.contains("problems")) {
      throw UserError(fmt::format("bench merge: {} is an unfinished bench (rerun it to finish, then merge)", file.string()));
    }
    json source = {{"dir", dir.string()}, {"shard", bench["shard"]}, {"problems", bench["problems"].size()}};
    for (const auto& r : bench["problems"]) {
      const std::string name = r.value("problem", "");
      auto [it, fresh] = rows.try_emplace(name, r, sources.size());
      if (fresh) continue;
      const json earlier = sources[it->second.second]["dir"];
      if (!later_wins) {
        throw UserError(fmt::format("bench merge: {} is in both {} and {} (--later-wins takes the last)", name,
                                    earlier.get<std::string>(), dir.string()));
      }
      source["replaced"].push_back({{"problem", name}, {"from", earlier}});
      it->second = {r, sources.size()};
    }
    sources.push_back(source);
  }
  std::vector<json> sorted;  // by problem name (the map's order)
  for (auto& [name, row] : rows) sorted.push_back(std::move(row.first));
  json merged = {{"problems", sorted}, {"aggregate", aggregate(sorted)}, {"shard", shard}, {"merged_from", sources},
                 {"method", kMethod}};
  util::ensure_dir(out_dir);
  util::write_file_atomic(out_dir / "bench.json", merged.dump(1) + "\n");
  util::write_file_atomic(out_dir / "bench.md", bench_markdown(merged));
  util::write_file_atomic(out_dir / "bench.html", report::bench_html(merged));
  return merged;
}

}  // namespace kernelopt::engine
