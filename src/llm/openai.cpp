// OpenAI chat completions wire format.
#include "llm/openai.hpp"

#include <fmt/format.h>

#include "llm/wire_util.hpp"

namespace kernelopt::llm {

nlohmann::json openai_request_body(const ChatRequest& request, const std::string& model) {
  nlohmann::json messages = nlohmann::json::array();
  if (!request.system.empty()) messages.push_back({{"role", "system"}, {"content", request.system}});
  for (const Message& m : request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  return {{"model", model},
          {"messages", std::move(messages)},
          {"temperature", request.temperature},
          {"max_tokens", request.max_tokens}};
}

ChatResponse openai_parse_response(std::string_view body) {
  const nlohmann::json j = nlohmann::json::parse(body);
  if (!j.is_object()) throw ProviderError("not a JSON object");
  auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty())
    throw ProviderError("no choices in the answer");
  const nlohmann::json& choice = (*choices)[0];
  if (!choice.is_object() || !choice.contains("message") || !choice["message"].is_object())
    throw ProviderError("choices[0] has no message");
  const nlohmann::json& message = choice["message"];
  ChatResponse out;
  auto content = message.find("content");
  if (content != message.end() && content->is_string()) {
    out.text = content->get<std::string>();
  } else if (content == message.end() || !detail::join_text_parts(*content, out.text)) {
    std::string finish = choice.contains("finish_reason") ? choice["finish_reason"].dump() : "absent";
    throw ProviderError(fmt::format("choices[0].message.content holds no text (finish_reason {})", finish));
  }
  if (auto usage = j.find("usage"); usage != j.end()) {
    out.input_tokens = detail::token_count(*usage, "prompt_tokens");
    out.output_tokens = detail::token_count(*usage, "completion_tokens");
  }
  if (auto model = j.find("model"); model != j.end() && model->is_string()) out.model = model->get<std::string>();
  return out;
}

HttpHeaders OpenAIProvider::auth_headers(const std::string& key) const {
  if (key.empty()) return {};
  return {{"Authorization", "Bearer " + key}};
}

}  // namespace kernelopt::llm
