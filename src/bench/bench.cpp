// The bench harness: selection, the runs, bench.json and its pages, merging. See bench.hpp.
#include "bench/bench.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine/optimize.hpp"
#include "report/bench_html.hpp"
#include "report/bench_markdown.hpp"
#include "util/fs.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kernelopt::bench {

using engine::UserError;

namespace {

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

struct ProblemRun {
  json row;
  bool reused = false;  ///< its finished report.json was read back, not rerun
};

/// One problem through optimize into runs_dir/<problem> (or its finished report read back), as a bench row.
ProblemRun run_problem(const BenchOptions& o, engine::OptimizeOptions po, const fs::path& rel,
                       const fs::path& runs_dir) {
  const fs::path run_out = runs_dir / fs::path(rel).replace_extension("");
  json report;
  std::string error;
  bool reused = false;
  if (fs::exists(run_out / "report.json")) {  // resumable: a finished problem is read back
    report = json::parse(util::read_file(run_out / "report.json"));
    spdlog::info("  finished earlier; reusing {}", (run_out / "report.json").string());
    reused = true;
  } else {
    po.problem = o.problems_dir / rel;
    po.out_dir = run_out;
    try {
      report = engine::optimize(po);
    } catch (const std::exception& e) {  // one problem's failure never stops the others
      error = e.what();
      spdlog::error("  {}: {}", rel.string(), error);
    }
  }
  return {bench_row(rel, report, error), reused};
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

json run_bench(const BenchOptions& o) {
  auto problems = select_problems(o);
  if (problems.empty()) throw UserError(fmt::format("{}: no problem files selected", o.problems_dir.string()));
  util::ensure_dir(o.out_dir);
  std::vector<json> rows;
  for (size_t i = 0; i < problems.size(); ++i) {
    const fs::path& rel = problems[i];
    spdlog::info("=== [{}/{}] {}", i + 1, problems.size(), rel.string());
    const auto started = std::chrono::steady_clock::now();
    ProblemRun run;
    if (o.optimize.decisions) {
      // kernelopt without decisions first (its kernels go to the library, where the second run finds them),
      // then with: the row is the second, the first under row.decisions.without_decisions
      engine::OptimizeOptions kernels_only = o.optimize;
      kernels_only.decisions = false;
      spdlog::info("  without decisions ({})", (o.out_dir / "runs-without-decisions").string());
      const ProblemRun without = run_problem(o, kernels_only, rel, o.out_dir / "runs-without-decisions");
      spdlog::info("  with decisions");
      run = run_problem(o, o.optimize, rel, o.out_dir / "runs");
      attach_without_decisions(run.row, without.row);
    } else {
      run = run_problem(o, o.optimize, rel, o.out_dir / "runs");
    }
    // a run read back keeps the wall time its report.json recorded (null in older reports)
    if (!run.reused) {
      run.row["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    }
    rows.push_back(std::move(run.row));
    json partial = {{"problems", rows}, {"aggregate", aggregate(rows)}};
    util::write_file_atomic(o.out_dir / "bench.json", partial.dump(1) + "\n");
  }
  json bench = {{"problems", rows}, {"aggregate", aggregate(rows)},
                {"shard", fmt::format("{}/{}", o.shard_index, o.shard_count)}, {"method", kMethod}};
  util::write_file_atomic(o.out_dir / "bench.json", bench.dump(1) + "\n");
  util::write_file_atomic(o.out_dir / "bench.md", report::bench_markdown(bench));
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
  util::write_file_atomic(out_dir / "bench.md", report::bench_markdown(merged));
  util::write_file_atomic(out_dir / "bench.html", report::bench_html(merged));
  return merged;
}

}  // namespace kernelopt::bench
