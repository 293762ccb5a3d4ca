/// \file
/// What a run may spend on language models: tokens, dollars and wall time.
/// Prices come from the provider spec (USD per million tokens), so cost
/// accounting works for any provider, including local servers priced at 0.
///
/// Contract: BudgetTracker is thread-safe. It only counts and reports; the
/// caller decides what to do once exceeded() returns a reason (typically: stop
/// asking the LLM and fall back to the offline agents).
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "llm/chat.hpp"

namespace kernelopt::llm {

struct Pricing {
  double usd_per_mtok_input = 0;   ///< USD per 1,000,000 prompt tokens
  double usd_per_mtok_output = 0;  ///< USD per 1,000,000 answer tokens

  /// input_tokens × input price + output_tokens × output price, in USD.
  double cost_usd(long long input_tokens, long long output_tokens) const;
};

struct Budget {
  long long max_tokens = 0;  ///< input + output tokens over all requests (0 = unlimited)
  double max_usd = 0;        ///< US dollars (0 = unlimited)
  double max_seconds = 0;    ///< wall time since the tracker started, in seconds (0 = unlimited)
};

class BudgetTracker {
 public:
  using Clock = std::chrono::steady_clock;

  /// Starts the wall clock at `start` (default: now).
  explicit BudgetTracker(Budget budget, Clock::time_point start = Clock::now());

  /// Counts one answer. Responses replayed from a cache (from_cache) count as
  /// a request but spend no tokens or dollars: they were paid for once.
  void add(const ChatResponse& response);

  /// The first limit reached, as one line (e.g. "token budget exhausted: 10500
  /// of 10000 tokens used"); nullopt while every limit holds. A limit counts as
  /// reached once used >= max.
  std::optional<std::string> exceeded() const;

  long long tokens_used() const;  ///< input + output tokens counted so far
  double usd_spent() const;       ///< US dollars counted so far
  int requests() const;           ///< responses added, cached ones included
  double elapsed_s() const;       ///< seconds since start
  const Budget& budget() const { return budget_; }

 private:
  const Budget budget_;
  const Clock::time_point start_;
  mutable std::mutex mutex_;
  long long tokens_ = 0;
  double usd_ = 0;
  int requests_ = 0;
};

}  // namespace kernelopt::llm
