// Tests for llm/spec.hpp: spec strings, defaults, options, errors, the factory.
#include "llm/spec.hpp"

#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "llm/anthropic.hpp"
#include "llm/exec_provider.hpp"
#include "llm/openai.hpp"
#include "llm/relay_provider.hpp"

using namespace kernelopt::llm;

namespace {

std::string invalid_message(const std::string& spec, const std::vector<std::string>& options = {}) {
  try {
    parse_spec(spec, options);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << spec << " parsed";
  return "";
}

}  // namespace

TEST(LlmSpec, OpenAIDefaults) {
  ProviderSpec s = parse_spec("openai:gpt-4.1");
  EXPECT_EQ(s.scheme, "openai");
  EXPECT_EQ(s.target, "gpt-4.1");
  EXPECT_EQ(s.base_url, "https://api.openai.com/v1");
  EXPECT_EQ(s.api_key_env, "OPENAI_API_KEY");
  EXPECT_EQ(s.timeout_s, 300);
  EXPECT_EQ(s.max_concurrency, 4);
  EXPECT_EQ(s.retry.max_retries, 4);
  EXPECT_EQ(s.name(), "openai:gpt-4.1");
}

TEST(LlmSpec, AnthropicDefaults) {
  ProviderSpec s = parse_spec("anthropic:claude-sonnet-4");
  EXPECT_EQ(s.target, "claude-sonnet-4");
  EXPECT_EQ(s.base_url, "https://api.anthropic.com");
  EXPECT_EQ(s.api_key_env, "ANTHROPIC_API_KEY");
}

TEST(LlmSpec, ExecKeepsTheWholeCommand) {
  ProviderSpec s = parse_spec("exec:./my-llm.sh --url http://x:1/a,b");
  EXPECT_EQ(s.scheme, "exec");
  EXPECT_EQ(s.target, "./my-llm.sh --url http://x:1/a,b");
  EXPECT_EQ(s.timeout_s, 600);
}

TEST(LlmSpec, RelayDefaultsToNoWait) {
  ProviderSpec s = parse_spec("relay:/path/dir");
  EXPECT_EQ(s.target, "/path/dir");
  EXPECT_EQ(s.timeout_s, 0);
}

TEST(LlmSpec, OptionsOverrideDefaults) {
  ProviderSpec s = parse_spec("openai:qwen", {"base_url=http://127.0.0.1:8000/v1/", "api_key_env=", "timeout_s=30",
                                              "max_retries=2", "max_concurrency=8", "retry_base_delay_s=0.01",
                                              "retry_after_cap_s=5", "price_input_per_mtok=3",
                                              "price_output_per_mtok=15"});
  EXPECT_EQ(s.base_url, "http://127.0.0.1:8000/v1");  // trailing '/' dropped
  EXPECT_EQ(s.api_key_env, "");
  EXPECT_EQ(s.timeout_s, 30);
  EXPECT_EQ(s.retry.max_retries, 2);
  EXPECT_EQ(s.max_concurrency, 8);
  EXPECT_EQ(s.retry.base_delay_s, 0.01);
  EXPECT_EQ(s.retry.retry_after_cap_s, 5);
  EXPECT_EQ(s.pricing.usd_per_mtok_input, 3);
  EXPECT_EQ(s.pricing.usd_per_mtok_output, 15);
}

TEST(LlmSpec, UnknownSchemeIsOneLine) {
  const std::string m = invalid_message("gemini:pro");
  EXPECT_NE(m.find("unknown LLM provider 'gemini'"), std::string::npos) << m;
  EXPECT_NE(m.find("openai:MODEL"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}

TEST(LlmSpec, BadSpecsAndOptions) {
  EXPECT_NE(invalid_message("gpt-4.1").find("no scheme"), std::string::npos);
  EXPECT_NE(invalid_message("openai:").find("empty target"), std::string::npos);
  EXPECT_NE(invalid_message("openai:m", {"colour=red"}).find("unknown LLM option 'colour'"), std::string::npos);
  EXPECT_NE(invalid_message("exec:cat", {"base_url=http://x"}).find("does not apply to exec"), std::string::npos);
  EXPECT_NE(invalid_message("relay:/d", {"max_concurrency=2"}).find("does not apply to relay"), std::string::npos);
  EXPECT_NE(invalid_message("openai:m", {"timeout_s=soon"}).find("not a number"), std::string::npos);
  EXPECT_NE(invalid_message("openai:m", {"timeout_s=-1"}).find("not a number >= 0"), std::string::npos);
  EXPECT_NE(invalid_message("openai:m", {"max_concurrency=0"}).find("integer >= 1"), std::string::npos);
  EXPECT_NE(invalid_message("openai:m", {"max_retries=1.5"}).find("integer >= 0"), std::string::npos);
  EXPECT_NE(invalid_message("openai:m", {"noequals"}).find("key=value"), std::string::npos);
}

TEST(LlmSpec, BaseUrlIsHttpOrHttps) {
  for (const char* url : {"file:///etc/passwd?", "ftp://example.com/v1", "gopher://x", "example.com/v1", "HTTP:/x"}) {
    const std::string m = invalid_message("openai:m", {std::string("base_url=") + url});
    EXPECT_NE(m.find("must start with http:// or https://"), std::string::npos) << url << ": " << m;
  }
  EXPECT_EQ(parse_spec("openai:m", {"base_url=HTTPS://Example.com/v1/"}).base_url, "HTTPS://Example.com/v1");
  EXPECT_EQ(parse_spec("anthropic:m", {"base_url=http://127.0.0.1:8000"}).base_url, "http://127.0.0.1:8000");
}

TEST(LlmSpec, MaxResponseMbDefaultsTo8AndIsAnOption) {
  EXPECT_EQ(parse_spec("openai:m").max_response_bytes, size_t{8} << 20);
  EXPECT_EQ(parse_spec("anthropic:m", {"max_response_mb=64"}).max_response_bytes, size_t{64} << 20);
  EXPECT_NE(invalid_message("openai:m", {"max_response_mb=0"}).find("integer >= 1"), std::string::npos);
  EXPECT_NE(invalid_message("exec:cat", {"max_response_mb=2"}).find("does not apply to exec"), std::string::npos);
}

TEST(LlmSpec, MakeProviderBuildsEachScheme) {
  ::setenv("KERNELOPT_TEST_SPEC_KEY", "sk-spec-secret", 1);
  auto openai = make_provider(parse_spec("openai:m", {"api_key_env=KERNELOPT_TEST_SPEC_KEY"}));
  EXPECT_NE(dynamic_cast<OpenAIProvider*>(openai.get()), nullptr);
  EXPECT_EQ(openai->name(), "openai:m");
  auto anthropic = make_provider(parse_spec("anthropic:m", {"api_key_env=KERNELOPT_TEST_SPEC_KEY"}));
  EXPECT_NE(dynamic_cast<AnthropicProvider*>(anthropic.get()), nullptr);
  auto exec = make_provider(parse_spec("exec:cat"));
  EXPECT_NE(dynamic_cast<ExecProvider*>(exec.get()), nullptr);
  const auto dir = std::filesystem::temp_directory_path() / ("kernelopt_spec_relay_" + std::to_string(::getpid()));
  auto relay = make_provider(parse_spec("relay:" + dir.string()));
  EXPECT_NE(dynamic_cast<RelayProvider*>(relay.get()), nullptr);
  EXPECT_TRUE(std::filesystem::is_directory(dir / "requests"));
  std::filesystem::remove_all(dir);
}

TEST(LlmSpec, MissingKeyNamesTheVariable) {
  ::unsetenv("KERNELOPT_TEST_UNSET_KEY");
  try {
    make_provider(parse_spec("openai:m", {"api_key_env=KERNELOPT_TEST_UNSET_KEY"}));
    FAIL() << "no error";
  } catch (const ProviderError& e) {
    EXPECT_NE(std::string(e.what()).find("KERNELOPT_TEST_UNSET_KEY is not set"), std::string::npos) << e.what();
  }
  ::setenv("KERNELOPT_TEST_UNSET_KEY", "", 1);  // empty counts as missing
  EXPECT_THROW(make_provider(parse_spec("anthropic:m", {"api_key_env=KERNELOPT_TEST_UNSET_KEY"})), ProviderError);
  ::unsetenv("KERNELOPT_TEST_UNSET_KEY");
  EXPECT_NO_THROW(make_provider(parse_spec("openai:m", {"api_key_env="})));  // no key wanted
}
