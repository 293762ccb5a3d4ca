// `bench --gpus`: the children's shards partition the parent's, and the
// parent's loop over real child processes (/bin/sh standing in for kernelopt: it copies a bench.json into place).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

#include <fmt/format.h>

#include "bench/bench.hpp"
#include "bench/bench_gpus.hpp"
#include "engine/optimize.hpp"
#include "util/fs.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kernelopt::bench;
using kernelopt::engine::UserError;

namespace {

fs::path temp_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / fmt::format("ko_bench_gpus_{}_{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// `count` problems spread over three level directories.
fs::path problem_tree(const std::string& name, int count) {
  fs::path root = temp_dir(name);
  for (int i = 0; i < count; ++i) {
    fs::path f = root / fmt::format("level{}", 1 + i % 3) / fmt::format("p{:02}.py", i);
    fs::create_directories(f.parent_path());
    std::ofstream(f) << "# x\n";
  }
  return root;
}

}  // namespace

TEST(BenchBenchGpus, ChildShardFormula) {
  EXPECT_EQ(child_shard(1, 1, 1, 2), std::make_pair(1, 2));
  EXPECT_EQ(child_shard(1, 1, 2, 2), std::make_pair(2, 2));
  EXPECT_EQ(child_shard(2, 3, 1, 4), std::make_pair(2, 12));
  EXPECT_EQ(child_shard(2, 3, 4, 4), std::make_pair(11, 12));
  EXPECT_THROW(child_shard(1, 1, 3, 2), std::invalid_argument);
  EXPECT_THROW(child_shard(4, 3, 1, 2), std::invalid_argument);
}

TEST(BenchBenchGpus, ChildrenPartitionTheParentShardExactly) {
  BenchOptions o;
  o.problems_dir = problem_tree("partition", 13);
  for (int m : {1, 2, 3, 5}) {
    for (int s = 1; s <= m; ++s) {
      o.shard_index = s;
      o.shard_count = m;
      const std::vector<fs::path> parent = select_problems(o);
      for (int n : {1, 2, 3, 4, 7}) {
        std::map<fs::path, int> times;
        for (int c = 1; c <= n; ++c) {
          BenchOptions child = o;
          std::tie(child.shard_index, child.shard_count) = child_shard(s, m, c, n);
          for (const auto& p : select_problems(child)) ++times[p];
        }
        std::vector<fs::path> children;
        for (const auto& [p, k] : times) {
          EXPECT_EQ(k, 1) << p << " in " << k << " children; shard " << s << "/" << m << ", " << n << " children";
          children.push_back(p);
        }
        EXPECT_EQ(children, parent) << "shard " << s << "/" << m << ", " << n << " children";
      }
    }
  }
}

TEST(BenchBenchGpus, RunsOneChildPerGpuAndMergesTheFinishedOnes) {
  const fs::path tmp = temp_dir("run");
  BenchOptions o;
  o.problems_dir = problem_tree("run_problems", 5);
  o.out_dir = tmp / "out";
  o.optimize.workspace = tmp / "ws";
  // A stale finished bench.json of child 3: it must not be merged when child 3 fails this time.
  kernelopt::util::ensure_dir(o.out_dir / "gpu3");
  kernelopt::util::write_file_atomic(o.out_dir / "gpu3" / "bench.json",
                              json({{"shard", "3/3"}, {"problems", json::array()}, {"aggregate", json::object()}}).dump());
  std::map<int, BenchOptions> seen;  // child shard index -> its options
  auto args = [&](const BenchOptions& c) -> std::vector<std::string> {
    seen[c.shard_index] = c;
    std::vector<json> rows;
    for (const auto& p : select_problems(c)) rows.push_back(bench_row(p, json(), "not run: a test"));
    const json bench = {{"problems", rows}, {"aggregate", aggregate(rows)},
                        {"shard", fmt::format("{}/{}", c.shard_index, c.shard_count)}};
    const fs::path staged = tmp / fmt::format("staged{}.json", c.shard_index);
    kernelopt::util::write_file_atomic(staged, bench.dump());
    if (c.shard_index == 3) return {"-c", "echo \"kernelopt: error: boom on GPU $CUDA_VISIBLE_DEVICES\" >&2; exit 3"};
    return {"-c", fmt::format("mkdir -p '{}' && echo \"saw GPU $CUDA_VISIBLE_DEVICES\" && echo to-stderr >&2 && "
                              "cp '{}' '{}/bench.json'",
                              c.out_dir.string(), staged.string(), c.out_dir.string())};
  };
  BenchGpusResult r = run_bench_on_gpus(o, {"5", "6", "7"}, "/bin/sh", args);

  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[1].out_dir, o.out_dir / "gpu1");
  EXPECT_EQ(seen[2].optimize.workspace, o.optimize.workspace / "gpu2");     // its own store
  EXPECT_EQ(seen[2].optimize.library, o.optimize.workspace / "library.kolib");  // the parent's library
  EXPECT_EQ(seen[1].shard_count, 3);

  ASSERT_EQ(r.failed.size(), 1u);
  EXPECT_NE(r.failed[0].find("gpu3"), std::string::npos) << r.failed[0];
  EXPECT_NE(r.failed[0].find("exited with code 3"), std::string::npos) << r.failed[0];
  EXPECT_NE(r.failed[0].find("boom on GPU 7"), std::string::npos) << r.failed[0];  // the log's last line

  ASSERT_FALSE(r.bench.is_null());
  EXPECT_EQ(r.bench["shard"], "1/1");
  EXPECT_EQ(r.bench["merged_from"].size(), 2u);
  std::vector<std::string> merged;
  for (const auto& row : r.bench["problems"]) merged.push_back(row["problem"]);
  std::vector<std::string> expected;
  BenchOptions child3 = o;
  std::tie(child3.shard_index, child3.shard_count) = child_shard(1, 1, 3, 3);
  const auto lost = select_problems(child3);
  for (const auto& p : select_problems(o)) {
    if (std::find(lost.begin(), lost.end(), p) == lost.end()) expected.push_back(p.string());
  }
  EXPECT_EQ(merged, expected);
  EXPECT_TRUE(fs::exists(o.out_dir / "bench.md"));

  const std::string log1 = kernelopt::util::read_file(o.out_dir / "gpu1.log");
  EXPECT_NE(log1.find("saw GPU 5"), std::string::npos) << log1;  // stdout, through the parent
  EXPECT_NE(log1.find("to-stderr"), std::string::npos) << log1;  // stderr, appended directly
  EXPECT_NE(log1.find("=== gpu1 (CUDA_VISIBLE_DEVICES=5, shard 1/3): /bin/sh -c"), std::string::npos) << log1;
}

TEST(BenchBenchGpus, AChildWithoutProblemsIsNotStarted) {
  const fs::path tmp = temp_dir("empty");
  BenchOptions o;
  o.problems_dir = problem_tree("empty_problems", 2);
  o.out_dir = tmp / "out";
  o.optimize.workspace = tmp / "ws";
  int started = 0;
  auto args = [&](const BenchOptions&) -> std::vector<std::string> {
    ++started;
    return {"-c", "exit 0"};  // writes no bench.json: a child that did not finish
  };
  BenchGpusResult r = run_bench_on_gpus(o, {"", "", ""}, "/bin/sh", args);
  EXPECT_EQ(started, 2);
  EXPECT_EQ(r.failed.size(), 2u);
  EXPECT_TRUE(r.bench.is_null());
  EXPECT_FALSE(fs::exists(o.out_dir / "gpu3.log"));
}
