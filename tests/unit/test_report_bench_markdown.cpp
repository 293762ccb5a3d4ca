// bench.md and adversarial.md: what their sentences and tables say of bench rows made from real reports.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "bench_test_reports.hpp"
#include "report/bench_markdown.hpp"

using nlohmann::json;
using kernelopt::bench::aggregate;
using kernelopt::bench::bench_row;
using kernelopt::report::adversarial_markdown;
using kernelopt::report::bench_markdown;
using namespace bench_test;

TEST(ReportBenchMarkdown, SaysTheCeilingAndTheHostTime) {
  json report = softmax_report();
  report["end_to_end"]["gpu_ms"] = {{"eager", 0.09}, {"baseline", 0.08}, {"optimized", 0.07}};
  std::vector<json> rows = {bench_row("level1/softmax.py", report, "")};
  const std::string md = bench_markdown({{"problems", rows}, {"aggregate", aggregate(rows)}, {"shard", "1/1"}});
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

TEST(ReportBenchMarkdown, AdversarialTableHasARowPerCaseWithPipesEscaped) {
  json result = {{"summary",
                  {{"cases", 2}, {"tried", 2}, {"skipped", 0}, {"adversarial_tried", 1}, {"caught_as_expected", 1},
                   {"controls", 1}, {"controls_passed", 0}, {"failed", 1}, {"host_code_markers", 0}, {"runs", 1},
                   {"device", "cpu"}}},
                 {"cases",
                  {{{"case", "a_bad"}, {"target", "t"}, {"expected", "correctness"}, {"caught_by", "correctness"},
                    {"result", "PASS"}, {"reason", "x | y"}},
                   {{"case", "a_control"}, {"target", "t"}, {"expected", "passed"}, {"caught_by", nullptr},
                    {"result", "FAIL"}, {"reason", "no verdict recorded for this case"}}}}};
  const std::string md = adversarial_markdown(result);
  EXPECT_NE(md.find("| a_bad | t | correctness | correctness | PASS | x / y |"), std::string::npos) << md;
  EXPECT_NE(md.find("| a_control | t | passed | - | FAIL | no verdict recorded for this case |"), std::string::npos) << md;
  EXPECT_NE(md.find("1 failed"), std::string::npos) << md;
}

TEST(ReportBenchMarkdown, DecisionsTableOnlyWhereRowsSearchedThem) {
  json report = softmax_report();
  std::vector<json> rows = {bench_row("level1/softmax.py", report, "")};
  EXPECT_EQ(bench_markdown({{"problems", rows}, {"aggregate", aggregate(rows)}, {"shard", "1/1"}})
                .find("Whole-model decisions"),
            std::string::npos);
  report["decisions"] = {{"kept", "cudagraphs"},
                         {"tried", {{{"name", "cudagraphs"}, {"status", "kept"}, {"gate", ""},
                                     {"speedup", {{"speedup", 2.0}, {"ci_low", 1.9}, {"ci_high", 2.1},
                                                  {"baseline_ms", 0.2}, {"candidate_ms", 0.1}}}}}}};
  rows = {bench_row("level1/softmax.py", report, "")};
  const std::string md = bench_markdown({{"problems", rows}, {"aggregate", aggregate(rows)}, {"shard", "1/1"}});
  rows[0]["decisions"]["without_decisions"] = {{"status", "improved"}, {"speedup", 1.05}};
  const std::string md2 = bench_markdown({{"problems", rows}, {"aggregate", aggregate(rows)}, {"shard", "1/1"}});
  const auto s = cells(line_of(md2, "| level1/softmax.py | cudagraphs |"));
  ASSERT_EQ(s.size(), 9u) << md2;
  EXPECT_EQ(s[2], "0.2000");
  EXPECT_EQ(s[3], "0.1000 (cudagraphs)");
  EXPECT_EQ(s[4], "1.050x");  // without decisions
  EXPECT_EQ(s[8], "-");       // the fixture has no decide requests' cost
  EXPECT_NE(md2.find("geomean over torch.compile default"), std::string::npos) << md2;
  EXPECT_NE(md2.find("1.050 without"), std::string::npos) << md2;
  EXPECT_NE(md.find("Whole-model decisions"), std::string::npos);
  // a decision the end-to-end check dropped: the row keeps default and says which was dropped
  report["decisions"]["kept"] = "default";
  report["decisions"]["dropped"] = {{"name", "cudagraphs"}, {"why", "the end-to-end check did not pass"}};
  rows = {bench_row("level1/softmax.py", report, "")};
  EXPECT_EQ(rows[0]["decisions"]["dropped"], "cudagraphs");
  const std::string md3 = bench_markdown({{"problems", rows}, {"aggregate", aggregate(rows)}, {"shard", "1/1"}});
  EXPECT_NE(md3.find("| level1/softmax.py | default (cudagraphs dropped end to end) |"), std::string::npos) << md3;
}

TEST(ReportBenchMarkdown, KernelsUnderTheBarGetTheirOwnTableWithReasons) {
  json report = softmax_report();
  json& outcome = report["modules"][0]["kernels"][0]["outcome"];
  outcome["status"] = "kept baseline";
  outcome["why"] = "no candidate passed all four gates (4 evaluated; rejected 4 by performance)";
  outcome["rewrites_skipped"] = {{{"family", "window_rows"}, {"why", "not a pooling window | of loads"}}};
  report["summary"]["improved"] = false;
  json row = bench_row("level1/softmax.py", report, "");
  row["kernels"][0]["roofline_after"] = 0.64;  // the real report's kernel sits at 80%: put it under the bar
  std::vector<json> rows = {row};
  const std::string md = bench_markdown({{"problems", rows}, {"aggregate", aggregate(rows)}, {"shard", "1/1"}});
  EXPECT_NE(md.find("## Kernels under 70% of the bandwidth after optimization"), std::string::npos) << md;
  const auto s = cells(line_of(md, "| level1/softmax.py | triton_red_fused__softmax"));
  ASSERT_EQ(s.size(), 6u);
  EXPECT_EQ(s[2], "100%");
  EXPECT_EQ(s[3], "80% → 64%");
  EXPECT_EQ(s[5], "no candidate passed all four gates (4 evaluated; rejected 4 by performance); window_rows: not a "
                  "pooling window / of loads");
  // a long reason is cut at 400 bytes, between characters (each → is 3 bytes)
  std::string arrows;
  for (int i = 0; i < 200; ++i) arrows += "→";
  rows[0]["kernels"][0]["why"] = "xy" + arrows;  // 2 + 600 bytes: byte 397 is inside an arrow (2 + 3k)
  const std::string cut = bench_markdown({{"problems", rows}, {"aggregate", aggregate(rows)}, {"shard", "1/1"}});
  const std::string reason = cells(line_of(cut, "| level1/softmax.py | triton_red_fused__softmax"))[5];
  EXPECT_EQ(reason.substr(reason.size() - 3), "...");
  EXPECT_EQ(reason.size(), 2 + 3 * 131 + 3u) << reason;  // 395 bytes kept: back to the last whole arrow
  // none under the bar: no section
  const std::vector<json> fine = {bench_row("level1/softmax.py", softmax_report(), "")};
  EXPECT_EQ(bench_markdown({{"problems", fine}, {"aggregate", aggregate(fine)}, {"shard", "1/1"}}).find("## Kernels under"),
            std::string::npos);
}
