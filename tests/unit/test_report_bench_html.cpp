// bench.html from a synthetic bench.json: plot ids, one bar per problem, the 1.0 line, escaped user text.
#include <gtest/gtest.h>

#include <string>

#include "engine/bench.hpp"
#include "report/bench_html.hpp"

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
                            kernelopt::engine::bench_row("level2/c_<gemm>.py", json(), "boom <script>alert(1)</script>")};
  return {{"problems", rows}, {"aggregate", kernelopt::engine::aggregate(rows)}};
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
