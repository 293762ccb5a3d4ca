// Tests for llm/http_client.hpp and the HTTP providers' failure paths, over
// loopback: retries on 429/5xx with Retry-After, exhausted retries, connection
// errors, secrets kept out of errors, the concurrency limit.
#include "llm/http_client.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include "llm/openai.hpp"
#include "llm/spec.hpp"
#include "test_llm_server.hpp"

using namespace kernelopt::llm;
using kernelopt::llm::testing::LoopbackServer;

namespace {

constexpr const char* kKey = "sk-test-SECRET-0123456789";
constexpr const char* kOk = R"({"choices":[{"message":{"role":"assistant","content":"fine"}}],)"
                            R"("usage":{"prompt_tokens":3,"completion_tokens":1}})";

RetryPolicy fast_retries(int max_retries) {
  RetryPolicy p;
  p.max_retries = max_retries;
  p.base_delay_s = 0.01;  // tests wait ~10 ms per retry, not seconds
  return p;
}

std::unique_ptr<Provider> openai_at(const LoopbackServer& server, std::vector<std::string> extra = {}) {
  ::setenv("KERNELOPT_TEST_HTTP_KEY", kKey, 1);
  std::vector<std::string> options = {"base_url=" + server.url() + "/v1", "api_key_env=KERNELOPT_TEST_HTTP_KEY",
                                      "retry_base_delay_s=0.01", "timeout_s=10"};
  options.insert(options.end(), extra.begin(), extra.end());
  return make_provider(parse_spec("openai:test-model", options));
}

ChatRequest hello() {
  ChatRequest r;
  r.messages = {{"user", "hello"}};
  return r;
}

// A port nothing listens on: bound by a server that is then destroyed.
std::string closed_url() {
  std::string url;
  {
    LoopbackServer s([](httplib::Server&) {});
    url = s.url();
  }
  return url;
}

}  // namespace

TEST(LlmHttp, PostsJsonAndReturnsStatusBodyHeaders) {
  std::string seen_type, seen_body, seen_custom;
  LoopbackServer server([&](httplib::Server& s) {
    s.Post("/echo", [&](const httplib::Request& req, httplib::Response& res) {
      seen_type = req.get_header_value("Content-Type");
      seen_custom = req.get_header_value("X-Custom");
      seen_body = req.body;
      res.set_header("X-Answer", "42");
      res.set_content(R"({"ok":true})", "application/json");
    });
  });
  ASSERT_TRUE(server.ok());
  HttpClient client(fast_retries(0), 1);
  HttpResponse r = client.post_json(server.url() + "/echo", {{"X-Custom", "yes"}}, R"({"a":1})", 10);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"ok":true})");
  EXPECT_EQ(r.headers["x-answer"], "42");
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(seen_type, "application/json");
  EXPECT_EQ(seen_custom, "yes");
  EXPECT_EQ(seen_body, R"({"a":1})");
}

TEST(LlmHttp, RetryAfterIsHonoured) {
  std::atomic<int> requests{0};
  LoopbackServer server([&](httplib::Server& s) {
    s.Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
      if (requests.fetch_add(1) == 0) {
        res.status = 429;
        res.set_header("Retry-After", "1");
        res.set_content(R"({"error":{"message":"slow down"}})", "application/json");
        return;
      }
      res.set_content(kOk, "application/json");
    });
  });
  ASSERT_TRUE(server.ok());
  auto provider = openai_at(server);
  ChatResponse r = provider->complete(hello());
  EXPECT_EQ(r.text, "fine");
  EXPECT_EQ(requests.load(), 2);
  auto delays = dynamic_cast<HttpProvider&>(*provider).last_retry_delays();
  ASSERT_EQ(delays.size(), 1u);
  EXPECT_GE(delays[0], 1.0);  // the server's Retry-After, not the 10 ms backoff
}

TEST(LlmHttp, ServerErrorsExhaustRetriesAndKeepTheKeyOut) {
  std::atomic<int> requests{0};
  LoopbackServer server([&](httplib::Server& s) {
    s.Post("/v1/chat/completions", [&](const httplib::Request& req, httplib::Response& res) {
      requests.fetch_add(1);
      res.status = 500;
      // a careless server that echoes the credentials it got
      res.set_content(R"({"error":{"message":"internal error for )" + req.get_header_value("Authorization") + "\"}}",
                      "application/json");
    });
  });
  ASSERT_TRUE(server.ok());
  auto provider = openai_at(server, {"max_retries=3"});
  try {
    provider->complete(hello());
    FAIL() << "no error";
  } catch (const ProviderError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("HTTP 500"), std::string::npos) << m;
    EXPECT_NE(m.find("after 4 attempts"), std::string::npos) << m;
    EXPECT_NE(m.find("internal error for Bearer <redacted>"), std::string::npos) << m;
    EXPECT_EQ(m.find(kKey), std::string::npos) << m;
  }
  EXPECT_EQ(requests.load(), 4);  // max_retries + 1
  EXPECT_EQ(dynamic_cast<HttpProvider&>(*provider).last_retry_delays().size(), 3u);
}

TEST(LlmHttp, ClientErrorsAreNotRetried) {
  std::atomic<int> requests{0};
  LoopbackServer server([&](httplib::Server& s) {
    s.Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
      requests.fetch_add(1);
      res.status = 401;
      res.set_content(R"({"error":{"message":"Incorrect API key provided"}})", "application/json");
    });
  });
  ASSERT_TRUE(server.ok());
  auto provider = openai_at(server);
  try {
    provider->complete(hello());
    FAIL() << "no error";
  } catch (const ProviderError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("openai:test-model: HTTP 401"), std::string::npos) << m;
    EXPECT_NE(m.find("Incorrect API key provided"), std::string::npos) << m;
  }
  EXPECT_EQ(requests.load(), 1);
}

TEST(LlmHttp, ConnectionErrorsRetryThenFail) {
  const std::string url = closed_url();
  HttpClient client(fast_retries(2), 1);
  try {
    client.post_json(url + "/x", {{"Authorization", std::string("Bearer ") + kKey}}, "{}", 5);
    FAIL() << "no error";
  } catch (const ProviderError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("after 3 attempts"), std::string::npos) << m;
    EXPECT_EQ(m.find(kKey), std::string::npos) << m;
  }
  EXPECT_EQ(client.last_retry_delays().size(), 2u);
}

TEST(LlmHttp, TimeoutIsPerAttempt) {
  LoopbackServer server([&](httplib::Server& s) {
    s.Post("/slow", [&](const httplib::Request&, httplib::Response& res) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1000));
      res.set_content("{}", "application/json");
    });
  });
  ASSERT_TRUE(server.ok());
  HttpClient client(fast_retries(0), 1);
  try {
    client.post_json(server.url() + "/slow", {}, "{}", 0.2);
    FAIL() << "no error";
  } catch (const ProviderError& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
}

TEST(LlmHttp, ConcurrencyLimitHolds) {
  std::atomic<int> in_flight{0}, max_seen{0}, requests{0};
  LoopbackServer server([&](httplib::Server& s) {
    s.Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
      const int now = in_flight.fetch_add(1) + 1;
      int seen = max_seen.load();
      while (now > seen && !max_seen.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      in_flight.fetch_sub(1);
      requests.fetch_add(1);
      res.set_content(kOk, "application/json");
    });
  });
  ASSERT_TRUE(server.ok());
  auto provider = openai_at(server, {"max_concurrency=2"});
  std::atomic<int> answered{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      try {
        if (provider->complete(hello()).text == "fine") answered.fetch_add(1);
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(answered.load(), 8);
  EXPECT_EQ(requests.load(), 8);
  EXPECT_LE(max_seen.load(), 2);
  EXPECT_GE(max_seen.load(), 1);
}

namespace {

// A valid chat completion whose answer is `chars` characters long.
std::string long_answer(size_t chars) {
  return R"({"choices":[{"message":{"role":"assistant","content":")" + std::string(chars, 'x') +
         R"("}}],"usage":{"prompt_tokens":3,"completion_tokens":1}})";
}

// `bytes` zero bytes, gzip-compressed (a few KB per MB): a body that inflates far beyond its size on the wire.
std::string gzip_of_zeros(size_t bytes) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) return "";
  const std::string zeros(1 << 20, '\0');
  std::string out;
  char buf[1 << 16];
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(zeros.size(), bytes - done);
    done += n;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
    z.avail_in = static_cast<uInt>(n);
    const int flush = done == bytes ? Z_FINISH : Z_NO_FLUSH;
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof(buf);
      deflate(&z, flush);
      out.append(buf, sizeof(buf) - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  return out;
}

// A server answering every chat completion with `body` (sent as is, with `encoding` as Content-Encoding if set).
std::unique_ptr<LoopbackServer> answering(std::string body, std::string encoding = "") {
  auto shared = std::make_shared<const std::string>(std::move(body));
  return std::make_unique<LoopbackServer>([shared, encoding](httplib::Server& s) {
    s.Post("/v1/chat/completions", [shared, encoding](const httplib::Request&, httplib::Response& res) {
      if (!encoding.empty()) res.set_header("Content-Encoding", encoding);
      // octet-stream: cpp-httplib compresses only text-like types, so the body goes out as given
      res.set_content(*shared, "application/octet-stream");
    });
  });
}

std::string error_of(Provider& provider) {
  try {
    provider.complete(hello());
  } catch (const ProviderError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(LlmHttp, AnAnswerOverTheDefault8MiBIsAProviderError) {
  auto server = answering(long_answer(12u << 20));
  ASSERT_TRUE(server->ok());
  auto provider = openai_at(*server);
  const std::string m = error_of(*provider);
  EXPECT_NE(m.find("response body over 8 MiB"), std::string::npos) << m;
  EXPECT_NE(m.find("max_response_mb"), std::string::npos) << m;
}

TEST(LlmHttp, TheCapIsTheMaxResponseMbOption) {
  auto server = answering(long_answer(2u << 20));
  ASSERT_TRUE(server->ok());
  EXPECT_EQ(openai_at(*server)->complete(hello()).text.size(), 2u << 20);  // under the default: answered
  auto capped = openai_at(*server, {"max_response_mb=1"});
  const std::string m = error_of(*capped);
  EXPECT_NE(m.find("response body over 1 MiB"), std::string::npos) << m;
}

TEST(LlmHttp, TheCapCountsTheDecodedBytesOfACompressedAnswer) {
  const std::string bomb = gzip_of_zeros(size_t{64} << 20);  // 64 MiB once inflated
  ASSERT_GT(bomb.size(), 0u);
  ASSERT_LT(bomb.size(), 8u << 20);  // under the cap on the wire
  auto server = answering(bomb, "gzip");
  ASSERT_TRUE(server->ok());
  auto provider = openai_at(*server);
  const std::string m = error_of(*provider);
  EXPECT_NE(m.find("response body over 8 MiB"), std::string::npos) << m;
}

TEST(LlmHttp, OnlyHttpAndHttpsAreSpoken) {
  char path[] = "/tmp/kernelopt-http-file-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "secret file\n", 12), 12);
  ::close(fd);
  HttpClient client(fast_retries(0), 1);
  std::string m = "no error";
  try {
    HttpResponse r = client.post_json(std::string("file://") + path, {}, "{}", 5);
    m = "answered with: " + r.body;
  } catch (const ProviderError& e) {
    m = e.what();
  }
  ::unlink(path);
  EXPECT_EQ(m.find("secret file"), std::string::npos) << m;
  EXPECT_NE(m.find("not supported or disabled"), std::string::npos) << m;
}

TEST(LlmHttp, ProbeReachesAServerAndNamesOneThatIsNotThere) {
  LoopbackServer server([](httplib::Server&) {});
  ASSERT_TRUE(server.ok());
  HttpClient client(fast_retries(3), 1);
  EXPECT_EQ(client.probe(server.url() + "/v1", 5), "");
  const std::string closed = closed_url();
  const std::string why = client.probe(closed + "/v1", 5);
  EXPECT_NE(why.find("127.0.0.1"), std::string::npos) << why;
  EXPECT_NE(why, "");
  EXPECT_EQ(client.last_retry_delays().size(), 0u);  // one try, no retries
}
