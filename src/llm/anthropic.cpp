// Anthropic Messages wire format.
#include "llm/anthropic.hpp"

#include <fmt/format.h>

#include "llm/wire_util.hpp"

namespace kernelopt::llm {

nlohmann::json anthropic_request_body(const ChatRequest& request, const std::string& model) {
  std::string system = request.system;
  nlohmann::json messages = nlohmann::json::array();
  for (const Message& m : request.messages) {
    if (m.role == "system") {
      system += (system.empty() ? "" : "\n\n") + m.content;
      continue;
    }
    messages.push_back({{"role", m.role}, {"content", m.content}});
  }
  nlohmann::json body = {{"model", model},
                         {"max_tokens", request.max_tokens},
                         {"messages", std::move(messages)},
                         {"temperature", request.temperature}};
  if (!system.empty()) body["system"] = system;
  return body;
}

ChatResponse anthropic_parse_response(std::string_view body) {
  const nlohmann::json j = nlohmann::json::parse(body);
  if (!j.is_object()) throw ProviderError("not a JSON object");
  ChatResponse out;
  auto content = j.find("content");
  if (content == j.end() || !detail::join_text_parts(*content, out.text)) {
    std::string stop = j.contains("stop_reason") ? j["stop_reason"].dump() : "absent";
    throw ProviderError(fmt::format("no text block in content (stop_reason {})", stop));
  }
  if (auto usage = j.find("usage"); usage != j.end()) {
    out.input_tokens = detail::token_count(*usage, "input_tokens");
    out.output_tokens = detail::token_count(*usage, "output_tokens");
  }
  if (auto model = j.find("model"); model != j.end() && model->is_string()) out.model = model->get<std::string>();
  return out;
}

HttpHeaders AnthropicProvider::auth_headers(const std::string& key) const {
  HttpHeaders headers{{"anthropic-version", kAnthropicVersion}};
  if (!key.empty()) headers.emplace_back("x-api-key", key);
  return headers;
}

}  // namespace kernelopt::llm
