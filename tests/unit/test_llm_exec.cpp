// Tests for llm/exec_provider.hpp: a shell command as the model.
#include "llm/exec_provider.hpp"

#include <chrono>

#include <gtest/gtest.h>

#include "llm/spec.hpp"

using namespace kernelopt::llm;
using Clock = std::chrono::steady_clock;

namespace {

ExecProvider exec(const std::string& command, std::vector<std::string> options = {}) {
  return ExecProvider(parse_spec("exec:" + command, options));
}

ChatRequest sample() {
  ChatRequest r;
  r.model = "local";
  r.system = "sys";
  r.messages = {{"user", "question"}};
  return r;
}

std::string error_of(ExecProvider& p, const ChatRequest& r) {
  try {
    p.complete(r);
  } catch (const ProviderError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

}  // namespace

TEST(LlmExec, FixedAnswer) {
  ExecProvider p = exec("cat >/dev/null; printf 'line one\\nline two\\n'");
  ChatResponse r = p.complete(sample());
  EXPECT_EQ(r.text, "line one\nline two");
  EXPECT_EQ(r.provider, "exec:cat >/dev/null; printf 'line one\\nline two\\n'");
  EXPECT_EQ(r.model, "local");
  EXPECT_EQ(r.cost_usd, 0);
}

TEST(LlmExec, RequestArrivesOnStdin) {
  ExecProvider p = exec("cat");
  EXPECT_EQ(p.complete(sample()).text, canonical_request(sample()));
}

TEST(LlmExec, LargePromptDoesNotDeadlock) {
  ChatRequest big = sample();
  big.messages[0].content = std::string(1 << 20, 'x');  // far beyond a pipe's buffer, both ways
  ExecProvider p = exec("cat", {"timeout_s=60"});
  EXPECT_EQ(p.complete(big).text.size(), canonical_request(big).size());
}

TEST(LlmExec, NonZeroExitIsAnError) {
  ExecProvider p = exec("cat >/dev/null; echo partial; exit 3");
  const std::string m = error_of(p, sample());
  EXPECT_NE(m.find("exited with code 3"), std::string::npos) << m;
  EXPECT_NE(m.find("exec:"), std::string::npos) << m;
}

TEST(LlmExec, ExitWithoutReadingStdinIsFine) {
  ExecProvider p = exec("echo quick");
  ChatRequest big = sample();
  big.messages[0].content = std::string(1 << 20, 'y');
  EXPECT_EQ(p.complete(big).text, "quick");
}

TEST(LlmExec, BackgroundLeftoversDoNotHoldTheCall) {
  // the command answers and exits, leaving a process that holds stdin unread
  ExecProvider p = exec("exec 3<&0; sleep 30 <&3 >/dev/null & echo hi", {"timeout_s=60"});
  ChatRequest big = sample();
  big.messages[0].content = std::string(1 << 20, 'z');
  const auto start = Clock::now();
  EXPECT_EQ(p.complete(big).text, "hi");
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
}

TEST(LlmExec, TimeoutKillsTheCommand) {
  ExecProvider p = exec("sleep 30", {"timeout_s=0.3"});
  const auto start = Clock::now();
  const std::string m = error_of(p, sample());
  EXPECT_NE(m.find("no answer within 0.3 s"), std::string::npos) << m;
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));  // killed, not waited for
}

TEST(LlmExec, MissingProgramIsAnError) {
  ExecProvider p = exec("/nonexistent/kernelopt-llm");
  const std::string m = error_of(p, sample());
  EXPECT_NE(m.find("exited with code 127"), std::string::npos) << m;
}
