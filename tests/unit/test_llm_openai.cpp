// Tests for llm/openai.hpp: the wire format alone, then the provider over loopback.
#include "llm/openai.hpp"

#include <cstdlib>
#include <mutex>

#include <gtest/gtest.h>

#include "llm/spec.hpp"
#include "test_llm_server.hpp"

using namespace kernelopt::llm;
using kernelopt::llm::testing::LoopbackServer;
using nlohmann::json;

namespace {

constexpr const char* kKey = "sk-openai-test-key-42";

ChatRequest sample() {
  ChatRequest r;
  r.system = "You write Triton.";
  r.messages = {{"user", "make it fast"}};
  r.temperature = 0.2;
  r.max_tokens = 123;
  return r;
}

std::unique_ptr<Provider> openai_at(const LoopbackServer& server) {
  ::setenv("KERNELOPT_TEST_OPENAI_KEY", kKey, 1);
  return make_provider(parse_spec("openai:gpt-test", {"base_url=" + server.url() + "/v1",
                                                      "api_key_env=KERNELOPT_TEST_OPENAI_KEY", "max_retries=0",
                                                      "price_input_per_mtok=2", "price_output_per_mtok=8"}));
}

}  // namespace

TEST(LlmOpenAI, RequestBodyPutsSystemFirst) {
  const json body = openai_request_body(sample(), "gpt-x");
  EXPECT_EQ(body["model"], "gpt-x");
  EXPECT_EQ(body["max_tokens"], 123);
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.2);
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][0], json({{"role", "system"}, {"content", "You write Triton."}}));
  EXPECT_EQ(body["messages"][1], json({{"role", "user"}, {"content", "make it fast"}}));
  ChatRequest no_system = sample();
  no_system.system.clear();
  EXPECT_EQ(openai_request_body(no_system, "m")["messages"].size(), 1u);
}

TEST(LlmOpenAI, ParsesTextUsageModel) {
  ChatResponse r = openai_parse_response(
      R"({"model":"gpt-x-2025","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},)"
      R"("finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}})");
  EXPECT_EQ(r.text, "hi");
  EXPECT_EQ(r.input_tokens, 11);
  EXPECT_EQ(r.output_tokens, 7);
  EXPECT_EQ(r.model, "gpt-x-2025");
}

TEST(LlmOpenAI, ParsesTextPartsAndMissingUsage) {
  ChatResponse r = openai_parse_response(
      R"({"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]})");
  EXPECT_EQ(r.text, "ab");
  EXPECT_EQ(r.input_tokens, 0);
}

TEST(LlmOpenAI, RejectsAnswersWithoutText) {
  EXPECT_THROW(openai_parse_response(R"({"choices":[]})"), ProviderError);
  EXPECT_THROW(openai_parse_response(R"({"choices":[{"message":{"content":null},"finish_reason":"length"}]})"),
               ProviderError);
  EXPECT_THROW(openai_parse_response(R"([1,2])"), ProviderError);
  EXPECT_THROW(openai_parse_response("not json"), json::exception);
}

TEST(LlmOpenAI, HappyPathOverHttp) {
  std::mutex m;
  json seen_body;
  std::string seen_auth, seen_path;
  LoopbackServer server([&](httplib::Server& s) {
    s.Post("/v1/chat/completions", [&](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(m);
      seen_body = json::parse(req.body);
      seen_auth = req.get_header_value("Authorization");
      seen_path = req.path;
      res.set_content(R"({"model":"gpt-test-0","choices":[{"message":{"role":"assistant","content":"fast kernel"}}],)"
                      R"("usage":{"prompt_tokens":1000,"completion_tokens":500}})",
                      "application/json");
    });
  });
  ASSERT_TRUE(server.ok());
  auto provider = openai_at(server);
  ChatResponse r = provider->complete(sample());
  EXPECT_EQ(r.text, "fast kernel");
  EXPECT_EQ(r.input_tokens, 1000);
  EXPECT_EQ(r.output_tokens, 500);
  EXPECT_EQ(r.model, "gpt-test-0");
  EXPECT_EQ(r.provider, "openai:gpt-test");
  EXPECT_FALSE(r.from_cache);
  EXPECT_DOUBLE_EQ(r.cost_usd, (1000 * 2.0 + 500 * 8.0) / 1e6);

  std::lock_guard lock(m);
  EXPECT_EQ(seen_path, "/v1/chat/completions");
  EXPECT_EQ(seen_auth, std::string("Bearer ") + kKey);
  EXPECT_EQ(seen_body["model"], "gpt-test");  // the spec's model when the request names none
  EXPECT_EQ(seen_body["messages"].size(), 2u);
  EXPECT_EQ(seen_body["messages"][1]["content"], "make it fast");
  EXPECT_EQ(seen_body["max_tokens"], 123);
}

TEST(LlmOpenAI, RequestModelOverridesSpecAndNoKeyMeansNoAuthHeader) {
  std::string seen_model;
  bool had_auth = true;
  LoopbackServer server([&](httplib::Server& s) {
    s.Post("/v1/chat/completions", [&](const httplib::Request& req, httplib::Response& res) {
      seen_model = json::parse(req.body)["model"];
      had_auth = req.has_header("Authorization");
      res.set_content(R"({"choices":[{"message":{"content":"ok"}}]})", "application/json");
    });
  });
  ASSERT_TRUE(server.ok());
  auto provider = make_provider(parse_spec("openai:default", {"base_url=" + server.url() + "/v1", "api_key_env="}));
  ChatRequest r = sample();
  r.model = "override";
  ChatResponse out = provider->complete(r);
  EXPECT_EQ(out.model, "override");  // the server named none: the one asked for
  EXPECT_EQ(seen_model, "override");
  EXPECT_FALSE(had_auth);
}

TEST(LlmOpenAI, MalformedJsonIsAClearError) {
  LoopbackServer server([&](httplib::Server& s) {
    s.Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
      res.set_content("{\"choices\": [", "application/json");
    });
  });
  ASSERT_TRUE(server.ok());
  auto provider = openai_at(server);
  try {
    provider->complete(sample());
    FAIL() << "no error";
  } catch (const ProviderError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("openai:gpt-test: malformed response from http://127.0.0.1:"), std::string::npos) << m;
    EXPECT_NE(m.find("{\"choices\": ["), std::string::npos) << m;  // the body, to see what came
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.find(kKey), std::string::npos) << m;
  }
}
