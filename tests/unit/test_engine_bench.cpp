// The bench harness's selection and aggregates (no GPU: rows come from report JSON).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "engine/bench.hpp"
#include "engine/optimize.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kernelopt::engine;

namespace {

fs::path make_tree() {
  fs::path root = fs::temp_directory_path() / ("ko_bench_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                               std::to_string(reinterpret_cast<uintptr_t>(&root) % 100000));
  fs::remove_all(root);
  for (const char* f : {"level1/a_softmax.py", "level1/b_norm.py", "level2/c_gemm.py", "level2/__init__.py",
                        "level3/d_mlp.py", "level3/notes.txt"}) {
    fs::create_directories((root / f).parent_path());
    std::ofstream(root / f) << "# x\n";
  }
  return root;
}

json report(bool improved, bool passed, double speedup, int kernels) {
  json mods = json::array({{{"kernels", json::array()}}});
  for (int i = 0; i < kernels; ++i) mods[0]["kernels"].push_back(json::object());
  return {{"summary", {{"improved", improved}, {"kernels_improved", improved ? 1 : 0}}},
          {"modules", mods},
          {"end_to_end",
           {{"passed", passed}, {"speedup_vs_compile", {{"speedup", speedup}, {"ci_low", speedup}, {"ci_high", speedup}}},
            {"speedup_vs_eager", 1.0}, {"baseline_ms", {{"median", 1.0}}}, {"optimized_ms", {{"median", 1.0}}},
            {"eager_ms", {{"median", 1.0}}}}}};
}

}  // namespace

TEST(EngineBench, SelectsSortedPythonFilesSkippingHelpers) {
  BenchOptions o;
  o.problems_dir = make_tree();
  auto all = select_problems(o);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0], fs::path("level1/a_softmax.py"));
  EXPECT_EQ(all[3], fs::path("level3/d_mlp.py"));
  o.level = 2;
  EXPECT_EQ(select_problems(o), std::vector<fs::path>{"level2/c_gemm.py"});
  o.level = 0;
  o.filter = "norm";
  EXPECT_EQ(select_problems(o), std::vector<fs::path>{"level1/b_norm.py"});
}

TEST(EngineBench, ShardsPartitionTheSelection) {
  BenchOptions o;
  o.problems_dir = make_tree();
  o.shard_count = 3;
  std::vector<fs::path> seen;
  for (int i = 1; i <= 3; ++i) {
    o.shard_index = i;
    for (auto& p : select_problems(o)) seen.push_back(p);
  }
  std::sort(seen.begin(), seen.end());
  o.shard_count = 1;
  o.shard_index = 1;
  EXPECT_EQ(seen, select_problems(o));
  o.shard_index = 4;
  o.shard_count = 3;
  EXPECT_THROW(select_problems(o), UserError);
}

TEST(EngineBench, KeptBaselineAndIncorrectRunsCountAsOne) {
  auto kept = bench_row("level1/a.py", report(false, true, 0.97, 1), "");
  EXPECT_EQ(kept["status"], "baseline kept");
  EXPECT_DOUBLE_EQ(kept["speedup"].get<double>(), 1.0);
  auto wrong = bench_row("level1/b.py", report(true, false, 3.0, 1), "");
  EXPECT_EQ(wrong["status"], "incorrect");
  EXPECT_DOUBLE_EQ(wrong["speedup"].get<double>(), 1.0);
  auto failed = bench_row("level2/c.py", json(), "boom");
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["level"], "level2");
}

TEST(EngineBench, AggregatesGeomeanImprovedAndFastP) {
  std::vector<json> rows = {bench_row("level1/a.py", report(true, true, 2.0, 1), ""),
                            bench_row("level1/b.py", report(true, true, 1.2, 2), ""),
                            bench_row("level1/c.py", report(false, true, 1.0, 0), ""),
                            bench_row("level2/d.py", report(true, false, 5.0, 1), "")};
  auto agg = aggregate(rows);
  const auto& l1 = agg["levels"]["level1"];
  EXPECT_NEAR(l1["geomean_speedup"].get<double>(), std::cbrt(2.0 * 1.2 * 1.0), 1e-12);
  EXPECT_EQ(l1["improved"], 2);
  EXPECT_EQ(l1["no_triton_kernel"], 1);
  EXPECT_NEAR(l1["fast_p"]["fast_1.0"].get<double>(), 2.0 / 3, 1e-12);
  EXPECT_NEAR(l1["fast_p"]["fast_1.5"].get<double>(), 1.0 / 3, 1e-12);
  EXPECT_EQ(agg["overall"]["incorrect"], 1);
  EXPECT_NEAR(agg["overall"]["fast_p"]["fast_2.0"].get<double>(), 0.0, 1e-12);  // 5x but incorrect never counts
}

namespace {

/// A finished (or unfinished) bench directory holding rows for `problems` with `speedup` each.
fs::path bench_dir(const std::string& name, const std::vector<std::string>& problems, double speedup, bool finished = true) {
  fs::path dir = fs::temp_directory_path() / ("ko_merge_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<json> rows;
  for (const auto& p : problems) rows.push_back(bench_row(p, report(speedup > 1.0, true, speedup, 1), ""));
  json bench = {{"problems", rows}, {"aggregate", aggregate(rows)}};
  if (finished) bench["shard"] = "1/2";
  std::ofstream(dir / "bench.json") << bench.dump();
  return dir;
}

}  // namespace

TEST(EngineBench, MergeAggregatesShardsAgain) {
  fs::path a = bench_dir("a", {"level1/x.py", "level1/z.py"}, 2.0);
  fs::path b = bench_dir("b", {"level1/y.py", "level2/w.py"}, 1.0);
  fs::path out = fs::temp_directory_path() / ("ko_merge_out_" + std::to_string(::getpid()));
  fs::remove_all(out);
  json merged = merge_bench({a, b}, out);
  ASSERT_EQ(merged["problems"].size(), 4u);
  EXPECT_EQ(merged["problems"][1]["problem"], "level1/y.py");  // sorted across inputs
  EXPECT_NEAR(merged["aggregate"]["overall"]["geomean_speedup"].get<double>(), std::sqrt(2.0), 1e-9);
  EXPECT_EQ(merged["aggregate"]["overall"]["improved"], 2);
  EXPECT_EQ(merged["aggregate"]["levels"]["level1"]["problems"], 3);
  EXPECT_EQ(merged["merged_from"].size(), 2u);
  EXPECT_TRUE(fs::exists(out / "bench.md"));
  EXPECT_TRUE(fs::exists(out / "bench.html"));
}

TEST(EngineBench, MergeRefusesDuplicatesUnfinishedMissingAndItsOwnInput) {
  fs::path a = bench_dir("c", {"level1/x.py"}, 1.5);
  fs::path dup = bench_dir("d", {"level1/x.py"}, 1.2);
  fs::path unfinished = bench_dir("e", {"level1/q.py"}, 1.0, false);
  fs::path out = fs::temp_directory_path() / ("ko_merge_out2_" + std::to_string(::getpid()));
  fs::remove_all(out);
  EXPECT_THROW(merge_bench({a, dup}, out), UserError);
  EXPECT_THROW(merge_bench({a, unfinished}, out), UserError);
  EXPECT_THROW(merge_bench({a, out / "nowhere"}, out), UserError);
  EXPECT_THROW(merge_bench({a}, a), UserError);
  EXPECT_THROW(merge_bench({}, out), UserError);
  EXPECT_FALSE(fs::exists(out / "bench.json"));  // nothing written on a refusal
}
