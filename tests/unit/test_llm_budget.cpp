// Tests for llm/budget.hpp: prices, and each budget limit's reason.
#include "llm/budget.hpp"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

using namespace kernelopt::llm;

namespace {

ChatResponse answer(int in, int out, double usd, bool cached = false) {
  ChatResponse r;
  r.input_tokens = in;
  r.output_tokens = out;
  r.cost_usd = usd;
  r.from_cache = cached;
  return r;
}

}  // namespace

TEST(LlmBudget, PricingIsPerMillionTokens) {
  Pricing p{3.0, 15.0};
  EXPECT_DOUBLE_EQ(p.cost_usd(1'000'000, 0), 3.0);
  EXPECT_DOUBLE_EQ(p.cost_usd(2000, 1000), 0.006 + 0.015);
  EXPECT_DOUBLE_EQ(Pricing{}.cost_usd(5000, 5000), 0.0);
}

TEST(LlmBudget, UnlimitedNeverExceeded) {
  BudgetTracker t(Budget{});
  t.add(answer(1'000'000, 1'000'000, 1000));
  EXPECT_FALSE(t.exceeded());
  EXPECT_EQ(t.tokens_used(), 2'000'000);
}

TEST(LlmBudget, TokenLimitNamesUsage) {
  BudgetTracker t(Budget{1000, 0, 0});
  t.add(answer(400, 500, 0));
  EXPECT_FALSE(t.exceeded());
  t.add(answer(100, 0, 0));
  auto reason = t.exceeded();
  ASSERT_TRUE(reason);
  EXPECT_EQ(*reason, "token budget exhausted: 1000 of 1000 tokens used");
}

TEST(LlmBudget, CostLimit) {
  BudgetTracker t(Budget{0, 0.5, 0});
  t.add(answer(10, 10, 0.25));
  EXPECT_FALSE(t.exceeded());
  t.add(answer(10, 10, 0.30));
  auto reason = t.exceeded();
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("cost budget exhausted"), std::string::npos) << *reason;
  EXPECT_NE(reason->find("$0.5500 of $0.5000"), std::string::npos) << *reason;
}

TEST(LlmBudget, TimeLimitFromStart) {
  BudgetTracker fresh(Budget{0, 0, 3600});
  EXPECT_FALSE(fresh.exceeded());
  BudgetTracker old(Budget{0, 0, 5}, BudgetTracker::Clock::now() - std::chrono::seconds(10));
  auto reason = old.exceeded();
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("time budget exhausted"), std::string::npos) << *reason;
  EXPECT_GE(old.elapsed_s(), 10.0);
}

TEST(LlmBudget, CachedAnswersCountAsRequestsButSpendNothing) {
  BudgetTracker t(Budget{100, 1, 0});
  t.add(answer(1000, 1000, 5, /*cached=*/true));
  EXPECT_FALSE(t.exceeded());
  EXPECT_EQ(t.requests(), 1);
  EXPECT_EQ(t.tokens_used(), 0);
  EXPECT_DOUBLE_EQ(t.usd_spent(), 0);
}

TEST(LlmBudget, ConcurrentAddsAllCount) {
  BudgetTracker t(Budget{});
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      for (int j = 0; j < 1000; ++j) t.add(answer(1, 2, 0.001));
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(t.requests(), 8000);
  EXPECT_EQ(t.tokens_used(), 24000);
  EXPECT_NEAR(t.usd_spent(), 8.0, 1e-9);
}
