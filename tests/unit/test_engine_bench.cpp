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

TEST(EngineBench, ACheckThatCouldNotRunIsFailedWithItsCauseNeverIncorrect) {
  json r = report(false, false, 1.0, 1);
  r["end_to_end"]["ran"] = false;
  r["end_to_end"]["failure"] = "out of memory: final_check";
  auto row = bench_row("level1/a.py", r, "");
  EXPECT_EQ(row["status"], "failed");
  EXPECT_EQ(row["error"], "out of memory: final_check");
  EXPECT_TRUE(row["correct"].is_null());
  auto agg = aggregate({row});
  EXPECT_EQ(agg["levels"]["level1"]["incorrect"], 0);
  EXPECT_EQ(agg["levels"]["level1"]["failed"], 1);
  r["end_to_end"]["ran"] = true;  // the check ran and failed: that, and only that, is incorrect
  EXPECT_EQ(bench_row("level1/a.py", r, "")["status"], "incorrect");
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

TEST(EngineBench, SmallProblemsAreTheirOwnLevelOutsideTheOverallAggregate) {
  // bench/problems/small/: the suite's earlier, host-bound sizes; reported as level "small", never mixed into
  // the overall figures or a level's geomean
  std::vector<json> rows = {bench_row("level1/a.py", report(true, true, 2.0, 1), ""),
                            bench_row("small/b.py", report(true, true, 8.0, 1), ""),
                            bench_row("small/c.py", json(), "boom")};
  EXPECT_EQ(rows[1]["level"], "small");
  const json agg = aggregate(rows);
  EXPECT_EQ(agg["overall"]["problems"], 1);
  EXPECT_NEAR(agg["overall"]["geomean_speedup"].get<double>(), 2.0, 1e-12);
  EXPECT_EQ(agg["overall"]["improved"], 1);
  EXPECT_EQ(agg["overall"]["failed"], 0);
  EXPECT_EQ(agg["levels"]["level1"]["problems"], 1);
  EXPECT_EQ(agg["levels"]["small"]["problems"], 2);
  EXPECT_NEAR(agg["levels"]["small"]["geomean_speedup"].get<double>(), std::sqrt(8.0), 1e-12);
  EXPECT_EQ(agg["levels"]["small"]["failed"], 1);

  BenchOptions o;  // selected with the rest, left out by --level N
  o.problems_dir = make_tree();
  fs::create_directories(o.problems_dir / "small");
  std::ofstream(o.problems_dir / "small" / "e_softmax.py") << "# x\n";
  EXPECT_EQ(select_problems(o).size(), 5u);
  o.level = 1;
  EXPECT_EQ(select_problems(o), (std::vector<fs::path>{"level1/a_softmax.py", "level1/b_norm.py"}));
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

TEST(EngineBench, MergeWithLaterWinsTakesARerunsRowAndSaysWhatItReplaced) {
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

namespace {

// What this branch's worker and engine add to report.json, for the fixture's softmax run (which predates
// them): the problem's work as problem_work() computes it for examples/softmax.py, a 4096x8192 fp32 softmax
// (input and output, no counted FLOPs), and a run cost. Added by the test, not measured.
constexpr double kMinBytes = 2.0 * 4096 * 8192 * 4;  // = kBytes: the one kernel reads the input, writes the output
constexpr double kBaselineMs = 0.13689599931240082;  // end_to_end.baseline_ms.median
constexpr double kOptimizedMs = 0.1239520013332367;  // end_to_end.optimized_ms.median

json softmax_report_with_work_and_cost() {
  json report = softmax_report();
  report["problem_work"] = {{"min_bytes", kMinBytes}, {"input_bytes", kMinBytes / 2}, {"flops", 0},
                            {"flop_counter", "FlopCounterMode"}};
  report["cost"] = {{"wall_s", 41.5}, {"gpu_s", 12.25}, {"compile_s", 8.5}, {"worker_s", 30.0}};
  return report;
}

/// A problem with no Triton kernel (a matmul left to cuBLAS): n x n times n x n, fp32, on `gpu`.
json matmul_report(const std::string& gpu, double baseline_ms) {
  const double n = 4096;
  json r = report(false, true, 1.0, 0);
  r["modules"][0]["bandwidth_gbps"] = kBandwidth;
  r["versions"] = {{"gpu", gpu}};
  r["end_to_end"]["baseline_ms"]["median"] = baseline_ms;
  r["problem_work"] = {{"min_bytes", 3 * n * n * 4}, {"flops", 2 * n * n * n}};
  return r;
}

}  // namespace

TEST(EngineBench, RowCarriesTheProblemsRooflineEndToEndAndItsCost) {
  const json row = bench_row("level1/softmax.py", softmax_report_with_work_and_cost(), "");
  const json& r = row["roofline"];
  // the Triton kernels' fields stay as they were
  EXPECT_DOUBLE_EQ(r["bytes"].get<double>(), kBytes);
  EXPECT_NEAR(r["fraction_before"].get<double>(), 0.7963446478858685, 1e-9);
  // the problem: no FLOPs counted, so memory-bound; its roofline time is min bytes / measured bandwidth
  EXPECT_DOUBLE_EQ(r["min_bytes"].get<double>(), kMinBytes);
  EXPECT_DOUBLE_EQ(r["model_flops"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(r["intensity"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(r["peak_tflops"].get<double>(), 67.0);  // NVIDIA H200, datasheet fp32
  EXPECT_NEAR(r["ridge"].get<double>(), 67e12 / (kBandwidth * 1e9), 1e-9);  // ~15.8 FLOP/byte
  EXPECT_EQ(r["bound"], "memory");
  const double limit_ms = kMinBytes / (kBandwidth * 1e6);  // 0.0634 ms
  EXPECT_NEAR(r["limit_ms"].get<double>(), limit_ms, 1e-12);
  EXPECT_NEAR(r["e2e_fraction_before"].get<double>(), limit_ms / kBaselineMs, 1e-12);  // 0.463
  EXPECT_NEAR(r["e2e_fraction_after"].get<double>(), limit_ms / kOptimizedMs, 1e-12);   // 0.512: improved, kept
  // cost from the report; candidates over its kernels
  EXPECT_DOUBLE_EQ(row["wall_s"].get<double>(), 41.5);
  EXPECT_DOUBLE_EQ(row["gpu_s"].get<double>(), 12.25);
  EXPECT_DOUBLE_EQ(row["compile_s"].get<double>(), 8.5);
  EXPECT_EQ(row["candidates_screened"], 25);
  EXPECT_EQ(row["candidates_gated"], 4);
}

TEST(EngineBench, ProblemRooflineOfAKeptBaselineUsesTorchCompileTimeAfter) {
  json report = softmax_report_with_work_and_cost();
  report["summary"]["improved"] = false;
  const json r = bench_row("level1/softmax.py", report, "")["roofline"];
  EXPECT_DOUBLE_EQ(r["e2e_fraction_after"].get<double>(), r["e2e_fraction_before"].get<double>());
}

TEST(EngineBench, ProblemRooflineWithoutTritonKernelIsComputeBoundAboveTheRidge) {
  // 4096^3 matmul: intensity 2n^3 / 12n^2 = n/6 = 683 FLOP/byte, far above the H200's ~15.8
  const json row = bench_row("level1/matmul.py", matmul_report("NVIDIA H200", 2.5), "");
  ASSERT_TRUE(row["kernels"].empty());
  const json& r = row["roofline"];
  ASSERT_TRUE(r.is_object());
  EXPECT_TRUE(r["bytes"].is_null());  // no Triton kernel: its fields are null, the problem's are not
  EXPECT_TRUE(r["fraction_before"].is_null());
  EXPECT_DOUBLE_EQ(r["bandwidth_gbps"].get<double>(), kBandwidth);
  EXPECT_EQ(r["bound"], "compute");
  EXPECT_NEAR(r["intensity"].get<double>(), 4096.0 / 6, 1e-9);
  const double limit_ms = 2.0 * 4096 * 4096 * 4096 / (67.0 * 1e9);  // 2.05 ms at 67 TFLOP/s
  EXPECT_NEAR(r["limit_ms"].get<double>(), limit_ms, 1e-12);
  EXPECT_NEAR(r["e2e_fraction_before"].get<double>(), limit_ms / 2.5, 1e-12);
  EXPECT_NEAR(r["e2e_fraction_after"].get<double>(), limit_ms / 2.5, 1e-12);  // baseline kept

  // a GPU without a datasheet figure: the bound and the fractions are unknown, the work is still reported
  const json u = bench_row("level1/matmul.py", matmul_report("Some GPU", 2.5), "")["roofline"];
  EXPECT_TRUE(u["peak_tflops"].is_null());
  EXPECT_TRUE(u["ridge"].is_null());
  EXPECT_TRUE(u["bound"].is_null());
  EXPECT_TRUE(u["e2e_fraction_before"].is_null());
  EXPECT_DOUBLE_EQ(u["model_flops"].get<double>(), 2.0 * 4096 * 4096 * 4096);
  // ... but with no counted FLOPs the bytes alone set the limit, peak or not
  json pointwise = matmul_report("Some GPU", 0.2);
  pointwise["problem_work"]["flops"] = 0;
  const json p = bench_row("level1/relu.py", pointwise, "")["roofline"];
  EXPECT_EQ(p["bound"], "memory");
  EXPECT_NEAR(p["e2e_fraction_before"].get<double>(), 3.0 * 4096 * 4096 * 4 / (kBandwidth * 1e6) / 0.2, 1e-12);
}

TEST(EngineBench, RowsFromOlderReportsHaveNullCostAndNoProblemRoofline) {
  const json row = bench_row("level1/softmax.py", softmax_report(), "");  // the fixture predates both
  EXPECT_TRUE(row["gpu_s"].is_null());
  EXPECT_TRUE(row["compile_s"].is_null());
  EXPECT_TRUE(row["wall_s"].is_null());
  EXPECT_FALSE(row["roofline"].contains("min_bytes"));
  EXPECT_FALSE(row["roofline"].contains("e2e_fraction_before"));
  const json failed = bench_row("level1/x.py", json(), "boom");
  EXPECT_TRUE(failed["gpu_s"].is_null());
  EXPECT_EQ(failed["candidates_screened"], 0);
}

TEST(EngineBench, AggregateCostAndProblemRooflineMedians) {
  auto with = [](const std::string& problem, double gpu, double compile, double e2e_before, double e2e_after,
                 const char* bound) {
    json row = bench_row(problem, report(true, true, 1.5, 1), "");
    row["gpu_s"] = gpu;
    row["compile_s"] = compile;
    row["wall_s"] = gpu + compile + 1;
    row["candidates_screened"] = 10;
    row["candidates_gated"] = 2;
    row["roofline"] = {{"e2e_fraction_before", e2e_before}, {"e2e_fraction_after", e2e_after}, {"bound", bound}};
    return row;
  };
  std::vector<json> rows = {with("level1/a.py", 10, 4, 0.2, 0.4, "memory"), with("level1/b.py", 30, 6, 0.5, 0.6, "compute"),
                            with("level1/c.py", 20, 5, 0.3, 0.3, "memory")};
  json old = bench_row("level1/old.py", report(true, true, 1.2, 1), "");  // a row of an older bench.json
  for (const char* k : {"gpu_s", "compile_s", "wall_s", "roofline", "kernels"}) old.erase(k);
  rows.push_back(old);
  const json agg = aggregate(rows);
  const json& c = agg["overall"]["cost"];
  EXPECT_EQ(c["problems"], 3);
  EXPECT_DOUBLE_EQ(c["median_gpu_s"].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(c["total_gpu_s"].get<double>(), 60.0);
  EXPECT_DOUBLE_EQ(c["median_compile_s"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(c["total_compile_s"].get<double>(), 15.0);
  EXPECT_DOUBLE_EQ(c["total_wall_s"].get<double>(), 78.0);
  EXPECT_EQ(c["candidates_screened"], 30);
  EXPECT_EQ(c["candidates_gated"], 6);
  const json& roof = agg["levels"]["level1"]["roofline"];
  EXPECT_EQ(roof["e2e_problems"], 3);
  EXPECT_NEAR(roof["median_e2e_fraction_before"].get<double>(), 0.3, 1e-12);
  EXPECT_NEAR(roof["median_e2e_fraction_after"].get<double>(), 0.4, 1e-12);
  EXPECT_EQ(roof["compute_bound"], 1);
  const json none = aggregate({old})["overall"]["cost"];  // only old rows: nothing to take a median of
  EXPECT_EQ(none["problems"], 0);
  EXPECT_TRUE(none["median_gpu_s"].is_null());
  EXPECT_TRUE(none["total_gpu_s"].is_null());
}

namespace {

/// The cells of a markdown table line ("| a | b |" -> {"a", "b"}), trimmed.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  size_t p = line.find('|');
  while (p != std::string::npos) {
    const size_t q = line.find('|', p + 1);
    if (q == std::string::npos) break;
    std::string c = line.substr(p + 1, q - p - 1);
    c.erase(0, c.find_first_not_of(' '));
    c.erase(c.find_last_not_of(' ') + 1);
    out.push_back(c);
    p = q;
  }
  return out;
}

/// The line of `md` that starts with `prefix`; "" if none.
std::string line_of(const std::string& md, const std::string& prefix) {
  const size_t at = md.find("\n" + prefix);
  if (at == std::string::npos) return "";
  return md.substr(at + 1, md.find('\n', at + 1) - at - 1);
}

}  // namespace

TEST(EngineBench, MergeCarriesCostAndProblemRooflineBesideOlderRows) {
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

namespace {

// The softmax fixture's one kernel at its limit: its bytes at the measured bandwidth (0.0634 ms of 0.0797 ms).
double softmax_ceiling() {
  const double saving = kBeforeMs - kBytes / (kBandwidth * 1e6);
  return kBaselineMs / (kBaselineMs - saving);
}

}  // namespace

TEST(EngineBench, CeilingPutsEveryTritonKernelAtItsLimitAndKeepsTheRest) {
  const json row = bench_row("level1/softmax.py", softmax_report(), "");
  EXPECT_NEAR(row["ceiling"].get<double>(), softmax_ceiling(), 1e-12);
  EXPECT_NEAR(row["ceiling"].get<double>(), 1.134, 1e-3);
  // a kernel already faster than its byte count allows (it touches part of a storage) saves nothing
  json fast = softmax_report();
  fast["modules"][0]["kernels"][0]["profile"]["time_ms"] = 0.01;
  EXPECT_DOUBLE_EQ(bench_row("level1/softmax.py", fast, "")["ceiling"].get<double>(), 1.0);
  // two kernels: their savings add up
  json two = softmax_report();
  two["modules"][0]["kernels"].push_back(two["modules"][0]["kernels"][0]);
  EXPECT_NEAR(bench_row("level1/softmax.py", two, "")["ceiling"].get<double>(),
              kBaselineMs / (kBaselineMs - 2 * (kBeforeMs - kBytes / (kBandwidth * 1e6))), 1e-9);
  // no Triton kernel: nothing to rewrite; no measured bandwidth: unknown
  EXPECT_DOUBLE_EQ(bench_row("level1/c.py", report(false, true, 1.0, 0), "")["ceiling"].get<double>(), 1.0);
  json unmeasured = softmax_report();
  unmeasured["modules"][0]["bandwidth_gbps"] = 0.0;
  EXPECT_TRUE(bench_row("level1/softmax.py", unmeasured, "")["ceiling"].is_null());
}

TEST(EngineBench, HostTimeAndGpuAloneSpeedupFromTheHiddenHostTiming) {
  json report = softmax_report();
  report["end_to_end"]["gpu_ms"] = {{"eager", 0.09}, {"baseline", 0.08}, {"optimized", 0.07}};
  const json row = bench_row("level1/softmax.py", report, "");
  EXPECT_NEAR(row["host_ms"].get<double>(), kBaselineMs - 0.08, 1e-12);
  EXPECT_NEAR(row["gpu_speedup"].get<double>(), 0.08 / 0.07, 1e-12);
  // with no host time at all, the same kernel saving weighs more
  const double saving = kBeforeMs - kBytes / (kBandwidth * 1e6);
  EXPECT_NEAR(row["gpu_ceiling"].get<double>(), 0.08 / (0.08 - saving), 1e-12);
  EXPECT_GT(row["gpu_ceiling"].get<double>(), row["ceiling"].get<double>());
  report["summary"]["improved"] = false;  // kept baseline: the GPU time is torch.compile's
  EXPECT_DOUBLE_EQ(bench_row("level1/softmax.py", report, "")["gpu_speedup"].get<double>(), 1.0);
  const json older = bench_row("level1/softmax.py", softmax_report(), "");
  EXPECT_TRUE(older["host_ms"].is_null());
  EXPECT_TRUE(older["gpu_speedup"].is_null());
  EXPECT_TRUE(older["gpu_ceiling"].is_null());
}

TEST(EngineBench, AggregateLimitsOverTheRowsThatHaveThem) {
  auto with = [](double ceiling, json host, json gpu_speedup, json gpu_ceiling) {
    json row = bench_row("level1/a.py", report(true, true, 1.1, 1), "");
    row["ceiling"] = ceiling;
    row["host_ms"] = host;
    row["gpu_speedup"] = gpu_speedup;
    row["gpu_ceiling"] = gpu_ceiling;
    return row;
  };
  std::vector<json> rows = {with(1.0, 0.1, 1.0, 1.5), with(4.0, 0.3, 1.21, 6.0), with(2.0, nullptr, nullptr, nullptr)};
  rows.push_back(bench_row("level1/z.py", json(), "boom"));  // failed: no ceiling
  const json l = aggregate(rows)["overall"]["limits"];
  EXPECT_EQ(l["ceiling_problems"], 3);
  EXPECT_NEAR(l["ceiling_geomean"].get<double>(), 2.0, 1e-12);  // (1 * 4 * 2)^(1/3)
  EXPECT_EQ(l["host_problems"], 2);
  EXPECT_NEAR(l["median_host_ms"].get<double>(), 0.2, 1e-12);
  EXPECT_NEAR(l["gpu_geomean_speedup"].get<double>(), 1.1, 1e-12);  // sqrt(1.21)
  EXPECT_NEAR(l["gpu_ceiling_geomean"].get<double>(), 3.0, 1e-12);   // sqrt(1.5 * 6)
  const json none = aggregate({bench_row("level1/z.py", json(), "boom")})["overall"]["limits"];
  EXPECT_TRUE(none["ceiling_geomean"].is_null());
  EXPECT_TRUE(none["median_host_ms"].is_null());
}

TEST(EngineBench, MarkdownSaysTheCeilingAndTheHostTime) {
  json report = softmax_report();
  report["end_to_end"]["gpu_ms"] = {{"eager", 0.09}, {"baseline", 0.08}, {"optimized", 0.07}};
  std::vector<json> rows = {bench_row("level1/softmax.py", report, "")};
  fs::path in = fs::temp_directory_path() / ("ko_limits_in_" + std::to_string(::getpid()));
  fs::path out = fs::temp_directory_path() / ("ko_limits_out_" + std::to_string(::getpid()));
  fs::remove_all(in);
  fs::remove_all(out);
  fs::create_directories(in);
  std::ofstream(in / "bench.json") << json{{"problems", rows}, {"aggregate", aggregate(rows)}, {"shard", "1/1"}}.dump();
  merge_bench({in}, out);
  const std::string md = kernelopt::util::read_file(out / "bench.md");
  EXPECT_NE(md.find("stayed as torch.compile has it, the geomean could reach 1.134 (1 problems;"), std::string::npos) << md;
  // host: 0.1369 - 0.08; GPU alone 0.08 / 0.07; its ceiling 0.08 / (0.08 - 0.0163)
  EXPECT_NE(md.find("torch.compile: median 0.0569 ms (1 problems)"), std::string::npos) << md;
  EXPECT_NE(md.find("Speedup of the GPU time alone: geomean 1.143; its ceiling (every Triton kernel at its limit, "
                    "no host time at all): 1.254."),
            std::string::npos)
      << md;
  const auto s = cells(line_of(md, "| level1/softmax.py |"));
  ASSERT_EQ(s.size(), 19u);
  EXPECT_EQ(s[6], "0.0569");
  EXPECT_EQ(s[7], "1.143");
  EXPECT_EQ(s[8], "1.134 / 1.254");
}
