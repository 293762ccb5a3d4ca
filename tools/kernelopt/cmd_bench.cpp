// `kernelopt bench DIR --out BENCH_DIR`: every problem under DIR through optimize; the field's aggregates.
// `kernelopt bench DIR --gpus N`: the same, spread over N GPUs by child `kernelopt bench` processes, merged.
// `kernelopt bench --adversarial [DIR] --out DIR`: the adversarial suite, the gate that caught each case.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "bench/adversarial.hpp"
#include "bench/bench.hpp"
#include "bench/bench_gpus.hpp"
#include "engine/gpus.hpp"
#include "engine/optimize.hpp"

namespace kernelopt::cli {

namespace {

/// Prints the table; exit status 1 when a case was not caught by its expected gate or a control did not pass.
int run_adversarial(const bench::BenchOptions& b) {
  bench::AdversarialOptions o;
  o.dir = b.problems_dir.empty() ? std::filesystem::path("tests/adversarial") : b.problems_dir;
  o.out_dir = b.out_dir;
  o.filter = b.filter;
  o.optimize = b.optimize;
  auto result = bench::run_adversarial(o);
  std::printf("%-28s %-12s %-13s %-6s %s\n", "case", "expected", "caught by", "result", "reason");
  for (const auto& r : result["cases"]) {
    std::string reason = r["reason"].get<std::string>();
    if (reason.size() > 100) reason = reason.substr(0, 97) + "...";
    std::printf("%-28s %-12s %-13s %-6s %s\n", r["case"].get<std::string>().c_str(),
                r["expected"].get<std::string>().c_str(),
                r["caught_by"].is_string() ? r["caught_by"].get<std::string>().c_str() : "-",
                r["result"].get<std::string>().c_str(), reason.c_str());
  }
  const auto& s = result["summary"];
  std::printf("%d cases tried: %d of %d adversarial caught by the expected gate, %d of %d control(s) passed, "
              "%d skipped, %d failed (see %s)\n",
              s["tried"].get<int>(), s["caught_as_expected"].get<int>(), s["adversarial_tried"].get<int>(),
              s["controls_passed"].get<int>(), s["controls"].get<int>(), s["skipped"].get<int>(),
              s["failed"].get<int>(), (o.out_dir / "adversarial.md").string().c_str());
  return s["failed"].get<int>() > 0 ? 1 : 0;
}

/// The command line of a child bench (after the binary): the same options, the child's shard, out, workspace, library.
std::vector<std::string> child_args(const bench::BenchOptions& c) {
  std::vector<std::string> a;
  if (spdlog::should_log(spdlog::level::debug)) a.push_back("--verbose");
  const auto& p = c.optimize;
  const std::vector<std::string> same = {
      "bench", c.problems_dir.string(), "--out", c.out_dir.string(), "--gpus", "1", "--shard",
      fmt::format("{}/{}", c.shard_index, c.shard_count), "--device", p.device, "--timeout",
      std::to_string(p.request_timeout_s), "--workspace", p.workspace.string(), "--library",
      p.library_path().string(), "--python", p.python, "--budget", std::to_string(p.budget), "--trials",
      std::to_string(p.gate_trials)};
  a.insert(a.end(), same.begin(), same.end());
  if (!c.filter.empty()) a.insert(a.end(), {"--filter", c.filter});
  if (c.level > 0) a.insert(a.end(), {"--level", std::to_string(c.level)});
  if (p.decisions) a.insert(a.end(), {"--decisions", "--decisions-seconds", std::to_string(p.decisions_seconds)});
  if (p.search_seconds > 0) a.insert(a.end(), {"--search-seconds", std::to_string(p.search_seconds)});
  return a;
}

/// One child bench per GPU, merged into the bench directory. Exit status 1 when a problem was incorrect or a
/// child did not finish (the finished ones are merged all the same).
int run_on_gpus(const bench::BenchOptions& o, int gpus, const std::vector<std::string>& visible) {
  const std::vector<std::string> ids = engine::gpu_ids(gpus, o.optimize.device, visible);
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the kernelopt binary (/proc/self/exe): " + ec.message());
  auto result = bench::run_bench_on_gpus(o, ids, self.string(), child_args);
  if (!result.bench.is_null()) {
    const auto& a = result.bench["aggregate"]["overall"];
    std::printf("%d problems from %zu of %d child benches: geomean %.3fx vs torch.compile, %d improved, %d incorrect, %d failed "
                "(see %s)\n",
                a["problems"].get<int>(), result.bench["merged_from"].size(), gpus,
                a["geomean_speedup"].get<double>(), a["improved"].get<int>(), a["incorrect"].get<int>(),
                a["failed"].get<int>(), (o.out_dir / "bench.md").string().c_str());
  }
  for (const auto& f : result.failed) std::fprintf(stderr, "kernelopt: error: %s\n", f.c_str());
  if (result.bench.is_null()) {
    std::fprintf(stderr, "kernelopt: error: no child finished its bench; nothing merged into %s\n",
                 o.out_dir.string().c_str());
    return 1;
  }
  const bool incorrect = result.bench["aggregate"]["overall"]["incorrect"].get<int>() > 0;
  return incorrect || !result.failed.empty() ? 1 : 0;
}

}  // namespace

Runner add_bench(CLI::App& app) {
  auto o = std::make_shared<bench::BenchOptions>();
  auto shard = std::make_shared<std::string>("1/1");
  auto adversarial = std::make_shared<bool>(false);
  auto gpus = std::make_shared<std::string>("1");
  auto* sub = app.add_subcommand("bench", "optimize every KernelBench-format problem under DIR and report the aggregates");
  sub->add_option("dir", o->problems_dir,
                  "directory of problem files (searched recursively); with --adversarial, of cases.json (default "
                  "tests/adversarial)");
  sub->add_flag("--adversarial", *adversarial,
                "run the adversarial cases of DIR through the real gates and print which gate caught each");
  sub->add_option("--device", o->optimize.device, "torch device (cpu: Triton's interpreter; GPU-only cases skipped)")
      ->capture_default_str()
      ->check(torch_device());
  sub->add_flag("--decisions", o->optimize.decisions,
                "each problem is run without, then with whole-model decisions (optimize --decisions); the rows "
                "add torch.compile default, the best torch.compile mode, kernelopt without and with decisions");
  sub->add_option("--decisions-seconds", o->optimize.decisions_seconds,
                  "with --decisions: seconds each problem's decision search may take (0 = no limit)")
      ->capture_default_str()->check(CLI::Range(0, 86400));
  sub->add_option("--search-seconds", o->optimize.search_seconds,
                  "seconds each problem's kernel search may take (0 = no limit): then no further candidate is "
                  "gated, what passed is kept and verified end to end")
      ->capture_default_str()->check(CLI::Range(0, 86400));
  sub->add_option("--timeout", o->optimize.request_timeout_s, "seconds one worker request may take")
      ->capture_default_str()->check(CLI::Range(1, 86400));
  sub->add_option("-o,--out", o->out_dir, "bench directory (runs/, bench.json, bench.md, bench.html); rerun to resume")->required();
  sub->add_option("--filter", o->filter, "only problems whose relative path (with --adversarial: cases whose name) contains this");
  sub->add_option("--level", o->level, "only problems under a level<N> directory")->check(CLI::Range(1, 9));
  sub->add_option("--shard", *shard, "i/n: this machine's share of the problems")->capture_default_str();
  sub->add_option("--gpus", *gpus,
                  "all|N: spread the problems over N GPUs of this machine (all: every visible GPU, 1 without one): "
                  "one child bench per GPU (its share of --shard, output OUT/gpuI, log OUT/gpuI.log, store "
                  "WORKSPACE/gpuI, the same library), merged into OUT; rerun to resume. Within one problem's run, "
                  "candidates are still timed on one GPU (a worker pool across GPUs is not built)")
      ->capture_default_str();
  sub->add_option("--workspace", o->optimize.workspace, "directory of the store shared by runs")->capture_default_str();
  sub->add_option("--library", o->optimize.library,
                  "kernel library file: verified winners are tried first and written back (default: "
                  "WORKSPACE/library.kolib)");
  sub->add_option("--python", o->optimize.python, "python interpreter with torch and triton")->capture_default_str();
  sub->add_option("--budget", o->optimize.budget, "launch configs screened per problem")
      ->capture_default_str()->check(CLI::Range(1, 100000));
  sub->add_option("--trials", o->optimize.gate_trials, "timed trials per series")
      ->capture_default_str()->check(CLI::Range(10, 100000));
  return [o, shard, adversarial, gpus] {
    std::vector<std::string> visible;
    int n = 1;
    if (*gpus != "1") {
      if (*gpus == "all") visible = engine::visible_gpus();
      n = engine::parse_gpus(*gpus, static_cast<int>(visible.size()));
      if (n > 1 && visible.empty()) visible = engine::visible_gpus();
    }
    if (*adversarial) {
      if (n > 1) throw engine::UserError(fmt::format("--gpus {}: the adversarial suite runs on one GPU", *gpus));
      return run_adversarial(*o);
    }
    if (o->problems_dir.empty()) throw engine::UserError("bench: give the directory of problem files (see --help)");
    if (std::sscanf(shard->c_str(), "%d/%d", &o->shard_index, &o->shard_count) != 2) {
      throw engine::UserError(fmt::format("--shard {}: want i/n, e.g. 1/4", *shard));
    }
    if (n > 1) return run_on_gpus(*o, n, visible);
    const auto result = bench::run_bench(*o);
    const auto& a = result["aggregate"]["overall"];
    std::printf("%d problems: geomean %.3fx vs torch.compile, %d improved, %d incorrect, %d failed (see %s)\n",
                a["problems"].get<int>(), a["geomean_speedup"].get<double>(), a["improved"].get<int>(),
                a["incorrect"].get<int>(), a["failed"].get<int>(), (o->out_dir / "bench.md").string().c_str());
    return a["incorrect"].get<int>() > 0 ? 1 : 0;
  };
}

}  // namespace kernelopt::cli
