/// \file
/// The words every LLM provider speaks: a chat request (system prompt plus
/// alternating user/assistant messages), its answer with token usage and cost,
/// and the two ways a completion can fail. Agents build ChatRequests and read
/// ChatResponses; they never see a wire format.
///
/// Contract: request_json() is the canonical form of a request: keys sorted,
/// no whitespace, so equal requests give byte-equal JSON and equal
/// request_hash() values across runs and machines (the relay's file names and
/// the LLM cache key rest on this). ChatRequest::tag is deliberately not part
/// of that form: it names the request for people and the relay's scripted
/// answers, and two requests differing only in their tag are the same request.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernelopt::llm {

struct Message {
  std::string role;     ///< "user" or "assistant" ("system" is folded into ChatRequest::system)
  std::string content;  ///< plain text
};

struct ChatRequest {
  std::string model;               ///< "" = the provider's configured model
  std::vector<Message> messages;   ///< in order; the last one is usually "user"
  double temperature = 0;          ///< sampling temperature (0 = as deterministic as the model allows)
  int max_tokens = 4096;           ///< upper bound on output tokens
  std::string system;              ///< system prompt ("" = none)
  /// Who asks and why, e.g. "coder.<kernel>.0" ("" = none). Not sent to HTTP
  /// providers, not part of request_json()/request_hash(); the relay also
  /// accepts an answer file named after it (see relay_provider.hpp).
  std::string tag;
};

struct ChatResponse {
  std::string text;          ///< the answer's text (all text blocks, concatenated)
  int input_tokens = 0;      ///< tokens billed for the prompt (0 = not reported)
  int output_tokens = 0;     ///< tokens billed for the answer (0 = not reported)
  std::string model;         ///< the model that answered, as the provider names it
  double cost_usd = 0;       ///< tokens × the spec's prices, in US dollars
  bool from_cache = false;   ///< true when replayed from a cache, not paid for now
  std::string provider;      ///< Provider::name() of the provider that answered
};

/// A completion failed for good (after any retries): HTTP error, malformed
/// answer, command failure or timeout. The message is one line, names the
/// provider and never contains an API key.
class ProviderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The relay provider has written the request but no answer has arrived yet.
/// Not a failure: the run may stop here and be resumed once answers exist.
/// Deliberately not a ProviderError; catch it first.
class PendingAnswer : public std::runtime_error {
 public:
  PendingAnswer(const std::string& message, std::string request_path, std::string hash)
      : std::runtime_error(message), request_path(std::move(request_path)), hash(std::move(hash)) {}
  std::string request_path;  ///< where the request waits for its answer
  std::string hash;          ///< request_hash() of the request
};

/// {"max_tokens","messages":[{"content","role"}],"model","system","temperature"} (no tag).
nlohmann::json request_json(const ChatRequest& request);
/// request_json(request) dumped compact, keys sorted, invalid UTF-8 replaced by U+FFFD.
std::string canonical_request(const ChatRequest& request);
/// SHA-256 (64 lowercase hex digits) of canonical_request(request).
std::string request_hash(const ChatRequest& request);

/// text with every occurrence of secret replaced by "<redacted>" (secret "" = unchanged).
std::string redact(std::string text, std::string_view secret);

}  // namespace kernelopt::llm
