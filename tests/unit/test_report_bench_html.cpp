// bench.html from a synthetic bench.json and from rows of a real report: plot ids, one bar per problem,
// the 1.0 and 100% lines, the roofline and kernel-time plots, escaped user text.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "bench/bench.hpp"
#include "report/bench_html.hpp"
#include "util/fs.hpp"

using nlohmann::json;
using kernelopt::report::bench_html;

namespace {

json row(const std::string& problem, const std::string& status, double speedup) {
  return {{"problem", problem}, {"level", "level1"}, {"status", status}, {"correct", true},
          {"speedup", speedup}, {"speedup_ci", {speedup * 0.95, speedup * 1.05}}, {"speedup_vs_eager", 2.0},
          {"baseline_ms", 1.0}, {"optimized_ms", 1.0 / speedup}, {"eager_ms", 2.0}, {"triton_kernels", 2},
          {"kernels_improved", 1}};
}

json synthetic() {
  std::vector<json> rows = {row("level1/a_softmax.py", "improved", 1.3), row("level1/b_norm.py", "baseline kept", 1.0),
                            kernelopt::bench::bench_row("level2/c_<gemm>.py", json(), "boom <script>alert(1)</script>")};
  return {{"problems", rows}, {"aggregate", kernelopt::bench::aggregate(rows)}};
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(BenchHtml, PlotsTablesAndReferenceLine) {
  const std::string h = bench_html(synthetic());
  EXPECT_NE(h.find("id=\"speedup-plot\" data-bars=\"3\""), std::string::npos);
  EXPECT_EQ(count(h, "<rect class=\"bar\""), 3u);
  EXPECT_EQ(count(h, "data-status=\"improved\""), 1u);
  EXPECT_EQ(count(h, "data-status=\"baseline kept\""), 1u);
  EXPECT_EQ(count(h, "data-status=\"failed\""), 1u);
  EXPECT_NE(h.find("id=\"ref-line\" data-x=\"1.0\""), std::string::npos);
  EXPECT_EQ(count(h, "class=\"ci\""), 2u);  // the failed row has no CI
  EXPECT_NE(h.find("id=\"level-table\""), std::string::npos);
  EXPECT_NE(h.find("id=\"problem-table\" class=\"sortable\" data-rows=\"3\""), std::string::npos);
  EXPECT_NE(h.find("document.body.dataset.ready=\"1\""), std::string::npos);
  EXPECT_NE(h.find("<td>level1</td>"), std::string::npos);
  EXPECT_NE(h.find("<td>overall</td>"), std::string::npos);
  // self-contained: no external resources
  EXPECT_EQ(h.find("src="), std::string::npos);
  EXPECT_EQ(h.find("href="), std::string::npos);
  EXPECT_EQ(h.find("http://www.w3.org/2000/svg"), h.find("http"));  // the only URL is the SVG namespace
}

TEST(BenchHtml, EscapesUserText) {
  const std::string h = bench_html(synthetic());
  EXPECT_EQ(h.find("<script>alert"), std::string::npos);
  EXPECT_NE(h.find("boom &lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(h.find("c_<gemm>"), std::string::npos);
  EXPECT_NE(h.find("c_&lt;gemm&gt;"), std::string::npos);
  EXPECT_EQ(count(h, "<script>"), 1u);  // only the page's own
}

TEST(BenchHtml, ToleratesEmptyAndPartialInput) {
  EXPECT_NE(bench_html(json::object()).find("data-bars=\"0\""), std::string::npos);
  json b = {{"problems", {{{"problem", "x.py"}, {"status", "improved"}, {"speedup", nullptr}, {"speedup_ci", {nullptr, nullptr}}}}}};
  EXPECT_NE(bench_html(b).find("data-bars=\"0\""), std::string::npos);
  EXPECT_NE(bench_html(json::array()).find("</html>"), std::string::npos);
}

namespace {

/// tests/fixtures/reports/softmax_h200.report.json: examples/softmax.py on an H200, one kernel improved.
json softmax_report() {
  return json::parse(kernelopt::util::read_file(std::filesystem::path(KERNELOPT_SOURCE_DIR) / "tests" / "fixtures" /
                                                "reports" / "softmax_h200.report.json"));
}

/// The fixture's report with a second, unimproved kernel whose name is markup.
json two_kernel_report() {
  json r = softmax_report();
  json k = r["modules"][0]["kernels"][0];
  k["name"] = "triton_poi_<b>&\"evil\"";
  k["profile"]["name"] = k["name"];
  k["profile"]["time_ms"] = 0.02;
  k["outcome"] = {{"status", "no gain"}, {"screened", 3}, {"gated", 0}};
  r["modules"][0]["kernels"].push_back(k);
  return r;
}

json real_rows_bench() {
  json old = row("level1/old_row.py", "improved", 1.1);  // a row of an older bench.json: no kernels, no roofline
  std::vector<json> rows = {kernelopt::bench::bench_row("level1/softmax.py", softmax_report(), ""),
                            kernelopt::bench::bench_row("level1/two<kernels>.py", two_kernel_report(), ""), old,
                            kernelopt::bench::bench_row("level2/failed.py", json(), "boom")};
  return {{"problems", rows}, {"aggregate", kernelopt::bench::aggregate(rows)}};
}

}  // namespace

TEST(BenchHtml, RooflinePlotHasBeforeAndAfterPerProblemWithKernels) {
  const std::string h = bench_html(real_rows_bench());
  EXPECT_NE(h.find("id=\"roofline-plot\" data-problems=\"2\""), std::string::npos);  // old and failed rows not drawn
  EXPECT_EQ(count(h, "class=\"roof-before\""), 2u);
  EXPECT_EQ(count(h, "class=\"roof-after\" data-status=\"improved\""), 2u);
  EXPECT_NE(h.find("id=\"bandwidth-line\" data-x=\"1.0\""), std::string::npos);
  EXPECT_NE(h.find("80% \xe2\x86\x92 93%"), std::string::npos);  // softmax: 0.796 -> 0.926 of 4231 GB/s
  // overall median over the two problems, in the summary and the level table
  EXPECT_NE(h.find("id=\"roofline-summary\""), std::string::npos);
  EXPECT_NE(h.find("% of bandwidth before \xe2\x86\x92 after</th>"), std::string::npos);
}

TEST(BenchHtml, TimePlotStacksEachKernelBeforeAndAfter) {
  const std::string h = bench_html(real_rows_bench());
  EXPECT_NE(h.find("id=\"time-plot\" data-problems=\"2\""), std::string::npos);
  EXPECT_EQ(count(h, "class=\"seg\" data-phase=\"before\""), 3u);  // 1 + 2 kernels
  EXPECT_EQ(count(h, "class=\"seg\" data-phase=\"after\""), 3u);
  EXPECT_EQ(count(h, "data-kernel=\"1\""), 2u);  // the second kernel, before and after, one colour
  EXPECT_NE(h.find("triton_red_fused__softmax_exp_prepare_softmax_online_sub_0 (reduction, memory-bound, improved)"),
            std::string::npos);
  EXPECT_NE(h.find("0.0797 \xe2\x86\x92 0.0685 ms"), std::string::npos);
}

TEST(BenchHtml, EscapesKernelAndProblemNamesInNewPlots) {
  const std::string h = bench_html(real_rows_bench());
  EXPECT_EQ(h.find("<b>&"), std::string::npos);
  EXPECT_EQ(h.find("two<kernels>"), std::string::npos);
  EXPECT_NE(h.find("triton_poi_&lt;b&gt;&amp;&quot;evil&quot;"), std::string::npos);
  EXPECT_NE(h.find("two&lt;kernels&gt;"), std::string::npos);
}

TEST(BenchHtml, NewPlotsAreEmptyWithoutRooflineFields) {
  const std::string h = bench_html(synthetic());  // rows as older bench.json files hold them
  EXPECT_NE(h.find("id=\"roofline-plot\" data-problems=\"0\""), std::string::npos);
  EXPECT_NE(h.find("id=\"time-plot\" data-problems=\"0\""), std::string::npos);
  EXPECT_EQ(h.find("id=\"roofline-summary\""), std::string::npos);
  json partial = {{"problems", {{{"problem", "x.py"}, {"roofline", {{"fraction_before", nullptr}}},
                                 {"kernels", {{{"name", "k"}, {"before_ms", "fast"}}}}}}}};
  const std::string p = bench_html(partial);
  EXPECT_NE(p.find("id=\"roofline-plot\" data-problems=\"0\""), std::string::npos);
  EXPECT_NE(p.find("id=\"time-plot\" data-problems=\"0\""), std::string::npos);
}

namespace {

/// The softmax fixture with what this branch adds to report.json (problem_work, cost), as the bench tests add it.
json softmax_with_work_and_cost() {
  json r = softmax_report();
  r["problem_work"] = {{"min_bytes", 2.0 * 4096 * 8192 * 4}, {"flops", 0}};
  r["cost"] = {{"wall_s", 41.5}, {"gpu_s", 12.25}, {"compile_s", 8.5}};
  return r;
}

/// The <tr> of the per-problem table whose first cell is `problem` (escaped); "" if none.
std::string table_row(const std::string& h, const std::string& problem) {
  const size_t at = h.find("<tr><td>" + problem + "</td>");
  return at == std::string::npos ? "" : h.substr(at, h.find("</tr>", at) - at);
}

}  // namespace

TEST(BenchHtml, ProblemTableHasTheProblemsRooflineAndCost) {
  std::vector<json> rows = {kernelopt::bench::bench_row("level1/softmax.py", softmax_with_work_and_cost(), ""),
                            row("level1/old_row.py", "improved", 1.1),
                            kernelopt::bench::bench_row("level2/failed.py", json(), "boom")};
  const std::string h = bench_html({{"problems", rows}, {"aggregate", kernelopt::bench::aggregate(rows)}});
  for (const char* th : {"<th>min MB</th>", "<th>GFLOP</th>", "<th>bound</th>",
                         "<th>% of roofline end to end before \xe2\x86\x92 after</th>", "<th>wall s</th>",
                         "<th>GPU s</th>", "<th>compile s</th>", "<th>screened / gated</th>",
                         "<th>GPU s median / total</th>"}) {
    EXPECT_NE(h.find(th), std::string::npos) << th;
  }
  const std::string softmax = table_row(h, "level1/softmax.py");
  ASSERT_FALSE(softmax.empty());
  EXPECT_NE(softmax.find("<td>268.4</td><td>0</td><td>memory</td>"), std::string::npos) << softmax;
  EXPECT_NE(softmax.find("<td class=\"e2e-roofline\">46% \xe2\x86\x92 51%</td><td>42</td><td class=\"gpu-s\">12</td>"
                         "<td>8.5</td><td>25 / 4</td>"),
            std::string::npos)
      << softmax;
  // an old row and a failed one: the new cells are there, empty or "-"
  const std::string old = table_row(h, "level1/old_row.py");
  EXPECT_NE(old.find("<td class=\"e2e-roofline\"></td><td>-</td><td class=\"gpu-s\">-</td><td>-</td><td></td>"),
            std::string::npos)
      << old;
  EXPECT_EQ(count(table_row(h, "level2/failed.py"), "<td"), count(softmax, "<td"));
  EXPECT_NE(h.find("id=\"e2e-roofline-summary\""), std::string::npos);
  EXPECT_NE(h.find("id=\"cost-summary\""), std::string::npos);
  EXPECT_NE(h.find("pointwise ops are not counted"), std::string::npos);
  // the level table: median end to end and GPU seconds
  EXPECT_NE(h.find("<td>46% \xe2\x86\x92 51%</td><td>12 / 12</td></tr>"), std::string::npos);
}

TEST(BenchHtml, NoCostOrProblemRooflineSummaryFromOlderRows) {
  const std::string h = bench_html(synthetic());
  EXPECT_EQ(h.find("id=\"e2e-roofline-summary\""), std::string::npos);
  EXPECT_EQ(h.find("id=\"cost-summary\""), std::string::npos);
}

TEST(BenchHtml, DecisionsTableOnlyWhereRowsSearchedThem) {
  json bench = synthetic();
  EXPECT_EQ(bench_html(bench).find("decisions-table"), std::string::npos);
  bench["problems"][0]["decisions"] = {{"kept", "cudagraphs"}, {"compile_default_ms", 2.0}, {"best_mode", "cudagraphs"},
                                       {"best_mode_ms", 1.0}, {"with_decisions_ms", 0.9},
                                       {"without_decisions", {{"speedup", 1.05}}}, {"speedup_vs_best_mode", 1.111}};
  const std::string h = bench_html(bench);
  EXPECT_NE(h.find("decisions-table"), std::string::npos);
  EXPECT_NE(h.find("<td>cudagraphs</td><td>2.0000</td><td>1.0000 (cudagraphs)</td><td>1.050x</td>"), std::string::npos)
      << h;
  EXPECT_NE(h.find("<td>0.9000</td><td>1.111x</td><td></td></tr>"), std::string::npos) << h;
}

TEST(BenchHtml, KernelsUnderTheBarGetATableWithTheirReasonsEscaped) {
  json bench = synthetic();
  EXPECT_EQ(bench_html(bench).find("under-roofline-table"), std::string::npos);  // none under the bar
  bench["problems"][0]["kernels"] = {{{"name", "k_long_row"}, {"bound", "memory"}, {"before_ms", 5.0}, {"after_ms", 5.0},
                                      {"roofline_before", 0.64}, {"roofline_after", 0.64}, {"status", "kept baseline"},
                                      {"why", "no candidate passed <all> four gates"},
                                      {"rewrites_skipped", json::array()}}};
  bench["aggregate"] = kernelopt::bench::aggregate(bench["problems"].get<std::vector<json>>());
  const std::string h = bench_html(bench);
  EXPECT_NE(h.find("<h2>Kernels under 70% of the bandwidth after optimization</h2>"), std::string::npos) << h;
  EXPECT_NE(h.find("<td>level1/a_softmax.py</td><td>k_long_row</td><td>100%</td><td>64% → 64%</td><td>kept baseline"
                   "</td><td>no candidate passed &lt;all&gt; four gates</td>"),
            std::string::npos)
      << h;
}
