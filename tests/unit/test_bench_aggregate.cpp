// The bench's aggregates over its rows.
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

TEST(BenchAggregate, AggregatesGeomeanImprovedAndFastP) {
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

TEST(BenchAggregate, DecisionsSummaryOnlyWhereRowsSearchedThem) {
  std::vector<json> rows = {bench_row("level3/a.py", report(true, true, 2.0, 1), "")};
  EXPECT_FALSE(aggregate(rows)["overall"].contains("decisions"));
  const auto with = [](double vs_best, double without, double search, const std::string& kept) {
    json r = bench_row("level3/x.py", report(true, true, 2.0, 1), "");
    r["decisions"] = {{"kept", kept}, {"speedup_vs_best_mode", vs_best}, {"search_s", search},
                      {"without_decisions", {{"status", "improved"}, {"speedup", without}}}};
    return r;
  };
  rows = {with(1.2, 1.1, 30, "cudagraphs"), with(0.8, 1.0, 50, "default"), with(1.5, 1.3, 70, "cudagraphs")};
  const json d = aggregate(rows)["overall"]["decisions"];
  EXPECT_EQ(d["problems"], 3);
  EXPECT_NEAR(d["geomean_vs_best_mode"].get<double>(), std::cbrt(1.2 * 0.8 * 1.5), 1e-12);
  EXPECT_NEAR(d["geomean_without_decisions"].get<double>(), std::cbrt(1.1 * 1.0 * 1.3), 1e-12);
  EXPECT_DOUBLE_EQ(d["median_search_s"].get<double>(), 50.0);
  EXPECT_EQ(d["kept"]["cudagraphs"], 2);
  EXPECT_EQ(d["kept"]["default"], 1);
}

TEST(BenchAggregate, SmallProblemsAreTheirOwnLevelOutsideTheOverallAggregate) {
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
}

TEST(BenchAggregate, AggregateMediansOfBandwidthFractions) {
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

TEST(BenchAggregate, AggregateCostAndProblemRooflineMedians) {
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

TEST(BenchAggregate, AggregateLimitsOverTheRowsThatHaveThem) {
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

TEST(BenchAggregate, KernelsLeftUnderTheBarAreListedWithTheirReasons) {
  auto k = [](const std::string& name, double before_ms, double after_fraction, const std::string& status,
              const std::string& bound = "memory") {
    return json{{"name", name}, {"bound", bound}, {"before_ms", before_ms}, {"after_ms", before_ms},
                {"roofline_before", after_fraction}, {"roofline_after", after_fraction}, {"status", status},
                {"why", status == "improved" ? json(nullptr) : json("no candidate passed all four gates")},
                {"rewrites_skipped", json::array({{{"family", "resident_row"}, {"why", "the row does not fit on chip"}}})}};
  };
  json row = bench_row("level1/a.py", report(true, true, 1.5, 1), "");
  row["kernels"] = {k("slow_big", 6.0, 0.64, "kept baseline"),     // 60% of the Triton time, 64%: listed
                    k("slow_small", 0.5, 0.30, "kept baseline"),   // 5% of the time: under the share
                    k("fast", 2.5, 0.92, "improved"),              // above the bar
                    k("gemm", 1.0, 0.10, "skipped", "compute")};  // compute-bound: another bar
  const json under = aggregate({row})["overall"]["under_roofline"];
  EXPECT_EQ(under["kernels"], 1);
  EXPECT_DOUBLE_EQ(under["fraction_under"].get<double>(), kUnderRooflineFraction);
  ASSERT_EQ(under["list"].size(), 1u);
  const json& only = under["list"][0];
  EXPECT_EQ(only["problem"], "level1/a.py");
  EXPECT_EQ(only["kernel"], "slow_big");
  EXPECT_NEAR(only["share"].get<double>(), 0.6, 1e-12);
  EXPECT_EQ(only["reason"], "no candidate passed all four gates; resident_row: the row does not fit on chip");
  EXPECT_EQ(aggregate({row})["levels"]["level1"]["under_roofline"]["kernels"], 1);
  // a two-pass row read from memory twice: the reason says what counting those reads gives
  row["kernels"][0]["roofline_with_rereads_before"] = 0.96;
  EXPECT_EQ(aggregate({row})["overall"]["under_roofline"]["list"][0]["reason"],
            "Inductor's kernel reads each row again in a later pass: 96% of the bandwidth counting those reads; no "
            "candidate passed all four gates; resident_row: the row does not fit on chip");
  // an improved kernel still under the bar says what improved it
  row["kernels"][0]["status"] = "improved";
  row["kernels"][0]["why"] = nullptr;
  row["kernels"][0]["roofline_with_rereads_before"] = nullptr;
  row["kernels"][0]["family"] = "lse_scan";
  EXPECT_EQ(aggregate({row})["overall"]["under_roofline"]["list"][0]["reason"],
            "improved by the lse_scan rewrite, still under the bar; resident_row: the row does not fit on chip");
  row["kernels"][0]["family"] = nullptr;
  row["kernels"][0]["origin"] = "tuner";
  EXPECT_EQ(aggregate({row})["overall"]["under_roofline"]["list"][0]["reason"],
            "improved by the tuner, still under the bar; resident_row: the row does not fit on chip");
}
