/// \file
/// When and how long to wait before retrying an HTTP request: exponential
/// backoff with jitter for transient failures (rate limits, overloaded or
/// restarting servers, dropped connections), or the server's own Retry-After.
/// Kept apart from the transport so the policy is testable without a network.
///
/// Contract: pure functions, except that backoff_delay_s draws its jitter from
/// a thread-local random generator.
#pragma once

#include <optional>
#include <string_view>

namespace kernelopt::llm {

struct RetryPolicy {
  int max_retries = 4;            ///< retries after the first attempt (0 = never retry)
  double base_delay_s = 1.0;      ///< backoff before retry 1, doubling per retry, in seconds
  double max_delay_s = 30.0;      ///< cap on one backoff delay, in seconds
  double retry_after_cap_s = 60;  ///< cap on a server's Retry-After, in seconds
};

/// 408 (request timeout), 429 (rate limited) and every 5xx are worth retrying;
/// other statuses will fail the same way again.
bool is_retryable_status(long status);

/// A Retry-After header value in seconds ("1", "2.5"); nullopt for anything
/// else, including HTTP dates and negative numbers (callers then back off).
std::optional<double> parse_retry_after(std::string_view value);

/// Delay before retry number `retry` (1-based): d = min(max_delay_s,
/// base_delay_s × 2^(retry-1)), jittered uniformly in [d/2, d] so clients that
/// failed together do not retry together.
double backoff_delay_s(const RetryPolicy& policy, int retry);

/// The delay to sleep before retry `retry`: the server's Retry-After (capped at
/// retry_after_cap_s) when it sent one, else backoff_delay_s.
double retry_delay_s(const RetryPolicy& policy, int retry, std::optional<double> retry_after_s);

}  // namespace kernelopt::llm
