/// \file
/// What the HTTP providers (OpenAI-compatible, Anthropic) share: the API key
/// read once from the environment, the transport with retries and a
/// concurrency limit, status checks, cost accounting, and error messages that
/// name the provider, the URL and the server's own explanation, but never the
/// key. A subclass supplies only its wire format: endpoint, auth headers,
/// request body and response parser.
///
/// Contract: construction throws ProviderError naming the key variable when it
/// is set in the spec but missing or empty in the environment. complete() is
/// thread-safe and throws ProviderError on any failure, with every occurrence
/// of the key's value replaced by "<redacted>".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/http_client.hpp"
#include "llm/provider.hpp"
#include "llm/spec.hpp"

namespace kernelopt::llm {

class HttpProvider : public Provider {
 public:
  ChatResponse complete(const ChatRequest& request) final;
  std::string name() const final { return spec_.name(); }
  /// Connects to the endpoint's host once (no request, no tokens); the key was checked at construction.
  std::string unreachable() const final;
  /// Seconds slept before each retry of the request that finished last.
  std::vector<double> last_retry_delays() const { return http_.last_retry_delays(); }
  const ProviderSpec& spec() const { return spec_; }

 protected:
  explicit HttpProvider(const ProviderSpec& spec);

  /// The URL requests are POSTed to.
  virtual std::string endpoint() const = 0;
  /// Headers carrying key ("" when the spec has no key variable) and any API version.
  virtual HttpHeaders auth_headers(const std::string& key) const = 0;
  /// The JSON body for request, asking for model.
  virtual nlohmann::json request_body(const ChatRequest& request, const std::string& model) const = 0;
  /// The answer in a 2xx body: text, tokens, model. Throws ProviderError or
  /// nlohmann::json::exception when the body is not what the API documents.
  virtual ChatResponse parse_response(std::string_view body) const = 0;

 private:
  const ProviderSpec spec_;
  std::string key_;  // the API key's value: never logged, never in a message
  HttpClient http_;
};

/// The server's explanation in an error body: error.message when the body is
/// the usual {"error": {"message": ...}} (OpenAI and Anthropic alike), else
/// the body's start, on one line, at most 300 characters.
std::string api_error_detail(std::string_view body);

}  // namespace kernelopt::llm
