/// \file
/// OpenAI-compatible chat completions: POST {base_url}/chat/completions with
/// "Authorization: Bearer KEY". The same wire format is served by OpenAI and
/// by local servers (vLLM, SGLang, llama.cpp, Ollama at base_url such as
/// http://127.0.0.1:8000/v1), so one provider reaches all of them.
///
/// Contract: the wire functions are pure; openai_parse_response throws
/// ProviderError (or nlohmann::json::exception) when the body lacks
/// choices[0].message.content as text. Missing usage reads as 0 tokens.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "llm/http_provider.hpp"

namespace kernelopt::llm {

/// {"model","messages","temperature","max_tokens"}; a non-empty system prompt
/// becomes the first message, with role "system".
nlohmann::json openai_request_body(const ChatRequest& request, const std::string& model);

/// text = choices[0].message.content (a string, or text parts joined);
/// input/output tokens = usage.prompt_tokens / usage.completion_tokens; model.
ChatResponse openai_parse_response(std::string_view body);

class OpenAIProvider final : public HttpProvider {
 public:
  /// spec.scheme "openai"; see HttpProvider for the key check.
  explicit OpenAIProvider(const ProviderSpec& spec) : HttpProvider(spec) {}

 protected:
  std::string endpoint() const override { return spec().base_url + "/chat/completions"; }
  HttpHeaders auth_headers(const std::string& key) const override;
  nlohmann::json request_body(const ChatRequest& request, const std::string& model) const override {
    return openai_request_body(request, model);
  }
  ChatResponse parse_response(std::string_view body) const override { return openai_parse_response(body); }
};

}  // namespace kernelopt::llm
