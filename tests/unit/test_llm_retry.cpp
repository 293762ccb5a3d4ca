// Tests for llm/retry.hpp: which failures retry, Retry-After parsing, backoff bounds.
#include "llm/retry.hpp"

#include <gtest/gtest.h>

using namespace kernelopt::llm;

TEST(LlmRetry, RetryableStatuses) {
  for (long s : {408L, 429L, 500L, 502L, 503L, 504L, 529L}) EXPECT_TRUE(is_retryable_status(s)) << s;
  for (long s : {200L, 400L, 401L, 403L, 404L, 422L}) EXPECT_FALSE(is_retryable_status(s)) << s;
}

TEST(LlmRetry, ParseRetryAfterSeconds) {
  EXPECT_EQ(parse_retry_after("1"), 1.0);
  EXPECT_EQ(parse_retry_after(" 2.5\r"), 2.5);
  EXPECT_EQ(parse_retry_after("0"), 0.0);
  EXPECT_FALSE(parse_retry_after(""));
  EXPECT_FALSE(parse_retry_after("-1"));
  EXPECT_FALSE(parse_retry_after("soon"));
  EXPECT_FALSE(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"));
}

TEST(LlmRetry, BackoffDoublesWithJitterAndCap) {
  RetryPolicy p;
  p.base_delay_s = 0.01;
  p.max_delay_s = 0.05;
  for (int i = 0; i < 100; ++i) {
    double d1 = backoff_delay_s(p, 1), d2 = backoff_delay_s(p, 2), d5 = backoff_delay_s(p, 5);
    EXPECT_GE(d1, 0.005);
    EXPECT_LE(d1, 0.01);
    EXPECT_GE(d2, 0.01);
    EXPECT_LE(d2, 0.02);
    EXPECT_GE(d5, 0.025);  // 0.16 capped at 0.05, jittered in [0.025, 0.05]
    EXPECT_LE(d5, 0.05);
  }
  EXPECT_LE(backoff_delay_s(p, 1000), 0.05);
}

TEST(LlmRetry, RetryAfterWinsAndIsCapped) {
  RetryPolicy p;
  p.base_delay_s = 0.01;
  p.retry_after_cap_s = 60;
  EXPECT_EQ(retry_delay_s(p, 1, 7.0), 7.0);
  EXPECT_EQ(retry_delay_s(p, 1, 600.0), 60.0);
  EXPECT_LE(retry_delay_s(p, 1, std::nullopt), 0.01);
}
