// Canonical request JSON (nlohmann's default object is a sorted map) and redaction.
#include "llm/chat.hpp"

#include "util/hash.hpp"

namespace kernelopt::llm {

nlohmann::json request_json(const ChatRequest& request) {
  nlohmann::json messages = nlohmann::json::array();
  for (const Message& m : request.messages)
    messages.push_back({{"role", m.role}, {"content", m.content}});
  return {{"model", request.model},
          {"system", request.system},
          {"messages", std::move(messages)},
          {"temperature", request.temperature},
          {"max_tokens", request.max_tokens}};
}

std::string canonical_request(const ChatRequest& request) {
  // Invalid UTF-8 becomes U+FFFD instead of throwing: a prompt is never lost to its bytes.
  return request_json(request).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string request_hash(const ChatRequest& request) {
  return util::sha256_hex(canonical_request(request));
}

std::string redact(std::string text, std::string_view secret) {
  if (secret.empty()) return text;
  static constexpr std::string_view kMark = "<redacted>";
  for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + kMark.size()))
    text.replace(at, secret.size(), kMark);
  return text;
}

}  // namespace kernelopt::llm
