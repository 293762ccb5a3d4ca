// The bench harness's selection of problems and merging of bench directories (no GPU: rows come from report JSON).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "bench/bench.hpp"
#include "bench_test_reports.hpp"
#include "engine/optimize.hpp"
#include "util/fs.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kernelopt::bench;
using namespace bench_test;
using kernelopt::engine::UserError;

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

TEST(BenchBench, SelectsSortedPythonFilesSkippingHelpers) {
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

TEST(BenchBench, SmallProblemsAreSelectedWithTheRestAndLeftOutByLevel) {
  BenchOptions o;
  o.problems_dir = make_tree();
  fs::create_directories(o.problems_dir / "small");
  std::ofstream(o.problems_dir / "small" / "e_softmax.py") << "# x\n";
  EXPECT_EQ(select_problems(o).size(), 5u);
  EXPECT_EQ(level_of("small/e_softmax.py"), "small");
  o.level = 1;
  EXPECT_EQ(select_problems(o), (std::vector<fs::path>{"level1/a_softmax.py", "level1/b_norm.py"}));
}

TEST(BenchBench, ShardsPartitionTheSelection) {
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

TEST(BenchBench, MergeAggregatesShardsAgain) {
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

TEST(BenchBench, MergeRefusesDuplicatesUnfinishedMissingAndItsOwnInput) {
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

TEST(BenchBench, MergeWithLaterWinsTakesARerunsRowAndSaysWhatItReplaced) {
  fs::path first = bench_dir("f", {"level3/a.py", "level3/b.py"}, 1.0);
  fs::path rerun = bench_dir("g", {"level3/b.py"}, 4.0);
  fs::path out = fs::temp_directory_path() / ("ko_merge_out4_" + std::to_string(::getpid()));
  fs::remove_all(out);
  EXPECT_THROW(merge_bench({first, rerun}, out), UserError);  // still refused without it
  const json merged = merge_bench({first, rerun}, out, "merged", true);
  ASSERT_EQ(merged["problems"].size(), 2u);
  EXPECT_EQ(merged["problems"][1]["problem"], "level3/b.py");
  EXPECT_NEAR(merged["aggregate"]["overall"]["geomean_speedup"].get<double>(), 2.0, 1e-9);  // sqrt(1 * 4)
  EXPECT_FALSE(merged["merged_from"][0].contains("replaced"));
  EXPECT_EQ(merged["merged_from"][1]["replaced"],
            json::parse(R"([{"problem": "level3/b.py", "from": ")" + first.string() + R"("}])"));
  const std::string md = kernelopt::util::read_file(out / "bench.md");
  EXPECT_NE(md.find("(shard 1/2, 1 problems); its rows replace the earlier ones of level3/b.py\n"), std::string::npos) << md;
}

TEST(BenchBench, MergeRendersOldRowsBesideRowsWithRoofline) {
  // an older shard: rows without "kernels" and "roofline"
  fs::path old = bench_dir("old", {"level1/x.py"}, 1.2);
  json bench = json::parse(kernelopt::util::read_file(old / "bench.json"));
  for (auto& r : bench["problems"]) {
    r.erase("kernels");
    r.erase("roofline");
  }
  bench.erase("aggregate");
  std::ofstream(old / "bench.json") << bench.dump();
  // a new shard with the real softmax report
  fs::path fresh = fs::temp_directory_path() / ("ko_merge_" + std::to_string(::getpid()) + "_fresh");
  fs::remove_all(fresh);
  fs::create_directories(fresh);
  std::vector<json> rows = {bench_row("level1/softmax.py", softmax_report(), "")};
  std::ofstream(fresh / "bench.json") << json{{"problems", rows}, {"aggregate", aggregate(rows)}, {"shard", "2/2"}}.dump();

  fs::path out = fs::temp_directory_path() / ("ko_merge_out3_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const json merged = merge_bench({old, fresh}, out);
  EXPECT_EQ(merged["aggregate"]["overall"]["roofline"]["problems"], 1);
  const std::string md = kernelopt::util::read_file(out / "bench.md");
  EXPECT_NE(md.find("% of bandwidth before → after"), std::string::npos);
  EXPECT_NE(md.find("| 80% → 93% |"), std::string::npos) << md;  // softmax: 0.796 -> 0.926
  EXPECT_NE(md.find("median of 1 problems with Triton kernels): 80% → 93%."), std::string::npos) << md;
  const size_t x = md.find("| level1/x.py |");
  ASSERT_NE(x, std::string::npos);
  EXPECT_NE(md.substr(x, md.find('\n', x) - x).find("| 1 | - | - |"), std::string::npos);  // old row: 1 kernel, no fraction, no wall time
  EXPECT_TRUE(fs::exists(out / "bench.html"));
}

TEST(BenchBench, MergeCarriesCostAndProblemRooflineBesideOlderRows) {
  // an older shard: rows without the cost fields, "kernels" and "roofline"
  fs::path old = bench_dir("old2", {"level1/x.py"}, 1.2);
  json bench = json::parse(kernelopt::util::read_file(old / "bench.json"));
  for (auto& r : bench["problems"]) {
    for (const char* k : {"gpu_s", "compile_s", "wall_s", "kernels", "roofline"}) r.erase(k);
  }
  std::ofstream(old / "bench.json") << bench.dump();
  fs::path fresh = fs::temp_directory_path() / ("ko_merge_" + std::to_string(::getpid()) + "_fresh2");
  fs::remove_all(fresh);
  fs::create_directories(fresh);
  std::vector<json> rows = {bench_row("level1/softmax.py", softmax_report_with_work_and_cost(), ""),
                            bench_row("level1/y_failed.py", json(), "boom")};
  std::ofstream(fresh / "bench.json") << json{{"problems", rows}, {"aggregate", aggregate(rows)}, {"shard", "2/2"}}.dump();

  fs::path out = fs::temp_directory_path() / ("ko_merge_out4_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const json merged = merge_bench({old, fresh}, out);
  const json& softmax = merged["problems"][0];
  ASSERT_EQ(softmax["problem"], "level1/softmax.py");
  EXPECT_DOUBLE_EQ(softmax["gpu_s"].get<double>(), 12.25);
  EXPECT_EQ(softmax["roofline"]["bound"], "memory");
  const json& x = merged["problems"][1];
  ASSERT_EQ(x["problem"], "level1/x.py");
  EXPECT_FALSE(x.contains("gpu_s"));  // carried as it was
  EXPECT_EQ(merged["aggregate"]["overall"]["cost"]["problems"], 1);
  EXPECT_DOUBLE_EQ(merged["aggregate"]["overall"]["cost"]["total_gpu_s"].get<double>(), 12.25);
  EXPECT_EQ(merged["aggregate"]["overall"]["roofline"]["e2e_problems"], 1);

  const std::string md = kernelopt::util::read_file(out / "bench.md");
  const std::string header = line_of(md, "| problem |");
  const auto columns = cells(header);
  ASSERT_EQ(columns.size(), 19u) << header;
  EXPECT_EQ(columns[6], "host ms");
  EXPECT_EQ(columns[7], "GPU-alone speedup");
  EXPECT_EQ(columns[8], "ceiling (end to end / GPU alone)");
  EXPECT_EQ(columns[11], "min MB");
  EXPECT_EQ(columns[12], "GFLOP");
  EXPECT_EQ(columns[13], "bound");
  EXPECT_EQ(columns[14], "% of roofline end to end before → after");
  EXPECT_EQ(columns[15], "wall s");
  EXPECT_EQ(columns[16], "GPU s");
  EXPECT_EQ(columns[17], "compile s");
  EXPECT_EQ(columns[18], "screened / gated");
  const auto s = cells(line_of(md, "| level1/softmax.py |"));
  ASSERT_EQ(s.size(), 19u);
  EXPECT_EQ(s[6], "-");      // the fixture predates the GPU-alone timing
  EXPECT_EQ(s[7], "-");
  EXPECT_EQ(s[8], "1.134");  // 0.1369 / (0.1369 - (0.0797 - 0.0634)); no GPU-alone time in the fixture
  EXPECT_EQ(s[10], "80% → 93%");
  EXPECT_EQ(s[11], "268.4");  // MB
  EXPECT_EQ(s[12], "0");      // GFLOP
  EXPECT_EQ(s[13], "memory");
  EXPECT_EQ(s[14], "46% → 51%");
  EXPECT_EQ(s[15], "42");  // wall 41.5 s
  EXPECT_EQ(s[16], "12");
  EXPECT_EQ(s[17], "8.5");
  EXPECT_EQ(s[18], "25 / 4");
  const auto o = cells(line_of(md, "| level1/x.py |"));
  ASSERT_EQ(o.size(), 19u);
  for (size_t i : {6, 7, 8}) EXPECT_EQ(o[i], "-") << "column " << columns[i];
  for (size_t i = 11; i <= 17; ++i) EXPECT_EQ(o[i], "-") << "column " << columns[i];
  EXPECT_EQ(cells(line_of(md, "| level1/y_failed.py |")).size(), 19u);
  const auto level = cells(line_of(md, "| level1 |"));
  ASSERT_EQ(level.size(), cells(line_of(md, "| level |")).size());
  EXPECT_EQ(level[3], "1.134");  // ceiling: the one row that has one
  EXPECT_EQ(level[10], "46% → 51%");
  EXPECT_EQ(level[11], "12 / 12");
  EXPECT_NE(md.find("Cost: GPU 12 s in total, median 12 s per problem (1 problems)"), std::string::npos) << md;
  EXPECT_NE(md.find("pointwise ops are not counted"), std::string::npos);
}
