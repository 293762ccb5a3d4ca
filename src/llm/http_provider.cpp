// Shared request/response flow of the HTTP providers.
#include "llm/http_provider.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace kernelopt::llm {
namespace {

constexpr size_t kSnippetChars = 300;  // enough to read an error, short enough for one log line

std::string one_line(std::string_view text) {
  std::string out(text.substr(0, kSnippetChars));
  for (char& c : out)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (text.size() > kSnippetChars) out += "...";
  return out;
}

}  // namespace

std::string api_error_detail(std::string_view body) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("error")) {
    const nlohmann::json& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string())
      return one_line(e["message"].get<std::string>());
    if (e.is_string()) return one_line(e.get<std::string>());
  }
  if (body.empty()) return "empty body";
  return one_line(body);
}

HttpProvider::HttpProvider(const ProviderSpec& spec)
    : spec_(spec), http_(spec.retry, spec.max_concurrency, spec.max_response_bytes) {
  if (spec.api_key_env.empty()) return;
  const char* key = std::getenv(spec.api_key_env.c_str());
  if (!key || !*key)
    throw ProviderError(fmt::format(
        "{}: environment variable {} is not set (it must hold the API key; set api_key_env=NAME to read "
        "another variable, or api_key_env= to send none)",
        spec.name(), spec.api_key_env));
  key_ = key;
}

std::string HttpProvider::unreachable() const {
  constexpr double kProbeTimeoutS = 10;  // a live endpoint connects in well under a second
  const double timeout_s = spec_.timeout_s > 0 ? std::min(kProbeTimeoutS, spec_.timeout_s) : kProbeTimeoutS;
  const std::string why = http_.probe(endpoint(), timeout_s);
  return why.empty() ? why : redact(fmt::format("{}: {}", name(), why), key_);
}

ChatResponse HttpProvider::complete(const ChatRequest& request) {
  const std::string model = request.model.empty() ? spec_.target : request.model;
  const std::string url = endpoint();
  const std::string body =
      request_body(request, model).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  HttpResponse response;
  try {
    spdlog::debug("{}: POST {} ({} bytes)", name(), url, body.size());
    response = http_.post_json(url, auth_headers(key_), body, spec_.timeout_s);
  } catch (const std::exception& e) {
    throw ProviderError(redact(fmt::format("{}: {}", name(), e.what()), key_));
  }
  if (response.status < 200 || response.status > 299)
    throw ProviderError(redact(fmt::format("{}: HTTP {} from {} after {} attempt{}: {}", name(), response.status,
                                           url, response.attempts, response.attempts == 1 ? "" : "s",
                                           api_error_detail(response.body)),
                               key_));
  ChatResponse out;
  try {
    out = parse_response(response.body);
  } catch (const std::exception& e) {
    throw ProviderError(redact(fmt::format("{}: malformed response from {}: {} (body: {})", name(), url,
                                           one_line(e.what()), one_line(response.body)),
                               key_));
  }
  if (out.model.empty()) out.model = model;
  out.provider = name();
  out.cost_usd = spec_.pricing.cost_usd(out.input_tokens, out.output_tokens);
  spdlog::debug("{}: {} input + {} output tokens", name(), out.input_tokens, out.output_tokens);
  return out;
}

}  // namespace kernelopt::llm
