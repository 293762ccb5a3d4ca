/// \file
/// The one interface agents call to reach a language model, whatever is behind
/// it: an HTTP API (OpenAI-compatible or Anthropic), a local command, or a
/// directory that a person or another tool answers (relay).
///
/// Contract: complete() is thread-safe on every implementation (several agents
/// may share one provider; each provider bounds its own concurrency). It returns
/// a response or throws ProviderError (or PendingAnswer, relay only); it never
/// returns an empty-handed response silently.
#pragma once

#include <string>

#include "llm/chat.hpp"

namespace kernelopt::llm {

class Provider {
 public:
  virtual ~Provider() = default;
  /// The model's answer to request. Throws ProviderError; relay may throw PendingAnswer.
  virtual ChatResponse complete(const ChatRequest& request) = 0;
  /// "scheme:target" as in the spec it was made from, e.g. "openai:gpt-4.1"
  /// (a cache key part: stable, and free of secrets).
  virtual std::string name() const = 0;
  /// Why the provider cannot be reached now, in one line ("" = it can, or there is nothing to reach: a
  /// command, a relay directory). Asked once before a run's capture; spends no tokens.
  virtual std::string unreachable() const { return ""; }
};

}  // namespace kernelopt::llm
