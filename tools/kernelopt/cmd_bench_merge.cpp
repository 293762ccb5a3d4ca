// `kernelopt bench-merge --out DIR BENCH_DIR...`: one report from shards run elsewhere or earlier.
#include <cstdio>

#include "commands.hpp"
#include "bench/bench.hpp"

namespace kernelopt::cli {

Runner add_bench_merge(CLI::App& app) {
  auto dirs = std::make_shared<std::vector<std::filesystem::path>>();
  auto out = std::make_shared<std::filesystem::path>();
  auto later_wins = std::make_shared<bool>(false);
  auto* sub = app.add_subcommand("bench-merge", "merge finished bench directories (shards) into one report");
  sub->add_option("bench_dirs", *dirs, "bench directories, each with a finished bench.json")->required();
  sub->add_option("-o,--out", *out, "directory for the merged bench.json, bench.md, bench.html")->required();
  sub->add_flag("--later-wins", *later_wins,
                "a problem in several directories is taken from the last one given (merge a re-run over a run)");
  return [dirs, out, later_wins] {
    auto merged = bench::merge_bench(*dirs, *out, "merged", *later_wins);
    const auto& a = merged["aggregate"]["overall"];
    std::printf("%d problems from %zu bench directories: geomean %.3fx vs torch.compile, %d improved, %d incorrect, "
                "%d failed (see %s)\n",
                a["problems"].get<int>(), dirs->size(), a["geomean_speedup"].get<double>(), a["improved"].get<int>(),
                a["incorrect"].get<int>(), a["failed"].get<int>(), (*out / "bench.md").string().c_str());
    return a["incorrect"].get<int>() > 0 ? 1 : 0;
  };
}

}  // namespace kernelopt::cli
