// A bench row from a report.json (no GPU: real and hand-made reports).
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

TEST(BenchRows, KeptBaselineAndIncorrectRunsCountAsOne) {
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

TEST(BenchRows, ACheckThatCouldNotRunIsFailedWithItsCauseNeverIncorrect) {
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

TEST(BenchRows, RowCarriesTritonKernelsAndRooflineOfARealReport) {
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
  EXPECT_TRUE(k["family"].is_null());  // a report from before winner_family: no family named
  EXPECT_EQ(k["origin"], softmax_report()["modules"][0]["kernels"][0]["outcome"]["winner_origin"]);
  json rewritten = softmax_report();
  rewritten["modules"][0]["kernels"][0]["outcome"]["winner_family"] = "resident_row";
  EXPECT_EQ(bench_row("level1/softmax.py", rewritten, "")["kernels"][0]["family"], "resident_row");

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

TEST(BenchRows, RevertedRunKeepsBeforeTimesAfter) {
  json report = softmax_report();
  report["summary"]["improved"] = false;  // as when the end-to-end check reverted the stitched module
  report["reverted_why"] = "end to end 0.98x is not faster than the baseline";
  const json row = bench_row("level1/softmax.py", report, "");
  EXPECT_EQ(row["status"], "baseline kept");
  const json& k = row["kernels"][0];
  EXPECT_EQ(k["status"], "reverted");
  EXPECT_TRUE(k["family"].is_null() && k["origin"].is_null());
  EXPECT_DOUBLE_EQ(k["after_ms"].get<double>(), kBeforeMs);
  EXPECT_EQ(k["roofline_after"], k["roofline_before"]);
  EXPECT_DOUBLE_EQ(row["roofline"]["fraction_after"].get<double>(), row["roofline"]["fraction_before"].get<double>());
}

TEST(BenchRows, AKeptDecisionCountsItsSpeedupWithItsKernelsAsProfiled) {
  json report = softmax_report();
  // --decisions kept channels_last; no kernel rewrite passed: the model still differs from torch.compile default
  report["summary"]["improved"] = true;
  report["summary"]["kernels_kept"] = false;
  report["modules"][0]["kernels"][0]["outcome"]["status"] = "baseline kept";
  const json row = bench_row("level3/net.py", report, "");
  EXPECT_EQ(row["status"], "improved");
  EXPECT_DOUBLE_EQ(row["speedup"].get<double>(), report["end_to_end"]["speedup_vs_compile"]["speedup"].get<double>());
  EXPECT_DOUBLE_EQ(row["kernels"][0]["after_ms"].get<double>(), kBeforeMs);
  EXPECT_EQ(row["kernels"][0]["roofline_after"], row["kernels"][0]["roofline_before"]);
  // kernels that were improved but are not in the emitted model (kernels_kept false) read as reverted
  report["modules"][0]["kernels"][0]["outcome"]["status"] = "improved";
  EXPECT_EQ(bench_row("level3/net.py", report, "")["kernels"][0]["status"], "reverted");
}

TEST(BenchRows, RooflineNullWithoutTritonKernelOrBandwidth) {
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

TEST(BenchRows, RowCarriesTheProblemsRooflineEndToEndAndItsCost) {
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

TEST(BenchRows, ProblemRooflineOfAKeptBaselineUsesTorchCompileTimeAfter) {
  json report = softmax_report_with_work_and_cost();
  report["summary"]["improved"] = false;
  const json r = bench_row("level1/softmax.py", report, "")["roofline"];
  EXPECT_DOUBLE_EQ(r["e2e_fraction_after"].get<double>(), r["e2e_fraction_before"].get<double>());
}

TEST(BenchRows, ProblemRooflineWithoutTritonKernelIsComputeBoundAboveTheRidge) {
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

TEST(BenchRows, RowsFromOlderReportsHaveNullCostAndNoProblemRoofline) {
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

TEST(BenchRows, CeilingPutsEveryTritonKernelAtItsLimitAndKeepsTheRest) {
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

TEST(BenchRows, HostTimeAndGpuAloneSpeedupFromTheHiddenHostTiming) {
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

TEST(BenchRows, DecisionColumnsFromAReportWithDecisions) {
  const auto tried = [](const std::string& name, const std::string& status, const std::string& gate, double base,
                        double cand) {
    return json{{"name", name}, {"status", status}, {"gate", gate},
                {"speedup", {{"speedup", base / cand}, {"ci_low", 1.0}, {"ci_high", 1.0}, {"baseline_ms", base},
                             {"candidate_ms", cand}}}};
  };
  json report = {{"decisions",
                  {{"kept", "freezing"},
                   {"tried",
                    {{{"name", "default"}, {"status", "baseline"}, {"gate", ""}, {"speedup", nullptr}},
                     tried("cudagraphs", "rejected", "model", 2.0, 0.5),        // wrong: not a correct mode
                     tried("max_autotune", "rejected", "performance", 2.2, 1.9),  // correct, not faster beyond noise
                     tried("freezing", "kept", "", 2.0, 1.2)}}}},
                 {"end_to_end", {{"optimized_ms", {{"median", 1.1}}}}}};
  const json d = decision_columns(report);
  EXPECT_EQ(d["kept"], "freezing");
  EXPECT_DOUBLE_EQ(d["compile_default_ms"].get<double>(), 2.0);  // the median of 2.0, 2.2, 2.0
  EXPECT_EQ(d["best_mode"], "max_autotune");                   // freezing is no mode; cudagraphs was wrong
  EXPECT_DOUBLE_EQ(d["best_mode_ms"].get<double>(), 1.9);
  EXPECT_DOUBLE_EQ(d["with_decisions_ms"].get<double>(), 1.1);
  EXPECT_TRUE(decision_columns(json{{"end_to_end", json::object()}}).is_null());
  EXPECT_TRUE(d["search_s"].is_null());  // the report has no cost
}

TEST(BenchRows, DecisionRowsCarryTheSearchCostTheBestModeRatioAndTheRunWithoutDecisions) {
  json report = bench_test::report(true, true, 1.6, 1);
  report["decisions"] = {{"kept", "cudagraphs"},
                         {"tried", {{{"name", "cudagraphs"}, {"status", "kept"}, {"gate", ""},
                                     {"speedup", {{"speedup", 1.25}, {"ci_low", 1.2}, {"ci_high", 1.3},
                                                  {"baseline_ms", 2.0}, {"candidate_ms", 1.6}}}}}}};
  report["cost"] = {{"requests", {{"decide", {{"requests", 6}, {"seconds", 42.0}}}}}};
  json row = bench_row("level3/net.py", report, "");
  // over the best mode: 1.6 (over default, final check) x 2.0 / 1.6 (default / cudagraphs, decision search)
  EXPECT_DOUBLE_EQ(row["decisions"]["speedup_vs_best_mode"].get<double>(), 1.6 * 2.0 / 1.6);
  EXPECT_DOUBLE_EQ(row["decisions"]["search_s"].get<double>(), 42.0);
  const json without = bench_row("level3/net.py", bench_test::report(true, true, 1.1, 1), "");
  attach_without_decisions(row, without);
  EXPECT_EQ(row["decisions"]["without_decisions"]["status"], "improved");
  EXPECT_DOUBLE_EQ(row["decisions"]["without_decisions"]["speedup"].get<double>(), 1.1);
  // a failed run without decisions says so, with its error
  attach_without_decisions(row, bench_row("level3/net.py", json(), "worker died"));
  EXPECT_EQ(row["decisions"]["without_decisions"]["status"], "failed");
  EXPECT_EQ(row["decisions"]["without_decisions"]["error"], "worker died");
  // a row that searched no decisions gets nothing
  json plain = bench_row("level3/net.py", bench_test::report(true, true, 1.1, 1), "");
  attach_without_decisions(plain, without);
  EXPECT_FALSE(plain.contains("decisions"));
  // over the best mode when the baseline was kept and a mode was faster: below 1
  json kept = bench_test::report(false, true, 1.0, 1);
  kept["decisions"] = report["decisions"];
  EXPECT_DOUBLE_EQ(bench_row("level3/net.py", kept, "")["decisions"]["speedup_vs_best_mode"].get<double>(), 2.0 / 1.6);
}
