// The adversarial suite's naming of the gate that caught a case, and its Markdown table.
#include <gtest/gtest.h>

#include <string>

#include "engine/adversarial.hpp"

using nlohmann::json;
using kernelopt::engine::adversarial_markdown;
using kernelopt::engine::caught_by;

TEST(EngineAdversarial, CaughtByNamesTheGateOrWhatHappenedToTheWorker) {
  EXPECT_EQ(caught_by("static", "import of os is not allowed (line 1)"), "static");
  EXPECT_EQ(caught_by("static", "compile error: InterpreterError: AttributeError(...)"), "compile");
  EXPECT_EQ(caught_by("static", "worker timeout: op 'compile' timed out after 30000 ms; worker (pid 1) killed"),
            "timeout");
  EXPECT_EQ(caught_by("performance", "worker crashed: worker (pid 2) died during op 'bench': killed by signal 11"),
            "worker-crash");
  EXPECT_EQ(caught_by("correctness", "seed 0: out_ptr has 3 of 700 elements mismatching"), "correctness");
  EXPECT_EQ(caught_by("model", "seed 0 output 1: 5 NaN/Inf positions differ from float64"), "model");
  // a compile error is only gate 1's: a later gate quoting the words is that gate's
  EXPECT_EQ(caught_by("correctness", "compile error in launch 0"), "correctness");
}

TEST(EngineAdversarial, MarkdownTableHasARowPerCaseWithPipesEscaped) {
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
