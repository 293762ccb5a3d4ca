/// \file
/// Anthropic's Messages API: POST {base_url}/v1/messages with headers
/// x-api-key and anthropic-version: 2023-06-01; the system prompt is a
/// top-level field, not a message.
///
/// Contract: the wire functions are pure; anthropic_parse_response throws
/// ProviderError (or nlohmann::json::exception) when the body has no text
/// content block. Missing usage reads as 0 tokens.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "llm/http_provider.hpp"

namespace kernelopt::llm {

/// The API version this wire format was written against (a required header).
inline constexpr const char* kAnthropicVersion = "2023-06-01";

/// {"model","max_tokens","messages","temperature"[,"system"]}. Messages with
/// role "system" are moved into the system field (after request.system,
/// separated by a blank line), since the API rejects them as messages.
nlohmann::json anthropic_request_body(const ChatRequest& request, const std::string& model);

/// text = every content[] block of type "text", joined; input/output tokens =
/// usage.input_tokens / usage.output_tokens; model.
ChatResponse anthropic_parse_response(std::string_view body);

class AnthropicProvider final : public HttpProvider {
 public:
  /// spec.scheme "anthropic"; see HttpProvider for the key check.
  explicit AnthropicProvider(const ProviderSpec& spec) : HttpProvider(spec) {}

 protected:
  std::string endpoint() const override { return spec().base_url + "/v1/messages"; }
  HttpHeaders auth_headers(const std::string& key) const override;
  nlohmann::json request_body(const ChatRequest& request, const std::string& model) const override {
    return anthropic_request_body(request, model);
  }
  ChatResponse parse_response(std::string_view body) const override { return anthropic_parse_response(body); }
};

}  // namespace kernelopt::llm
