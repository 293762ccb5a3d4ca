// Tests for llm/anthropic.hpp: the wire format alone, then the provider over loopback.
#include "llm/anthropic.hpp"

#include <cstdlib>
#include <mutex>

#include <gtest/gtest.h>

#include "llm/spec.hpp"
#include "test_llm_server.hpp"

using namespace kernelopt::llm;
using kernelopt::llm::testing::LoopbackServer;
using nlohmann::json;

namespace {

constexpr const char* kKey = "sk-ant-test-key-7";

ChatRequest sample() {
  ChatRequest r;
  r.system = "You write Triton.";
  r.messages = {{"user", "make it fast"}, {"assistant", "how fast?"}, {"user", "2x"}};
  r.max_tokens = 2048;
  return r;
}

}  // namespace

TEST(LlmAnthropic, RequestBodyHasTopLevelSystem) {
  const json body = anthropic_request_body(sample(), "claude-x");
  EXPECT_EQ(body["model"], "claude-x");
  EXPECT_EQ(body["system"], "You write Triton.");
  EXPECT_EQ(body["max_tokens"], 2048);
  ASSERT_EQ(body["messages"].size(), 3u);
  EXPECT_EQ(body["messages"][0]["role"], "user");
  ChatRequest no_system = sample();
  no_system.system.clear();
  EXPECT_FALSE(anthropic_request_body(no_system, "m").contains("system"));
}

TEST(LlmAnthropic, SystemMessagesAreFoldedIntoSystem) {
  ChatRequest r = sample();
  r.messages.insert(r.messages.begin(), Message{"system", "Be exact."});
  const json body = anthropic_request_body(r, "m");
  EXPECT_EQ(body["system"], "You write Triton.\n\nBe exact.");
  EXPECT_EQ(body["messages"].size(), 3u);
}

TEST(LlmAnthropic, ParsesTextBlocksAndUsage) {
  ChatResponse r = anthropic_parse_response(
      R"({"id":"msg_1","type":"message","role":"assistant","model":"claude-x-1",)"
      R"("content":[{"type":"text","text":"part one, "},{"type":"tool_use","id":"t"},{"type":"text","text":"two"}],)"
      R"("stop_reason":"end_turn","usage":{"input_tokens":20,"output_tokens":5}})");
  EXPECT_EQ(r.text, "part one, two");
  EXPECT_EQ(r.input_tokens, 20);
  EXPECT_EQ(r.output_tokens, 5);
  EXPECT_EQ(r.model, "claude-x-1");
  EXPECT_THROW(anthropic_parse_response(R"({"content":[],"stop_reason":"max_tokens"})"), ProviderError);
}

TEST(LlmAnthropic, HappyPathOverHttp) {
  std::mutex m;
  json seen_body;
  std::string seen_key, seen_version, seen_auth;
  LoopbackServer server([&](httplib::Server& s) {
    s.Post("/v1/messages", [&](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(m);
      seen_body = json::parse(req.body);
      seen_key = req.get_header_value("x-api-key");
      seen_version = req.get_header_value("anthropic-version");
      seen_auth = req.get_header_value("Authorization");
      res.set_content(R"({"model":"claude-test-1","content":[{"type":"text","text":"ok kernel"}],)"
                      R"("usage":{"input_tokens":40,"output_tokens":2}})",
                      "application/json");
    });
  });
  ASSERT_TRUE(server.ok());
  ::setenv("KERNELOPT_TEST_ANTHROPIC_KEY", kKey, 1);
  auto provider = make_provider(parse_spec(
      "anthropic:claude-test", {"base_url=" + server.url(), "api_key_env=KERNELOPT_TEST_ANTHROPIC_KEY"}));
  ChatResponse r = provider->complete(sample());
  EXPECT_EQ(r.text, "ok kernel");
  EXPECT_EQ(r.input_tokens, 40);
  EXPECT_EQ(r.output_tokens, 2);
  EXPECT_EQ(r.model, "claude-test-1");
  EXPECT_EQ(r.provider, "anthropic:claude-test");

  std::lock_guard lock(m);
  EXPECT_EQ(seen_key, kKey);
  EXPECT_EQ(seen_version, "2023-06-01");
  EXPECT_EQ(seen_auth, "");
  EXPECT_EQ(seen_body["system"], "You write Triton.");
  EXPECT_EQ(seen_body["model"], "claude-test");
  EXPECT_EQ(seen_body["messages"].size(), 3u);
}

TEST(LlmAnthropic, ApiErrorMessageIsShownWithoutTheKey) {
  LoopbackServer server([&](httplib::Server& s) {
    s.Post("/v1/messages", [&](const httplib::Request& req, httplib::Response& res) {
      res.status = 400;
      res.set_content(R"({"type":"error","error":{"type":"invalid_request_error","message":"bad key )" +
                          req.get_header_value("x-api-key") + "\"}}",
                      "application/json");
    });
  });
  ASSERT_TRUE(server.ok());
  ::setenv("KERNELOPT_TEST_ANTHROPIC_KEY", kKey, 1);
  auto provider = make_provider(parse_spec(
      "anthropic:claude-test", {"base_url=" + server.url(), "api_key_env=KERNELOPT_TEST_ANTHROPIC_KEY"}));
  try {
    provider->complete(sample());
    FAIL() << "no error";
  } catch (const ProviderError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("HTTP 400"), std::string::npos) << m;
    EXPECT_NE(m.find("bad key <redacted>"), std::string::npos) << m;
    EXPECT_EQ(m.find(kKey), std::string::npos) << m;
  }
}
