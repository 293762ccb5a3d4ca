// The adversarial suite's naming of the gate that caught a case (its table: test_report_bench_markdown.cpp).
#include <gtest/gtest.h>

#include <string>

#include "bench/adversarial.hpp"

using kernelopt::bench::caught_by;

TEST(BenchAdversarial, CaughtByNamesTheGateOrWhatHappenedToTheWorker) {
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
