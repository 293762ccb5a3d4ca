// Backoff arithmetic and Retry-After parsing.
#include "llm/retry.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>

namespace kernelopt::llm {

bool is_retryable_status(long status) { return status == 408 || status == 429 || (status >= 500 && status <= 599); }

std::optional<double> parse_retry_after(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r'))
    value.remove_suffix(1);
  double seconds = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size()) return std::nullopt;
  if (!std::isfinite(seconds) || seconds < 0) return std::nullopt;
  return seconds;
}

double backoff_delay_s(const RetryPolicy& policy, int retry) {
  const int doublings = std::clamp(retry - 1, 0, 60);
  const double full = std::min(policy.max_delay_s, policy.base_delay_s * std::ldexp(1.0, doublings));
  if (full <= 0) return 0;
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(full / 2, full)(rng);
}

double retry_delay_s(const RetryPolicy& policy, int retry, std::optional<double> retry_after_s) {
  if (retry_after_s) return std::min(*retry_after_s, policy.retry_after_cap_s);
  return backoff_delay_s(policy, retry);
}

}  // namespace kernelopt::llm
