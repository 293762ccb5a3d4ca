/// \file
/// exec:COMMAND: any program as a language model. Lets a user plug in a local
/// model runner, a script around another API, or a canned answer for tests,
/// without kernelopt knowing how it works.
///
/// Protocol: COMMAND runs under /bin/sh -c in its own process group (killed
/// with the engine); stdin gets canonical_request() (one JSON line: model,
/// system, messages, temperature, max_tokens) and is then closed; everything
/// written to stdout is the answer text (one trailing newline removed); stderr
/// passes through to the engine's stderr. Exit code 0 means success.
///
/// Contract: thread-safe; at most max_concurrency commands run at once. A
/// non-zero exit, a signal, or no exit within timeout_s (the whole group is
/// then killed) throws ProviderError naming the command. Tokens are not
/// reported (0) unless the command says otherwise, which it cannot: cost is 0.
#pragma once

#include <string>

#include "llm/concurrency.hpp"
#include "llm/provider.hpp"
#include "llm/spec.hpp"

namespace kernelopt::llm {

class ExecProvider final : public Provider {
 public:
  /// spec.scheme "exec", spec.target the shell command.
  explicit ExecProvider(const ProviderSpec& spec);
  ChatResponse complete(const ChatRequest& request) override;
  std::string name() const override { return spec_.name(); }

 private:
  const ProviderSpec spec_;
  ConcurrencyLimit limit_;
};

}  // namespace kernelopt::llm
