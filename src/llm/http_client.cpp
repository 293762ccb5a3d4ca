// libcurl easy handles, one per attempt (LLM calls take seconds; connection
// reuse would save little and cost shared state between threads).
#include "llm/http_client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "llm/chat.hpp"

namespace kernelopt::llm {
namespace {

// Longer timeouts and delays (about 115 days) are treated as this, so conversions cannot overflow.
constexpr double kMaxSeconds = 1e7;

// curl_global_init is not thread-safe; run it once, before any handle exists.
void curl_init_once() {
  static const bool ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  if (!ok) throw ProviderError("libcurl: curl_global_init failed");
}

struct EasyDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

// The body as curl decodes it (CURLOPT_ACCEPT_ENCODING), kept up to `cap` bytes: a larger one aborts the
// transfer (a short count is CURLE_WRITE_ERROR), so neither a huge answer nor a compressed bomb fills memory.
struct BodySink {
  std::string* body = nullptr;
  size_t cap = 0;
  bool over = false;
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto& sink = *static_cast<BodySink*>(user);
  const size_t n = size * count;
  if (sink.body->size() + n > sink.cap) {
    sink.over = true;
    return 0;
  }
  sink.body->append(data, n);
  return n;
}

// libcurl speaks many protocols; an API is reached over HTTP(S) only, also after a redirect.
constexpr const char* kProtocols = "http,https";

std::string size_text(size_t bytes) {
  return bytes % (size_t{1} << 20) == 0 ? fmt::format("{} MiB", bytes >> 20) : fmt::format("{} bytes", bytes);
}

// Called once per header line, status lines included; a new status line (after
// a 100 Continue or a redirect) starts a fresh header set.
size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto& headers = *static_cast<std::map<std::string, std::string>*>(user);
  std::string_view line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {
    headers.clear();
    return size * count;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * count;
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
    value.remove_suffix(1);
  headers[name] = std::string(value);
  return size * count;
}

bool is_retryable_curl_error(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

struct Attempt {
  CURLcode code = CURLE_OK;
  std::string error;  // curl's message when code != CURLE_OK
  bool too_large = false;  // the body passed the cap (code is then CURLE_WRITE_ERROR)
  HttpResponse response;
};

Attempt attempt_once(const std::string& url, curl_slist* headers, const std::string& body, double timeout_s,
                     size_t max_body_bytes) {
  Attempt a;
  BodySink sink{&a.response.body, max_body_bytes};
  std::unique_ptr<CURL, EasyDeleter> h(curl_easy_init());
  if (!h) throw ProviderError("libcurl: curl_easy_init failed");
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(h.get(), CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(h.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(h.get(), CURLOPT_PROTOCOLS_STR, kProtocols);
  curl_easy_setopt(h.get(), CURLOPT_REDIR_PROTOCOLS_STR, kProtocols);
  curl_easy_setopt(h.get(), CURLOPT_POST, 1L);
  curl_easy_setopt(h.get(), CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(h.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(h.get(), CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h.get(), CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(h.get(), CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h.get(), CURLOPT_HEADERDATA, &a.response.headers);
  curl_easy_setopt(h.get(), CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM-based DNS timeouts
  curl_easy_setopt(h.get(), CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode
  if (timeout_s > 0) {
    const long ms = static_cast<long>(std::ceil(std::min(timeout_s, kMaxSeconds) * 1000));
    curl_easy_setopt(h.get(), CURLOPT_TIMEOUT_MS, ms);
    curl_easy_setopt(h.get(), CURLOPT_CONNECTTIMEOUT_MS, std::min(ms, 30000L));
  }
  a.code = curl_easy_perform(h.get());
  a.too_large = sink.over;
  if (a.code != CURLE_OK) {
    a.error = error[0] ? error : curl_easy_strerror(a.code);
    return a;
  }
  curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &a.response.status);
  return a;
}

}  // namespace

HttpClient::HttpClient(RetryPolicy retry, int max_concurrency, size_t max_body_bytes)
    : retry_(retry), limit_(max_concurrency), max_body_bytes_(max_body_bytes) {
  curl_init_once();
}

std::string HttpClient::probe(const std::string& url, double timeout_s) const {
  std::unique_ptr<CURL, EasyDeleter> h(curl_easy_init());
  if (!h) return "libcurl: curl_easy_init failed";
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(h.get(), CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(h.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(h.get(), CURLOPT_PROTOCOLS_STR, kProtocols);
  curl_easy_setopt(h.get(), CURLOPT_CONNECT_ONLY, 1L);  // the connection (and TLS) only: no request, no tokens
  curl_easy_setopt(h.get(), CURLOPT_NOSIGNAL, 1L);
  const long ms = static_cast<long>(std::ceil(std::min(timeout_s > 0 ? timeout_s : kMaxSeconds, kMaxSeconds) * 1000));
  curl_easy_setopt(h.get(), CURLOPT_CONNECTTIMEOUT_MS, ms);
  const CURLcode code = curl_easy_perform(h.get());
  if (code == CURLE_OK) return "";
  return fmt::format("cannot reach {}: {}", url, error[0] ? error : curl_easy_strerror(code));
}

HttpResponse HttpClient::post_json(const std::string& url, const HttpHeaders& headers, const std::string& body,
                                   double timeout_s) {
  std::unique_ptr<curl_slist, SlistDeleter> list;
  auto append = [&](const std::string& line) {
    curl_slist* grown = curl_slist_append(list.get(), line.c_str());
    if (!grown) throw ProviderError("libcurl: out of memory building headers");
    (void)list.release();
    list.reset(grown);
  };
  append("Content-Type: application/json");
  append("Expect:");  // no 100-continue round trip before large prompts
  for (const auto& [name, value] : headers) append(name + ": " + value);

  std::vector<double> delays;
  for (int attempt = 1;; ++attempt) {
    Attempt a;
    {
      ConcurrencyLimit::Slot slot = limit_.acquire();
      a = attempt_once(url, list.get(), body, timeout_s, max_body_bytes_);
    }
    if (a.too_large) {  // the same answer again would be as large: not retried
      throw ProviderError(fmt::format("POST {}: response body over {} (max_response_mb)", url,
                                      size_text(max_body_bytes_)));
    }
    const bool connection_failed = a.code != CURLE_OK;
    const bool retryable = connection_failed ? is_retryable_curl_error(a.code) : is_retryable_status(a.response.status);
    if (!retryable || attempt > retry_.max_retries) {
      {
        std::lock_guard lock(stats_mutex_);
        last_retry_delays_ = delays;
      }
      if (connection_failed)
        throw ProviderError(fmt::format("POST {} failed after {} attempt{}: {}", url, attempt,
                                        attempt == 1 ? "" : "s", a.error));
      a.response.attempts = attempt;
      a.response.retry_delays_s = std::move(delays);
      return std::move(a.response);
    }
    std::optional<double> retry_after;
    if (auto it = a.response.headers.find("retry-after"); !connection_failed && it != a.response.headers.end())
      retry_after = parse_retry_after(it->second);
    const double delay = retry_delay_s(retry_, attempt, retry_after);
    spdlog::warn("POST {}: {}; retry {}/{} in {:.2f} s", url,
                 connection_failed ? a.error : fmt::format("HTTP {}", a.response.status), attempt,
                 retry_.max_retries, delay);
    delays.push_back(delay);
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(delay, kMaxSeconds)));
  }
}

std::vector<double> HttpClient::last_retry_delays() const {
  std::lock_guard lock(stats_mutex_);
  return last_retry_delays_;
}

}  // namespace kernelopt::llm
