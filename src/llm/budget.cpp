// Token, dollar and wall-time accounting behind one mutex.
#include "llm/budget.hpp"

#include <fmt/format.h>

namespace kernelopt::llm {

double Pricing::cost_usd(long long input_tokens, long long output_tokens) const {
  return (static_cast<double>(input_tokens) * usd_per_mtok_input +
          static_cast<double>(output_tokens) * usd_per_mtok_output) /
         1e6;
}

BudgetTracker::BudgetTracker(Budget budget, Clock::time_point start) : budget_(budget), start_(start) {}

void BudgetTracker::add(const ChatResponse& response) {
  std::lock_guard lock(mutex_);
  ++requests_;
  if (response.from_cache) return;
  tokens_ += static_cast<long long>(response.input_tokens) + response.output_tokens;
  usd_ += response.cost_usd;
}

std::optional<std::string> BudgetTracker::exceeded() const {
  std::lock_guard lock(mutex_);
  if (budget_.max_tokens > 0 && tokens_ >= budget_.max_tokens)
    return fmt::format("token budget exhausted: {} of {} tokens used", tokens_, budget_.max_tokens);
  if (budget_.max_usd > 0 && usd_ >= budget_.max_usd)
    return fmt::format("cost budget exhausted: ${:.4f} of ${:.4f} spent", usd_, budget_.max_usd);
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  if (budget_.max_seconds > 0 && elapsed >= budget_.max_seconds)
    return fmt::format("time budget exhausted: {:.1f} of {:.1f} s elapsed", elapsed, budget_.max_seconds);
  return std::nullopt;
}

long long BudgetTracker::tokens_used() const {
  std::lock_guard lock(mutex_);
  return tokens_;
}

double BudgetTracker::usd_spent() const {
  std::lock_guard lock(mutex_);
  return usd_;
}

int BudgetTracker::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

double BudgetTracker::elapsed_s() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

}  // namespace kernelopt::llm
