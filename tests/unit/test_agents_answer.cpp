// Tests for agents/answer.hpp: reading the agents' answers, strictly, as data.
#include "agents/answer.hpp"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

using namespace kernelopt::agents;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kConstexprs = {"XBLOCK", "R0_BLOCK"};

const char* kKernel = R"(@triton.jit
def triton_red_fused__softmax_0(in_ptr0, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    tl.store(out_ptr2 + xoffset, tl.load(in_ptr0 + xoffset))
)";

std::string answer(const std::string& code, const std::string& json_text, const std::string& fence = "python") {
  return "Here is a faster kernel.\n\n```" + fence + "\n" + code + "```\n\nAnd its launch:\n\n```json\n" + json_text +
         "\n```\nThis reads each row once.\n";
}

// The message of the AnswerError that parse throws (fails the test if none).
template <typename F>
std::string error_of(F&& parse) {
  try {
    parse();
  } catch (const AnswerError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << "not one line: " << m;
    return m;
  }
  ADD_FAILURE() << "no AnswerError";
  return "";
}

std::string kernel_error(const std::string& text) {
  return error_of([&] { parse_kernel_answers(text, kConstexprs); });
}

// --- fenced blocks ------------------------------------------------------------

TEST(AgentsAnswer, FencedBlocksKeepTextAndInfo) {
  const auto b = fenced_blocks("prose\n```Python \nx = 1\n\n```\n````json\n{\"a\": \"```\"}\n````\n  ```\n  y\n    z\n  ```\n");
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].info, "python");
  EXPECT_EQ(b[0].text, "x = 1\n\n");
  EXPECT_EQ(b[0].line, 2);
  EXPECT_EQ(b[1].info, "json");
  EXPECT_EQ(b[1].text, "{\"a\": \"```\"}\n");  // a shorter fence inside a longer one is text
  EXPECT_EQ(b[2].text, "y\n  z\n");            // the fence's indentation is removed from its lines
  EXPECT_TRUE(b[2].closed);
  const auto open = fenced_blocks("```python\ndef f():\n    pass");
  ASSERT_EQ(open.size(), 1u);
  EXPECT_FALSE(open[0].closed);
  EXPECT_TRUE(fenced_blocks("inline ```code``` is not a fence").empty());
  EXPECT_EQ(fenced_blocks("```py\r\nx\r\n```\r\n").at(0).text, "x\n");
  EXPECT_EQ(fenced_blocks("```python title=\"kernel.py\"\nx\n```").at(0).info, "python");
}

// --- kernel answers -------------------------------------------------------------

TEST(AgentsAnswer, ReadsOneCandidate) {
  const auto a = parse_kernel_answers(
      answer(kKernel, R"({"meta": {"XBLOCK": 1, "R0_BLOCK": 8192, "num_warps": 16, "num_stages": 1},
                          "grid": null, "notes": "one pass,\n  row in registers"})"),
      kConstexprs);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].code, kKernel);
  EXPECT_EQ(a[0].meta, json({{"XBLOCK", 1}, {"R0_BLOCK", 8192}, {"num_warps", 16}, {"num_stages", 1}}));
  EXPECT_TRUE(a[0].grid.empty());
  EXPECT_EQ(a[0].notes, "one pass, row in registers");
}

TEST(AgentsAnswer, ToleratesPyAndBareFencesAndMissingOptionalKeys) {
  auto a = parse_kernel_answers(answer(kKernel, R"({"meta": {}})", "py"), kConstexprs);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].meta, json::object());
  EXPECT_EQ(a[0].notes, "");
  a = parse_kernel_answers("```\n" + std::string(kKernel) + "```\n```\n{\"meta\": {\"XBLOCK\": 4}}\n```", kConstexprs);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].meta["XBLOCK"], 4);
}

TEST(AgentsAnswer, ReadsSeveralCandidatesWithGrids) {
  const std::string text =
      "### Candidate 1\n\nOne row per program.\n\n```python\n" + std::string(kKernel) +
      "```\n```json\n{\"meta\": {\"XBLOCK\": 1, \"R0_BLOCK\": 8192, \"num_warps\": 32, \"num_stages\": 1}, \"grid\": "
      "null, \"notes\": \"a\"}\n```\n\n### Candidate 2\n\nTwo rows per program, explicit grid.\n\n```python\n"
      "@triton.jit\ndef helper(x):\n    return x\n\n" + kKernel +
      "```\n```json\n{\"meta\": {\"XBLOCK\": 2, \"num_warps\": 8}, \"grid\": [\"(xnumel + 1) // 2\", \"1\"], "
      "\"notes\": \"b\"}\n```\n";
  const auto a = parse_kernel_answers(text, kConstexprs);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].notes, "a");
  EXPECT_EQ(a[0].meta["num_warps"], 32);
  EXPECT_EQ(a[1].grid, (std::vector<std::string>{"(xnumel + 1) // 2", "1"}));
  EXPECT_NE(a[1].code.find("def helper"), std::string::npos);
  EXPECT_EQ(a[1].meta, json({{"XBLOCK", 2}, {"num_warps", 8}}));
}

TEST(AgentsAnswer, NoCodeBlockIsAnError) {
  EXPECT_NE(kernel_error("I think XBLOCK=128 would be faster.").find("no ```python block"), std::string::npos);
  EXPECT_NE(kernel_error("```json\n{\"meta\": {}}\n```").find("no ```python block"), std::string::npos);
  EXPECT_NE(kernel_error("").find("no ```python block"), std::string::npos);
}

TEST(AgentsAnswer, MissingJsonBlockIsAnError) {
  EXPECT_NE(kernel_error("```python\n" + std::string(kKernel) + "```\n").find("no ```json block"), std::string::npos);
  const std::string two_python = "```python\nx = 1\n```\n```python\n" + std::string(kKernel) +
                                 "```\n```json\n{\"meta\": {}}\n```";
  EXPECT_NE(kernel_error(two_python).find("candidate 1"), std::string::npos);
}

TEST(AgentsAnswer, MalformedJsonIsAnError) {
  const std::string m = kernel_error(answer(kKernel, R"({"meta": {"XBLOCK": 1,}, })"));
  EXPECT_NE(m.find("does not parse as JSON"), std::string::npos) << m;
  EXPECT_NE(m.find("candidate 1"), std::string::npos) << m;
  EXPECT_NE(kernel_error(answer(kKernel, R"(["meta"])")).find("not an object"), std::string::npos);
  EXPECT_NE(kernel_error(answer(kKernel, R"({"grid": null})")).find("no \"meta\""), std::string::npos);
  EXPECT_NE(kernel_error(answer(kKernel, R"({"meta": {}, "launcher": "def f(): pass"})")).find("unknown key 'launcher'"),
            std::string::npos);
}

TEST(AgentsAnswer, BadMetaIsAnError) {
  for (const char* meta : {R"({"XBLOCK": 0})", R"({"XBLOCK": -4})", R"({"XBLOCK": 1.5})", R"({"XBLOCK": "64"})",
                           R"({"XBLOCK": true})", R"({"XBLOCK": null})", R"({"XBLOCK": 99999999999})",
                           R"({"num_stages": 0})"}) {
    const std::string m = kernel_error(answer(kKernel, std::string("{\"meta\": ") + meta + "}"));
    EXPECT_NE(m.find("positive integer"), std::string::npos) << meta << ": " << m;
  }
  for (const char* warps : {"3", "48", "64"}) {
    const std::string m = kernel_error(answer(kKernel, std::string("{\"meta\": {\"num_warps\": ") + warps + "}}"));
    EXPECT_NE(m.find("power of two"), std::string::npos) << warps << ": " << m;
  }
  const std::string m = kernel_error(answer(kKernel, R"({"meta": {"YBLOCK": 16}})"));
  EXPECT_NE(m.find("unknown key 'YBLOCK'"), std::string::npos) << m;
  EXPECT_NE(kernel_error(answer(kKernel, R"({"meta": [1, 2]})")).find("not a JSON object"), std::string::npos);
}

TEST(AgentsAnswer, BadGridIsAnError) {
  for (const char* grid : {R"("xnumel")", R"([])", R"(["1", "2", "3", "4"])", R"([1])", R"([""])", R"({"x": "1"})"}) {
    const std::string m = kernel_error(answer(kKernel, std::string("{\"meta\": {}, \"grid\": ") + grid + "}"));
    EXPECT_NE(m.find("grid"), std::string::npos) << grid << ": " << m;
  }
  EXPECT_NE(kernel_error(answer(kKernel, R"({"meta": {}, "notes": 3})")).find("notes"), std::string::npos);
}

TEST(AgentsAnswer, TruncatedAnswerIsAnError) {
  const std::string full = answer(kKernel, R"({"meta": {"XBLOCK": 1}})");
  // cut inside the python block, then inside the json block
  std::string m = kernel_error(full.substr(0, full.find("tl.store")));
  EXPECT_NE(m.find("never closed"), std::string::npos) << m;
  EXPECT_NE(m.find("python block"), std::string::npos) << m;
  m = kernel_error(full.substr(0, full.find("\"XBLOCK\"")));
  EXPECT_NE(m.find("json block"), std::string::npos) << m;
  EXPECT_NE(m.find("never closed"), std::string::npos) << m;
}

TEST(AgentsAnswer, EmptyOrOversizedCodeIsAnError) {
  EXPECT_NE(kernel_error(answer("\n", R"({"meta": {}})")).find("empty"), std::string::npos);
  EXPECT_NE(kernel_error(answer(std::string(kMaxCodeBytes + 1, '#') + "\n", R"({"meta": {}})")).find("bytes"),
            std::string::npos);
}

TEST(AgentsAnswer, MaliciousHostCodeIsOnlyData) {
  // Module-level host code: parsing returns it unchanged, as text, for the static gate to reject; nothing runs.
  const fs::path marker = fs::temp_directory_path() / ("kernelopt_pwned_" + std::to_string(::getpid()));
  fs::remove(marker);
  const std::string evil = "import os\nos.system('touch " + marker.string() +
                           "')\n__import__('subprocess').run(['sh', '-c', 'touch " + marker.string() + "'])\n\n" +
                           kKernel;
  const auto a = parse_kernel_answers(answer(evil, R"({"meta": {"XBLOCK": 1}, "notes": "trust me"})"), kConstexprs);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].code, evil);
  EXPECT_FALSE(fs::exists(marker));
}

TEST(AgentsAnswer, TooManyCandidatesIsAnError) {
  std::string text;
  for (int i = 0; i <= kMaxCandidates; ++i) text += answer(kKernel, R"({"meta": {}})");
  EXPECT_NE(kernel_error(text).find("more than"), std::string::npos);
}

// --- JSON answers -----------------------------------------------------------------

TEST(AgentsAnswer, AnswerJsonFindsTheBlockOrTheWholeText) {
  EXPECT_EQ(answer_json("Sure:\n```json\n[1, 2]\n```\nand ```json``` more"), json({1, 2}));
  EXPECT_EQ(answer_json("```\nnot json\n```\n```\n{\"a\": 1}\n```"), json({{"a", 1}}));
  EXPECT_EQ(answer_json("  {\"a\": 2}\n"), json({{"a", 2}}));
  EXPECT_NE(error_of([] { answer_json("no json here"); }).find("no ```json block"), std::string::npos);
  EXPECT_NE(error_of([] { answer_json("```json\n{\"a\": \n```"); }).find("does not parse"), std::string::npos);
  EXPECT_NE(error_of([] { answer_json("```json\n{\"a\": 1"); }).find("never closed"), std::string::npos);
}

TEST(AgentsAnswer, ProfilerDiagnoses) {
  const std::vector<std::string> kernels = {"k0", "k1"};
  const auto d = parse_profiler_answer("```json\n{\"k0\": \"reads the row twice\\nfix: one pass\", \"k1\": \"  \"}\n```",
                                       kernels);
  EXPECT_EQ(d, (std::map<std::string, std::string>{{"k0", "reads the row twice fix: one pass"}}));
  EXPECT_NE(error_of([&] { parse_profiler_answer(R"({"k9": "x"})", kernels); }).find("unknown kernel 'k9'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_profiler_answer(R"({"k0": 3})", kernels); }).find("not a string"), std::string::npos);
  EXPECT_NE(error_of([&] { parse_profiler_answer(R"(["k0"])", kernels); }).find("not a JSON object"), std::string::npos);
  EXPECT_LE(parse_profiler_answer("{\"k0\": \"" + std::string(5000, 'a') + "\"}", kernels).at("k0").size(),
            kMaxDiagnosisChars);
}

std::vector<KernelProfile> three_profiles() {
  std::vector<KernelProfile> p(3);
  p[0].name = "a";
  p[0].share = 0.5;
  p[0].roofline_fraction = 0.4;
  p[1].name = "b";
  p[1].share = 0.3;
  p[2].name = "c";
  p[2].share = 0.1;
  return p;
}

TEST(AgentsAnswer, PlannerPlanKeepsOrderAndListsEveryKernel) {
  const auto plan = parse_planner_answer(
      "```json\n[{\"kernel\": \"b\", \"budget\": 10, \"strategy\": \"fuse\", \"reason\": \"ignored\"},"
      " {\"kernel\": \"a\", \"budget\": 20}]\n```",
      three_profiles(), 48);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].kernel, "b");
  EXPECT_EQ(plan[0].budget, 10);
  EXPECT_EQ(plan[0].strategy, "fuse");
  EXPECT_EQ(plan[0].why, "LLM plan: fuse");
  EXPECT_DOUBLE_EQ(plan[0].score, 0.3);
  EXPECT_EQ(plan[1].kernel, "a");
  EXPECT_EQ(plan[1].budget, 20);
  EXPECT_DOUBLE_EQ(plan[1].score, 0.5 * 0.6);
  EXPECT_EQ(plan[2].kernel, "c");
  EXPECT_EQ(plan[2].budget, 0);
  EXPECT_EQ(plan[2].why.rfind("skipped: ", 0), 0u);
  EXPECT_EQ(plan[0].to_json()["strategy"], "fuse");
}

TEST(AgentsAnswer, PlannerBudgetsAreRescaledToTheTotal) {
  auto plan = parse_planner_answer(
      R"([{"kernel": "a", "budget": 40}, {"kernel": "b", "budget": 40}, {"kernel": "c", "budget": 0}])",
      three_profiles(), 48);
  EXPECT_EQ(plan[0].budget, 24);
  EXPECT_EQ(plan[1].budget, 24);
  EXPECT_EQ(plan[2].budget, 0);
  EXPECT_EQ(plan[2].why, "skipped: the LLM plan gives it no budget");
  plan = parse_planner_answer(R"([{"kernel": "a", "budget": 7}, {"kernel": "b", "budget": 7}, {"kernel": "c", "budget": 7}])",
                              three_profiles(), 10);
  int sum = 0;
  for (const auto& p : plan) sum += p.budget;
  EXPECT_EQ(sum, 10);
  EXPECT_EQ(plan[0].budget, 4);  // largest remainders go to the earlier items on ties
  plan = parse_planner_answer(R"([{"kernel": "a", "budget": 5}])", three_profiles(), 0);
  EXPECT_EQ(plan[0].budget, 0);
}

TEST(AgentsAnswer, PlannerRejectsBadPlans) {
  const auto p = three_profiles();
  EXPECT_NE(error_of([&] { parse_planner_answer(R"([{"kernel": "zz", "budget": 4}])", p, 48); }).find("unknown kernel 'zz'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_planner_answer(R"([{"kernel": "a", "budget": -1}])", p, 48); }).find("budget"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_planner_answer(R"([{"kernel": "a", "budget": 2.5}])", p, 48); }).find("budget"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_planner_answer(R"([{"kernel": "a"}])", p, 48); }).find("budget"), std::string::npos);
  EXPECT_NE(error_of([&] { parse_planner_answer(R"([{"kernel": "a", "budget": 1}, {"kernel": "a", "budget": 1}])", p, 48); })
                .find("twice"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_planner_answer("[]", p, 48); }).find("no kernel"), std::string::npos);
  EXPECT_NE(error_of([&] { parse_planner_answer(R"({"a": 4})", p, 48); }).find("not a JSON list"), std::string::npos);
}

TEST(AgentsAnswer, TunerConfigs) {
  const auto c = parse_tuner_answer(
      "Try these:\n```json\n["
      "{\"XBLOCK\": 1, \"R0_BLOCK\": 8192, \"num_warps\": 16, \"num_stages\": 1},"
      "{\"XBLOCK\": 1, \"R0_BLOCK\": 8192, \"num_warps\": 16, \"num_stages\": 1},"
      "{\"XBLOCK\": 2, \"R0_BLOCK\": 4096, \"num_warps\": 8, \"num_stages\": 2},"
      "{\"XBLOCK\": 4, \"R0_BLOCK\": 2048, \"num_warps\": 8, \"num_stages\": 1}]\n```",
      kConstexprs, 2);
  ASSERT_EQ(c.size(), 2u);  // the duplicate dropped, then cut to max_configs
  EXPECT_EQ(c[0], json({{"XBLOCK", 1}, {"R0_BLOCK", 8192}, {"num_warps", 16}, {"num_stages", 1}}));
  EXPECT_EQ(c[1]["XBLOCK"], 2);
  EXPECT_NE(error_of([] { parse_tuner_answer(R"([{"XBLOCK": 1, "num_warps": 4, "num_stages": 1}])", kConstexprs, 4); })
                .find("missing R0_BLOCK"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_tuner_answer(R"([{"XBLOCK": 1, "R0_BLOCK": 2, "YBLOCK": 2, "num_warps": 4, "num_stages": 1}])",
                                 kConstexprs, 4);
            }).find("unknown key 'YBLOCK'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_tuner_answer(R"([{"XBLOCK": 1, "R0_BLOCK": 2, "num_warps": 6, "num_stages": 1}])", kConstexprs, 4);
            }).find("power of two"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_tuner_answer("[]", kConstexprs, 4); }).find("no config"), std::string::npos);
  EXPECT_NE(error_of([] { parse_tuner_answer(R"({"XBLOCK": 1})", kConstexprs, 4); }).find("not a JSON list"),
            std::string::npos);
}

}  // namespace
