// The bench harness. See bench.hpp.
#include "engine/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine/optimize.hpp"
#include "report/bench_html.hpp"
#include "util/fs.hpp"
#include "verify/stats.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kernelopt::engine {

namespace {

constexpr double kFastP[] = {1.0, 1.1, 1.5, 2.0};  // thresholds the field reports fast_p at

constexpr const char* kMethod =
    "speedup = torch.compile time / optimized time per model call (median, CUDA events, L2 flushed, interleaved); "
    "baseline kept = 1.0; correctness vs float64 eager on fresh seeds; % of bandwidth = the Triton kernels' bytes "
    "(distinct tensor storages their launches take, not vendor calls) / their time per model call (median, each "
    "kernel timed alone; after = the kept candidate's time) / the measured device copy bandwidth";

std::string level_of(const fs::path& relative) {
  for (const auto& part : relative) {
    const std::string s = part.string();
    if (s.rfind("level", 0) == 0) return s;
  }
  return "other";
}

/// obj[key] when it is a number, else null.
json number_or_null(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number()) return nullptr;
  return obj[key];
}

double number_or(const json& obj, const char* key, double fallback) {
  const json v = number_or_null(obj, key);
  return v.is_null() ? fallback : v.get<double>();
}

std::string string_or_empty(const json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && obj[key].is_string() ? obj[key].get<std::string>() : "";
}

const json& member(const json& obj, const char* key) {
  static const json empty = json::object();
  return obj.is_object() && obj.contains(key) ? obj[key] : empty;
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

/// The problem's Triton kernels together: bytes, time and the fraction of the measured bandwidth they reach
/// before and after; null without a Triton kernel. A fraction is null where the bandwidth was not measured
/// or there is no time or no bytes.
json problem_roofline(const json& report, const json& kernels) {
  if (kernels.empty()) return nullptr;
  double bytes = 0, before = 0, after = 0, flops = 0;
  bool all_flops = true;
  for (const auto& k : kernels) {
    bytes += k["bytes"].get<double>();
    before += k["before_ms"].get<double>();
    after += k["after_ms"].get<double>();
    if (k["flops"].is_number()) flops += k["flops"].get<double>();
    else all_flops = false;
  }
  double bandwidth = 0;  // the device's measured copy bandwidth; the highest when modules measured it apart
  const json& modules = member(report, "modules");
  if (modules.is_array()) {
    for (const auto& m : modules) bandwidth = std::max(bandwidth, number_or(m, "bandwidth_gbps", 0.0));
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
  if (!error.empty()) {
    row.update({{"status", "failed"}, {"error", error}, {"speedup", 1.0}, {"correct", nullptr},
                {"kernels", json::array()}, {"roofline", nullptr}});
    return row;
  }
  const auto& e = report["end_to_end"];
  const bool correct = e.value("passed", false);
  const bool improved = report["summary"].value("improved", false);
  int kernels = 0;
  for (const auto& m : report["modules"]) kernels += static_cast<int>(m["kernels"].size());
  double speedup = 1.0;  // a kept baseline counts as 1.0
  if (improved && correct) speedup = e["speedup_vs_compile"]["speedup"].get<double>();
  json per_kernel = kernel_rows(report, improved && correct);
  json roofline = problem_roofline(report, per_kernel);
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
      if (roof.is_object() && roof["fraction_before"].is_number() && roof["fraction_after"].is_number()) {
        before.push_back(roof["fraction_before"].get<double>());
        after.push_back(roof["fraction_after"].get<double>());
      }
    }
    json roofline = {{"problems", before.size()},
                     {"median_fraction_before", before.empty() ? json(nullptr) : json(verify::median(before))},
                     {"median_fraction_after", after.empty() ? json(nullptr) : json(verify::median(after))}};
    return json{{"problems", rs.size()}, {"geomean_speedup", rs.empty() ? 1.0 : std::exp(log_sum / rs.size())},
                {"improved", improved}, {"incorrect", incorrect}, {"failed", failed},
                {"no_triton_kernel", no_kernel}, {"fast_p", fast}, {"roofline", roofline}};
  };
  std::map<std::string, std::vector<const json*>> by_level;
  std::vector<const json*> all;
  for (const auto& r : rows) {
    by_level[r["level"].get<std::string>()].push_back(&r);
    all.push_back(&r);
  }
  json out = {{"overall", summarize(all)}, {"levels", json::object()}};
  for (const auto& [level, rs] : by_level) out["levels"][level] = summarize(rs);
  return out;
}

namespace {

std::string percent_or_dash(const json& fraction) {
  return fraction.is_number() ? fmt::format("{:.0f}%", 100 * fraction.get<double>()) : "-";
}

/// "80% → 93%": the fraction of the measured bandwidth before → after; "-" where unknown.
std::string bandwidth_before_after(const json& before, const json& after) {
  if (!before.is_number() && !after.is_number()) return "-";
  return percent_or_dash(before) + " → " + percent_or_dash(after);
}

std::string markdown(const json& bench) {
  std::string md = "# kernelopt bench\n\n";
  if (bench.contains("merged_from")) {
    md += "Merged from:\n";
    for (const auto& src : bench["merged_from"]) {
      md += fmt::format("- `{}` (shard {}, {} problems)\n", src["dir"].get<std::string>(), src["shard"].get<std::string>(),
                        src["problems"].get<int>());
    }
    md += "\n";
  }
  const auto& o = bench["aggregate"]["overall"];
  md += fmt::format("{} problems; geomean speedup vs torch.compile {:.3f} (baseline kept = 1.0); improved {}; "
                    "incorrect {}; failed {}; no Triton kernel {}.\n\n",
                    o["problems"].get<int>(), o["geomean_speedup"].get<double>(), o["improved"].get<int>(),
                    o["incorrect"].get<int>(), o["failed"].get<int>(), o["no_triton_kernel"].get<int>());
  const json& roof = member(o, "roofline");
  if (number_or(roof, "problems", 0) > 0) {
    md += fmt::format("Share of the measured memory bandwidth the Triton kernels reach (their bytes / their time; "
                      "median of {} problems with Triton kernels): {}.\n\n",
                      roof["problems"].get<int>(),
                      bandwidth_before_after(roof["median_fraction_before"], roof["median_fraction_after"]));
  }
  md += "| level | problems | geomean | improved | fast_1.0 | fast_1.1 | fast_1.5 | fast_2.0 | "
        "median % of bandwidth before → after |\n";
  md += "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [level, s] : bench["aggregate"]["levels"].items()) {
    const auto& f = s["fast_p"];
    const json& lr = member(s, "roofline");
    md += fmt::format("| {} | {} | {:.3f} | {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {} |\n", level,
                      s["problems"].get<int>(), s["geomean_speedup"].get<double>(), s["improved"].get<int>(),
                      f["fast_1.0"].get<double>(), f["fast_1.1"].get<double>(), f["fast_1.5"].get<double>(),
                      f["fast_2.0"].get<double>(),
                      bandwidth_before_after(number_or_null(lr, "median_fraction_before"),
                                             number_or_null(lr, "median_fraction_after")));
  }
  md += "\n| problem | status | speedup | torch.compile ms | optimized ms | eager ms | Triton kernels | "
        "% of bandwidth before → after | wall s | screened / gated |\n";
  md += "|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& r : bench["problems"]) {
    if (r["status"] == "failed") {
      md += fmt::format("| {} | **failed**: {} | 1.000 | | | | | | | |\n", r["problem"].get<std::string>(),
                        r["error"].get<std::string>());
      continue;
    }
    const json wall = r.value("wall_s", json(nullptr));
    const json& rr = member(r, "roofline");
    md += fmt::format("| {} | {}{} | {:.3f} | {:.4f} | {:.4f} | {:.4f} | {} | {} | {} | {} / {} |\n",
                      r["problem"].get<std::string>(), r["status"] == "incorrect" ? "**INCORRECT** " : "",
                      r["status"].get<std::string>(), r["speedup"].get<double>(), r["baseline_ms"].get<double>(),
                      r["optimized_ms"].get<double>(), r["eager_ms"].get<double>(), r["triton_kernels"].get<int>(),
                      bandwidth_before_after(number_or_null(rr, "fraction_before"), number_or_null(rr, "fraction_after")),
                      wall.is_number() ? fmt::format("{:.0f}", wall.get<double>()) : "-",
                      r.value("candidates_screened", 0), r.value("candidates_gated", 0));
  }
  return md;
}

}  // namespace

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
    // cost: wall time of the optimize run (unknown when read back from an earlier invocation), candidates
    row["wall_s"] = reused ? json(nullptr)
                           : json(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    int screened = 0, gated = 0;
    if (report.contains("modules")) {
      for (const auto& m : report["modules"]) {
        for (const auto& k : m["kernels"]) {
          screened += k["outcome"].value("screened", 0);
          gated += k["outcome"].value("gated", 0);
        }
      }
    }
    row["candidates_screened"] = screened;
    row["candidates_gated"] = gated;
    rows.push_back(row);
    json partial = {{"problems", rows}, {"aggregate", aggregate(rows)}};
    util::write_file_atomic(o.out_dir / "bench.json", partial.dump(1) + "\n");
  }
  json bench = {{"problems", rows}, {"aggregate", aggregate(rows)},
                {"shard", fmt::format("{}/{}", o.shard_index, o.shard_count)}, {"method", kMethod}};
  util::write_file_atomic(o.out_dir / "bench.json", bench.dump(1) + "\n");
  util::write_file_atomic(o.out_dir / "bench.md", markdown(bench));
  util::write_file_atomic(o.out_dir / "bench.html", report::bench_html(bench));
  return bench;
}

json merge_bench(const std::vector<fs::path>& bench_dirs, const fs::path& out_dir) {
  if (bench_dirs.empty()) throw UserError("bench merge: no bench directories given");
  std::vector<json> rows;
  std::map<std::string, std::string> origin;  // problem -> the directory it came from
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
    for (const auto& r : bench["problems"]) {
      const std::string name = r.value("problem", "");
      auto [it, fresh] = origin.emplace(name, dir.string());
      if (!fresh) {
        throw UserError(fmt::format("bench merge: {} is in both {} and {}", name, it->second, dir.string()));
      }
      rows.push_back(r);
    }
    sources.push_back({{"dir", dir.string()}, {"shard", bench["shard"]}, {"problems", bench["problems"].size()}});
  }
  std::sort(rows.begin(), rows.end(), [](const json& a, const json& b) { return a["problem"] < b["problem"]; });
  json merged = {{"problems", rows}, {"aggregate", aggregate(rows)}, {"shard", "merged"}, {"merged_from", sources},
                 {"method", kMethod}};
  util::ensure_dir(out_dir);
  util::write_file_atomic(out_dir / "bench.json", merged.dump(1) + "\n");
  util::write_file_atomic(out_dir / "bench.md", markdown(merged));
  util::write_file_atomic(out_dir / "bench.html", report::bench_html(merged));
  return merged;
}

}  // namespace kernelopt::engine
