/// \file
/// The LLM layer's one HTTP transport (libcurl): POST a JSON body, get the
/// status, body and headers back, retrying transient failures (408, 429, 5xx,
/// connection errors) with backoff or the server's Retry-After, and never
/// sending more than max_concurrency requests at once. Only http:// and
/// https:// URLs are followed (redirects included), and a response body is
/// read up to a cap, counted after decoding.
///
/// Contract: post_json is thread-safe. It returns the last response it got,
/// whatever its status (callers judge 4xx and exhausted 5xx); it throws
/// ProviderError only when no HTTP response arrived at all (after retries).
/// Header values are never logged or put into messages (they carry API keys);
/// errors name the URL, which therefore must not hold secrets.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "llm/concurrency.hpp"
#include "llm/retry.hpp"

namespace kernelopt::llm {

/// Request headers as (name, value) pairs, sent in order.
using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpResponse {
  long status = 0;                             ///< HTTP status of the last attempt
  std::string body;                            ///< its body
  std::map<std::string, std::string> headers;  ///< its headers, names lowercased (last value wins)
  int attempts = 0;                            ///< requests sent, retries included
  std::vector<double> retry_delays_s;          ///< seconds slept before each retry, in order
};

class HttpClient {
 public:
  /// max_concurrency >= 1: requests in flight at once over all threads. max_body_bytes: the largest
  /// response body read, counted decoded (after gzip and the like); a larger one is a ProviderError,
  /// not retried.
  HttpClient(RetryPolicy retry, int max_concurrency, size_t max_body_bytes = size_t{8} << 20);

  /// Connects to url's host (TCP, and TLS for https) without sending a request, once, no retries, within
  /// timeout_s: "" when it connected, else one line naming the URL and what failed.
  std::string probe(const std::string& url, double timeout_s) const;

  /// POSTs body (Content-Type: application/json) to url with headers.
  /// timeout_s bounds each attempt (connection included; <= 0 = no limit);
  /// retry sleeps come on top and hold no concurrency slot.
  HttpResponse post_json(const std::string& url, const HttpHeaders& headers, const std::string& body,
                         double timeout_s);

  /// retry_delays_s of the post_json call that finished last (any thread).
  std::vector<double> last_retry_delays() const;

  const RetryPolicy& retry_policy() const { return retry_; }

 private:
  const RetryPolicy retry_;
  ConcurrencyLimit limit_;
  const size_t max_body_bytes_;
  mutable std::mutex stats_mutex_;
  std::vector<double> last_retry_delays_;
};

}  // namespace kernelopt::llm
