// Spec parsing (scheme table, defaults, options) and the provider factory.
#include "llm/spec.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "llm/anthropic.hpp"
#include "llm/exec_provider.hpp"
#include "llm/openai.hpp"
#include "llm/relay_provider.hpp"

namespace kernelopt::llm {
namespace {

constexpr const char* kExpected = "expected openai:MODEL, anthropic:MODEL, exec:COMMAND or relay:DIR";

// Defaults, with their reasons: LLM answers can take minutes (long outputs,
// reasoning models), a command may run a local model, and a relay's default is
// not to wait at all (the run stops and resumes when answers exist).
constexpr double kHttpTimeoutS = 300;
constexpr double kExecTimeoutS = 600;
constexpr double kRelayTimeoutS = 0;

bool is_http(const std::string& scheme) { return scheme == "openai" || scheme == "anthropic"; }

// The providers speak HTTP(S) only (libcurl is also told so): a file:// or other URL would read what is not an API.
bool is_http_url(const std::string& url) {
  std::string head = url.substr(0, 8);
  std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::tolower(c); });
  return head.rfind("http://", 0) == 0 || head.rfind("https://", 0) == 0;
}

bool option_applies(const std::string& scheme, const std::string& key) {
  if (key == "timeout_s" || key == "price_input_per_mtok" || key == "price_output_per_mtok") return true;
  if (key == "max_concurrency") return scheme != "relay";
  if (key == "base_url" || key == "api_key_env" || key == "max_retries" || key == "retry_base_delay_s" ||
      key == "retry_after_cap_s" || key == "max_response_mb")
    return is_http(scheme);
  return false;
}

bool known_option(const std::string& key) {
  for (const char* scheme : {"openai", "exec"})
    if (option_applies(scheme, key)) return true;
  return false;
}

double parse_number(const std::string& key, const std::string& value) {
  double x = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || !std::isfinite(x) || x < 0)
    throw std::invalid_argument(fmt::format("LLM option {}: '{}' is not a number >= 0", key, value));
  return x;
}

int parse_int(const std::string& key, const std::string& value, int min) {
  int x = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || x < min)
    throw std::invalid_argument(fmt::format("LLM option {}: '{}' is not an integer >= {}", key, value, min));
  return x;
}

void apply_option(ProviderSpec& spec, const std::string& option) {
  const size_t eq = option.find('=');
  if (eq == std::string::npos || eq == 0)
    throw std::invalid_argument(fmt::format("LLM option '{}': expected key=value", option));
  const std::string key = option.substr(0, eq);
  const std::string value = option.substr(eq + 1);
  if (!known_option(key))
    throw std::invalid_argument(fmt::format("unknown LLM option '{}'", key));
  if (!option_applies(spec.scheme, key))
    throw std::invalid_argument(fmt::format("LLM option '{}' does not apply to {} providers", key, spec.scheme));
  if (key == "base_url") {
    if (value.empty()) throw std::invalid_argument("LLM option base_url: empty URL");
    if (!is_http_url(value))
      throw std::invalid_argument(fmt::format("LLM option base_url: '{}' must start with http:// or https://", value));
    spec.base_url = value;
    while (spec.base_url.size() > 1 && spec.base_url.back() == '/') spec.base_url.pop_back();
  } else if (key == "api_key_env") {
    spec.api_key_env = value;
  } else if (key == "timeout_s") {
    spec.timeout_s = parse_number(key, value);
  } else if (key == "max_concurrency") {
    spec.max_concurrency = parse_int(key, value, 1);
  } else if (key == "max_retries") {
    spec.retry.max_retries = parse_int(key, value, 0);
  } else if (key == "retry_base_delay_s") {
    spec.retry.base_delay_s = parse_number(key, value);
  } else if (key == "retry_after_cap_s") {
    spec.retry.retry_after_cap_s = parse_number(key, value);
  } else if (key == "max_response_mb") {
    spec.max_response_bytes = static_cast<size_t>(parse_int(key, value, 1)) << 20;
  } else if (key == "price_input_per_mtok") {
    spec.pricing.usd_per_mtok_input = parse_number(key, value);
  } else if (key == "price_output_per_mtok") {
    spec.pricing.usd_per_mtok_output = parse_number(key, value);
  }
}

}  // namespace

ProviderSpec parse_spec(const std::string& text, const std::vector<std::string>& options) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos)
    throw std::invalid_argument(fmt::format("LLM provider '{}' has no scheme ({})", text, kExpected));
  ProviderSpec spec;
  spec.scheme = text.substr(0, colon);
  spec.target = text.substr(colon + 1);
  if (spec.scheme == "openai") {
    spec.base_url = "https://api.openai.com/v1";
    spec.api_key_env = "OPENAI_API_KEY";
    spec.timeout_s = kHttpTimeoutS;
  } else if (spec.scheme == "anthropic") {
    spec.base_url = "https://api.anthropic.com";
    spec.api_key_env = "ANTHROPIC_API_KEY";
    spec.timeout_s = kHttpTimeoutS;
  } else if (spec.scheme == "exec") {
    spec.timeout_s = kExecTimeoutS;
  } else if (spec.scheme == "relay") {
    spec.timeout_s = kRelayTimeoutS;
  } else {
    throw std::invalid_argument(fmt::format("unknown LLM provider '{}' in '{}' ({})", spec.scheme, text, kExpected));
  }
  if (std::all_of(spec.target.begin(), spec.target.end(), [](unsigned char c) { return std::isspace(c); }))
    throw std::invalid_argument(fmt::format("LLM provider '{}' has an empty target ({})", text, kExpected));
  for (const std::string& option : options) apply_option(spec, option);
  return spec;
}

std::unique_ptr<Provider> make_provider(const ProviderSpec& spec) {
  if (spec.scheme == "openai") return std::make_unique<OpenAIProvider>(spec);
  if (spec.scheme == "anthropic") return std::make_unique<AnthropicProvider>(spec);
  if (spec.scheme == "exec") return std::make_unique<ExecProvider>(spec);
  if (spec.scheme == "relay") return std::make_unique<RelayProvider>(spec);
  throw std::invalid_argument(fmt::format("unknown LLM provider '{}' ({})", spec.scheme, kExpected));
}

}  // namespace kernelopt::llm
