// The bench harness's selection and aggregates (no GPU: rows come from report JSON).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "engine/bench.hpp"
#include "engine/optimize.hpp"
#include "util/fs.hpp"

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

/// tests/fixtures/reports/softmax_h200.report.json: a real run of examples/softmax.py on an H200.
json softmax_report() {
  return json::parse(kernelopt::util::read_file(fs::path(KERNELOPT_SOURCE_DIR) / "tests" / "fixtures" / "reports" /
                                                "softmax_h200.report.json"));
}

// The fixture's numbers, read off the file by hand: one reduction kernel, improved.
constexpr double kBytes = 268435456.0;               // profile.bytes (256 MiB)
constexpr double kBeforeMs = 0.07966400310397148;    // profile.time_ms
constexpr double kAfterMs = 0.0684799998998642;      // outcome.after_ms
constexpr double kBandwidth = 4231.327954246574;     // modules[0].bandwidth_gbps

}  // namespace

TEST(EngineBench, RowCarriesTritonKernelsAndRooflineOfARealReport) {
  const json row = bench_row("level1/softmax.py", softmax_report(), "");
  ASSERT_EQ(row["status"], "improved");
  ASSERT_EQ(row["kernels"].size(), 1u);
  const json& k = row["kernels"][0];
  EXPECT_EQ(k["name"], "triton_red_fused__softmax_exp_prepare_softmax_online_sub_0");
  EXPECT_EQ(k["kind"], "reduction");
  EXPECT_EQ(k["bound"], "memory");
  EXPECT_EQ(k["module"], 0);
  EXPECT_EQ(k["status"], "improved");
  EXPECT_DOUBLE_EQ(k["before_ms"].get<double>(), kBeforeMs);
  EXPECT_DOUBLE_EQ(k["after_ms"].get<double>(), kAfterMs);
  EXPECT_DOUBLE_EQ(k["bytes"].get<double>(), kBytes);
  EXPECT_TRUE(k["flops"].is_null());  // the worker does not count FLOPs; the profile has none
  EXPECT_NEAR(k["roofline_before"].get<double>(), 0.7963446478858685, 1e-12);
  EXPECT_NEAR(k["roofline_after"].get<double>(), 0.9264019070352935, 1e-12);

  const json& r = row["roofline"];
  ASSERT_TRUE(r.is_object());
  EXPECT_DOUBLE_EQ(r["bytes"].get<double>(), kBytes);
  EXPECT_TRUE(r["flops"].is_null());
  EXPECT_DOUBLE_EQ(r["bandwidth_gbps"].get<double>(), kBandwidth);
  // 268435456 B / 0.079664 ms = 3369.6 GB/s; / 4231.3 GB/s = 0.796: the Profiler's own fraction
  EXPECT_NEAR(r["fraction_before"].get<double>(), kBytes / (kBeforeMs * 1e6) / kBandwidth, 1e-12);
  EXPECT_NEAR(r["fraction_before"].get<double>(), 0.7963446478858685, 1e-9);
  EXPECT_NEAR(r["fraction_after"].get<double>(), 0.9264019070352935, 1e-9);  // 3919.9 GB/s
}

TEST(EngineBench, RevertedRunKeepsBeforeTimesAfter) {
  json report = softmax_report();
  report["summary"]["improved"] = false;  // as when the end-to-end check reverted the stitched module
  report["reverted_why"] = "end to end 0.98x is not faster than the baseline";
  const json row = bench_row("level1/softmax.py", report, "");
  EXPECT_EQ(row["status"], "baseline kept");
  const json& k = row["kernels"][0];
  EXPECT_EQ(k["status"], "reverted");
  EXPECT_DOUBLE_EQ(k["after_ms"].get<double>(), kBeforeMs);
  EXPECT_EQ(k["roofline_after"], k["roofline_before"]);
  EXPECT_DOUBLE_EQ(row["roofline"]["fraction_after"].get<double>(), row["roofline"]["fraction_before"].get<double>());
}

TEST(EngineBench, RooflineNullWithoutTritonKernelOrBandwidth) {
  const json none = bench_row("level1/c.py", report(false, true, 1.0, 0), "");
  EXPECT_TRUE(none["kernels"].empty());
  EXPECT_TRUE(none["roofline"].is_null());
  EXPECT_TRUE(bench_row("level1/f.py", json(), "boom")["roofline"].is_null());
  json unmeasured = softmax_report();
  unmeasured["modules"][0]["bandwidth_gbps"] = 0.0;
  const json r = bench_row("level1/softmax.py", unmeasured, "")["roofline"];
  EXPECT_DOUBLE_EQ(r["bytes"].get<double>(), kBytes);
  EXPECT_TRUE(r["bandwidth_gbps"].is_null());
  EXPECT_TRUE(r["fraction_before"].is_null());
  EXPECT_TRUE(r["fraction_after"].is_null());
}

TEST(EngineBench, AggregateMediansOfBandwidthFractions) {
  auto with_fractions = [](const std::string& problem, double before, double after) {
    json row = bench_row(problem, report(true, true, 1.5, 1), "");
    row["roofline"] = {{"bytes", 1.0}, {"fraction_before", before}, {"fraction_after", after}};
    return row;
  };
  std::vector<json> rows = {with_fractions("level1/a.py", 0.2, 0.5), with_fractions("level1/b.py", 0.6, 0.7),
                            with_fractions("level1/c.py", 0.4, 0.9), with_fractions("level2/d.py", 0.1, 0.3),
                            bench_row("level2/e.py", report(false, true, 1.0, 0), ""),  // no Triton kernel
                            bench_row("level2/f.py", json(), "boom")};
  json old = bench_row("level2/g.py", report(true, true, 1.2, 1), "");  // a row of an older bench.json
  old.erase("roofline");
  old.erase("kernels");
  rows.push_back(old);
  const json agg = aggregate(rows);
  const json& l1 = agg["levels"]["level1"]["roofline"];
  EXPECT_EQ(l1["problems"], 3);
  EXPECT_NEAR(l1["median_fraction_before"].get<double>(), 0.4, 1e-12);
  EXPECT_NEAR(l1["median_fraction_after"].get<double>(), 0.7, 1e-12);
  const json& all = agg["overall"]["roofline"];
  EXPECT_EQ(all["problems"], 4);
  EXPECT_NEAR(all["median_fraction_before"].get<double>(), (0.2 + 0.4) / 2, 1e-12);
  EXPECT_NEAR(all["median_fraction_after"].get<double>(), (0.5 + 0.7) / 2, 1e-12);
  const json& l2 = agg["levels"]["level2"]["roofline"];
  EXPECT_EQ(l2["problems"], 1);
  EXPECT_NEAR(l2["median_fraction_after"].get<double>(), 0.3, 1e-12);
  const json none = aggregate({bench_row("level3/x.py", json(), "boom")})["overall"]["roofline"];
  EXPECT_EQ(none["problems"], 0);
  EXPECT_TRUE(none["median_fraction_before"].is_null());
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

TEST(EngineBench, MergeRendersOldRowsBesideRowsWithRoofline) {
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
