/// \file
/// Which LLM to use, as a user writes it on the command line: "SCHEME:TARGET"
/// plus "key=value" options, parsed into a ProviderSpec and turned into a
/// Provider. One place knows every scheme and its defaults.
///
///   openai:MODEL      OpenAI-compatible chat completions (OpenAI, vLLM, SGLang,
///                     llama.cpp, Ollama: set base_url, e.g. http://127.0.0.1:8000/v1)
///   anthropic:MODEL   Anthropic Messages API
///   exec:COMMAND      runs COMMAND with /bin/sh -c; request JSON on stdin, answer on stdout
///   relay:DIR         writes DIR/requests/<hash>.json, reads DIR/answers/<hash>.txt|.json (or <tag>.txt|.json)
///
/// Options (each scheme accepts only those it uses; others are an error):
///   base_url=URL             openai, anthropic (default: the vendor's API); http:// or https:// only
///   api_key_env=NAME         openai, anthropic: variable holding the key
///                            (default OPENAI_API_KEY / ANTHROPIC_API_KEY; empty = send no key)
///   timeout_s=S              all: per HTTP attempt (default 300), per command run
///                            (default 600), relay wait for an answer (default 0 = don't wait)
///   max_retries=N            openai, anthropic (default 4)
///   retry_base_delay_s=S     openai, anthropic (default 1)
///   retry_after_cap_s=S      openai, anthropic (default 60)
///   max_concurrency=N        openai, anthropic, exec (default 4)
///   max_response_mb=N        openai, anthropic: the largest answer read, decoded (default 8); a larger
///                            one is a provider error (the run goes on offline)
///   price_input_per_mtok=USD, price_output_per_mtok=USD   all (default 0)
///
/// Contract: parse_spec throws std::invalid_argument with a one-line message
/// for an unknown scheme, an empty target, an unknown or inapplicable option,
/// or a bad value. make_provider throws ProviderError when the API key
/// variable is unset; the message names the variable, never a value.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "llm/budget.hpp"
#include "llm/provider.hpp"
#include "llm/retry.hpp"

namespace kernelopt::llm {

/// The largest LLM answer read by default, decoded: far above any chat completion (a long kernel answer is
/// ~100 KB), far below what would hurt the engine's memory.
inline constexpr size_t kDefaultMaxResponseBytes = size_t{8} << 20;

struct ProviderSpec {
  std::string scheme;       ///< "openai", "anthropic", "exec" or "relay"
  std::string target;       ///< the model, the shell command, or the relay directory
  std::string base_url;     ///< API root without a trailing '/' (openai, anthropic)
  std::string api_key_env;  ///< environment variable holding the API key ("" = no key)
  double timeout_s = 0;     ///< s, per HTTP attempt / command run / relay wait (0 = no limit; relay: no wait)
  int max_concurrency = 4;  ///< requests or commands in flight at once (>= 1)
  RetryPolicy retry;        ///< HTTP retries (openai, anthropic)
  size_t max_response_bytes = kDefaultMaxResponseBytes;  ///< HTTP answers: a larger decoded body is an error
  Pricing pricing;          ///< USD per 1M tokens, for ChatResponse::cost_usd

  /// "scheme:target", the Provider::name() of what make_provider builds.
  std::string name() const { return scheme + ":" + target; }
};

/// Parses "SCHEME:TARGET" (the target is everything after the first ':') and
/// applies options ("key=value" each), on top of the scheme's defaults.
ProviderSpec parse_spec(const std::string& spec, const std::vector<std::string>& options = {});

/// The provider spec describes. Reads the API key from the environment now.
std::unique_ptr<Provider> make_provider(const ProviderSpec& spec);

}  // namespace kernelopt::llm
