// `kernelopt bench DIR --out BENCH_DIR`: every problem under DIR through optimize; the field's aggregates.
#include <cstdio>

#include <fmt/format.h>

#include "commands.hpp"
#include "engine/bench.hpp"
#include "engine/optimize.hpp"

namespace kernelopt::cli {

Runner add_bench(CLI::App& app) {
  auto o = std::make_shared<engine::BenchOptions>();
  auto shard = std::make_shared<std::string>("1/1");
  auto* sub = app.add_subcommand("bench", "optimize every KernelBench-format problem under DIR and report the aggregates");
  sub->add_option("dir", o->problems_dir, "directory of problem files (searched recursively)")->required();
  sub->add_option("-o,--out", o->out_dir, "bench directory (runs/, bench.json, bench.md, bench.html); rerun to resume")->required();
  sub->add_option("--filter", o->filter, "only problems whose relative path contains this");
  sub->add_option("--level", o->level, "only problems under a level<N> directory")->check(CLI::Range(1, 9));
  sub->add_option("--shard", *shard, "i/n: this machine's share of the problems")->capture_default_str();
  sub->add_option("--workspace", o->optimize.workspace, "directory of the store shared by runs")->capture_default_str();
  sub->add_option("--library", o->optimize.library,
                  "kernel library file: verified winners are tried first and written back (default: "
                  "WORKSPACE/library.kolib)");
  sub->add_option("--python", o->optimize.python, "python interpreter with torch and triton")->capture_default_str();
  sub->add_option("--budget", o->optimize.budget, "launch configs screened per problem")
      ->capture_default_str()->check(CLI::Range(1, 100000));
  sub->add_option("--trials", o->optimize.gate_trials, "timed trials per series")
      ->capture_default_str()->check(CLI::Range(10, 100000));
  return [o, shard] {
    if (std::sscanf(shard->c_str(), "%d/%d", &o->shard_index, &o->shard_count) != 2) {
      throw engine::UserError(fmt::format("--shard {}: want i/n, e.g. 1/4", *shard));
    }
    auto bench = engine::run_bench(*o);
    const auto& a = bench["aggregate"]["overall"];
    std::printf("%d problems: geomean %.3fx vs torch.compile, %d improved, %d incorrect, %d failed (see %s)\n",
                a["problems"].get<int>(), a["geomean_speedup"].get<double>(), a["improved"].get<int>(),
                a["incorrect"].get<int>(), a["failed"].get<int>(), (o->out_dir / "bench.md").string().c_str());
    return a["incorrect"].get<int>() > 0 ? 1 : 0;
  };
}

}  // namespace kernelopt::cli
