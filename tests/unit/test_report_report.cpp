// report.json's cost (GPU and compile seconds by worker op) and the problem's work, and report.md's sections.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "report/report.hpp"

using nlohmann::json;
using namespace kernelopt::report;

namespace {

Report with_cost() {
  Report r;
  r.problem = "level1/x.py";
  r.versions = {{"gpu", "NVIDIA H200"}};
  r.cost.wall_s = 40.0;
  r.cost.requests = {{"start", {1, 2.0}},   {"validate", {1, 0.5}},   {"capture", {1, 7.0}},
                     {"profile", {2, 3.0}}, {"compile", {3, 1.5}},    {"check", {5, 2.0}},
                     {"bench", {4, 6.0}},   {"model_check", {1, 1.0}}, {"final_check", {1, 4.0}}};
  ModuleReport m;
  for (int screened : {7, 3}) {
    KernelReport k;
    k.profile.name = "k" + std::to_string(screened);
    k.outcome.status = "kept baseline";
    k.outcome.screened = screened;
    k.outcome.gated = screened / 3;
    m.kernels.push_back(k);
  }
  r.modules.push_back(m);
  r.problem_work = {{"min_bytes", 2e6}, {"input_bytes", 1e6}, {"flops", 4e9}, {"flop_counter", "FlopCounterMode"}};
  return r;
}

}  // namespace

TEST(Report, CostSplitsWorkerTimeIntoGpuAndCompileByOp) {
  const json c = to_json(with_cost())["cost"];
  EXPECT_DOUBLE_EQ(c["wall_s"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(c["gpu_s"].get<double>(), 3.0 + 2.0 + 6.0 + 1.0 + 4.0);  // profile, check, bench, model_check, final_check
  EXPECT_DOUBLE_EQ(c["compile_s"].get<double>(), 7.0 + 1.5);                // capture, compile
  EXPECT_DOUBLE_EQ(c["worker_s"].get<double>(), 27.0);                      // everything, starts included
  EXPECT_EQ(c["candidates_screened"], 10);
  EXPECT_EQ(c["candidates_gated"], 3);  // 7/3 + 3/3
  EXPECT_EQ(c["requests"]["check"]["requests"], 5);
  EXPECT_DOUBLE_EQ(c["requests"]["start"]["seconds"].get<double>(), 2.0);
  EXPECT_FALSE(c["continued"].get<bool>());
  EXPECT_EQ(c["method"].get<std::string>().find("this invocation"), std::string::npos);
}

TEST(Report, CostOfAContinuedRunSaysItCountsThisInvocation) {
  Report r = with_cost();
  r.cost.continued = true;
  const json c = to_json(r)["cost"];
  EXPECT_TRUE(c["continued"].get<bool>());
  EXPECT_NE(c["method"].get<std::string>().find("this invocation of a continued run only"), std::string::npos);
}

TEST(Report, NoRequestsIsZeroCost) {
  const json c = cost_json(RunCost{}, 0, 0);
  EXPECT_DOUBLE_EQ(c["gpu_s"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(c["compile_s"].get<double>(), 0.0);
  EXPECT_TRUE(c["requests"].empty());
}

TEST(Report, JsonAndMarkdownCarryTheProblemsWorkAndCost) {
  const json j = to_json(with_cost());
  EXPECT_DOUBLE_EQ(j["problem_work"]["min_bytes"].get<double>(), 2e6);
  EXPECT_DOUBLE_EQ(j["problem_work"]["flops"].get<double>(), 4e9);
  EXPECT_TRUE(to_json(Report{})["problem_work"].is_null());  // a standalone kernel file has no problem work
  // to_markdown reads the end-to-end section too; a default one is enough here
  const std::string md = to_markdown(j);
  EXPECT_NE(md.find("## Problem\n"), std::string::npos);
  EXPECT_NE(md.find("2.0 MB; FLOPs: 4e+09 (FlopCounterMode)"), std::string::npos) << md;
  EXPECT_NE(md.find("## Cost\n\nWall 40.0 s; GPU 16.0 s; compile 8.5 s; all worker requests 27.0 s; candidates "
                    "screened 10, gated 3."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| final_check | 1 | 4.00 |"), std::string::npos);
}

TEST(Report, EndToEndCarriesTheGpuAloneTimesAndHostTimeWhenMeasured) {
  Report r = with_cost();
  r.end_to_end.baseline_ms = 0.236;
  r.end_to_end.optimized_ms = 0.230;
  r.end_to_end.eager_ms = 0.219;
  EXPECT_FALSE(to_json(r)["end_to_end"].contains("gpu_ms"));  // not measured (interpreter, older workers)
  EXPECT_EQ(to_markdown(to_json(r)).find("GPU alone ms"), std::string::npos);
  r.end_to_end.gpu_eager_ms = 0.186;
  r.end_to_end.gpu_baseline_ms = 0.122;
  r.end_to_end.gpu_optimized_ms = 0.116;
  const json j = to_json(r);
  EXPECT_DOUBLE_EQ(j["end_to_end"]["gpu_ms"]["baseline"].get<double>(), 0.122);
  EXPECT_DOUBLE_EQ(j["end_to_end"]["gpu_ms"]["optimized"].get<double>(), 0.116);
  const std::string md = to_markdown(j);
  EXPECT_NE(md.find("| | median ms | mean ms | GPU alone ms | host ms |"), std::string::npos) << md;
  EXPECT_NE(md.find("| baseline_ms | 0.2360 | 0.0000 | 0.1220 | 0.1140 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| optimized_ms | 0.2300 | 0.0000 | 0.1160 | 0.1140 |"), std::string::npos) << md;
}

TEST(Report, CeilingSavesEachKernelsTimeAboveItsLimit) {
  // 2 GB/s = 2e6 bytes per ms: a kernel of 1 ms over 1e6 bytes (limit 0.5 ms) saves 0.5 ms; one already under its
  // limit saves nothing; savings add up over kernels
  EXPECT_DOUBLE_EQ(ceiling_saving_ms({{1.0, 1e6}}, 2.0), 0.5);
  EXPECT_DOUBLE_EQ(ceiling_saving_ms({{0.25, 1e6}}, 2.0), 0.0);
  EXPECT_DOUBLE_EQ(ceiling_saving_ms({{1.0, 1e6}, {0.5, 2e5}}, 2.0), 0.5 + 0.4);
  // the ceiling of a 2 ms call that could save 0.5 ms; a saving of the whole call stays finite
  EXPECT_DOUBLE_EQ(ceiling(2.0, 0.5), 2.0 / 1.5);
  EXPECT_TRUE(std::isfinite(ceiling(2.0, 2.0)));
}

TEST(Report, RunReportStatesItsCeiling) {
  Report r = with_cost();
  r.modules[0].bandwidth_gbps = 2.0;
  r.modules[0].kernels[0].profile.time_ms = 1.0;  // limit 0.5 ms: saves 0.5
  r.modules[0].kernels[0].profile.bytes = 1e6;
  r.modules[0].kernels[1].profile.time_ms = 0.1;  // already under its limit
  r.modules[0].kernels[1].profile.bytes = 1e6;
  r.end_to_end.baseline_ms = 2.0;
  EXPECT_FALSE(to_json(Report{})["end_to_end"].contains("ceiling"));  // no kernel, no time
  json c = to_json(r)["end_to_end"]["ceiling"];
  EXPECT_DOUBLE_EQ(c["saving_ms"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(c["end_to_end"].get<double>(), 2.0 / 1.5);
  EXPECT_TRUE(c["gpu_alone"].is_null());
  r.end_to_end.gpu_baseline_ms = 1.5;
  r.end_to_end.gpu_optimized_ms = 1.4;
  const json j = to_json(r);
  EXPECT_DOUBLE_EQ(j["end_to_end"]["ceiling"]["gpu_alone"].get<double>(), 1.5);
  const std::string md = to_markdown(j);
  EXPECT_NE(md.find("could be at most 1.333x faster end to end (1.500x with the GPU alone); kernelopt rewrites only "
                    "the Triton kernels."),
            std::string::npos)
      << md;
}

TEST(Report, MemoryIsTheLargestOpPeakOverTheWorkingSet) {
  Report r = with_cost();
  r.cost.requests["check"].peak_bytes = 9e9;
  r.cost.requests["final_check"].peak_bytes = 12e9;
  r.problem_work["working_set_bytes"] = 4e9;
  const json j = to_json(r);
  EXPECT_DOUBLE_EQ(j["cost"]["requests"]["check"]["peak_gb"].get<double>(), 9.0);
  EXPECT_TRUE(j["cost"]["requests"]["bench"]["peak_gb"].is_null());  // not measured is null, never 0
  EXPECT_DOUBLE_EQ(j["memory"]["peak_gb"].get<double>(), 12.0);
  EXPECT_EQ(j["memory"]["peak_op"], "final_check");
  EXPECT_DOUBLE_EQ(j["memory"]["working_set_gb"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j["memory"]["factor"].get<double>(), 3.0);
  // each op's peak, also in the summary the store keeps for the run (runs.summary_json)
  EXPECT_EQ(j["memory"]["peak_gb_by_op"], (json{{"check", 9.0}, {"final_check", 12.0}}));
  EXPECT_EQ(j["summary"]["memory"], j["memory"]);
  EXPECT_NE(to_markdown(j).find("Device memory: peak 12.00 GB (in `final_check`), 3.00x the problem's working set of "
                                "4.00 GB."),
            std::string::npos);
  const json cpu = to_json(with_cost())["memory"];  // no peaks measured (the CPU): nulls, and no line in report.md
  EXPECT_TRUE(cpu["peak_gb"].is_null() && cpu["factor"].is_null());
}

TEST(Report, DecisionsAreListedOnlyWhenSearched) {
  Report r = with_cost();
  EXPECT_FALSE(to_json(r).contains("decisions"));  // without --decisions: report.json as before
  EXPECT_EQ(to_markdown(to_json(r)).find("Whole-model decisions"), std::string::npos);
  r.decisions = {{"kept", "cudagraphs"},
                 {"settings", {{"mode", "reduce-overhead"}}},
                 {"tried",
                  {{{"name", "default"}, {"status", "baseline"}, {"why", "the baseline"}, {"gate", ""}, {"speedup", nullptr}},
                   {{"name", "cudagraphs"}, {"status", "kept"}, {"why", "the fastest decision that passed every gate"},
                    {"gate", ""}, {"speedup", {{"speedup", 2.28}, {"ci_low", 2.2}, {"ci_high", 2.35}}}, {"seconds", 41.6}},
                   {{"name", "freezing"}, {"status", "rejected"}, {"why", "not faster than torch.compile default beyond noise"},
                    {"gate", "performance"}, {"speedup", {{"speedup", 0.98}, {"ci_low", 0.95}, {"ci_high", 1.01}}}}}}};
  const json j = to_json(r);
  EXPECT_EQ(j["decisions"]["kept"], "cudagraphs");
  const std::string md = to_markdown(j);
  EXPECT_NE(md.find("Kept: **cudagraphs**"), std::string::npos) << md;
  EXPECT_NE(md.find("| cudagraphs | kept | 2.280x [2.200, 2.350] | 42 | the fastest decision that passed every gate |"),
            std::string::npos) << md;
  // a decision without its seconds (a store from before they were recorded) shows "-"
  EXPECT_NE(md.find("| freezing | rejected | 0.980x [0.950, 1.010] | - | gate performance: not faster"),
            std::string::npos)
      << md;
}

TEST(Report, TheHeadlineNamesAKeptDecisionAndWhatTheCheckDropped) {
  Report r = with_cost();
  r.end_to_end.passed = true;
  r.end_to_end.speedup.speedup = 1.011;
  r.end_to_end.speedup.ci_low = 1.004;
  r.end_to_end.speedup.ci_high = 1.015;
  r.end_to_end.baseline_ms = 3.7877;
  r.end_to_end.optimized_ms = 3.7449;
  r.decisions = {{"kept", "channels_last"}, {"settings", {{"channels_last", true}}}, {"tried", json::array()}};
  // the level-3 MobileNet stage on the H100: channels_last kept, no kernel rewrite passed (it read "baseline kept")
  r.kernels_kept = false;
  json j = to_json(r);
  EXPECT_EQ(j["summary"]["headline"], "1.011x vs torch.compile [1.004, 1.015] (3.7877 -> 3.7449 ms median), correct "
                                      "on fresh seeds; decision channels_last kept, no kernel rewritten");
  EXPECT_EQ(j["summary"]["kernels_kept"], false);
  r.kernels_kept = true;
  EXPECT_NE(to_json(r)["summary"]["headline"].get<std::string>().find("decision channels_last kept, with the optimized kernels"),
            std::string::npos);
  // dropped by the end-to-end check: torch.compile default, and the headline says why
  r.kernels_kept = false;
  r.decisions["kept"] = "default";
  r.decisions["dropped"] = {{"name", "channels_last"}, {"why", "the end-to-end check did not pass"}};
  EXPECT_EQ(to_json(r)["summary"]["headline"], "baseline kept (byte-identical to torch.compile's output); decision "
                                               "channels_last dropped: the end-to-end check did not pass");
  EXPECT_NE(to_markdown(to_json(r)).find("Kept: **default** (channels_last passed its gates; the end-to-end check "
                                         "dropped it: the end-to-end check did not pass)."),
            std::string::npos);
}

TEST(Report, KernelTableNamesTheFractionCountingRowReReads) {
  Report r = with_cost();
  r.modules[0].kernels[0].profile.roofline_fraction = 0.65;
  r.modules[0].kernels[0].profile.fraction_with_rereads = 0.98;  // the Profiler found the re-reads explain it
  r.modules[0].kernels[1].profile.roofline_fraction = 0.99;
  const std::string md = to_markdown(to_json(r));
  EXPECT_NE(md.find("| 65% (98% counting its row re-reads) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 99% |"), std::string::npos) << md;  // the other kernel: its fraction alone
  EXPECT_EQ(md.find("re-reads", md.find("`k3`")), std::string::npos) << md;
}
