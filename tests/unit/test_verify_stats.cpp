// Tests for verify/stats.hpp: summaries and the bootstrap speedup estimate.
#include "verify/stats.hpp"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <vector>

using namespace kernelopt::verify;

namespace {

// Timing-like samples: `center` with multiplicative normal jitter (sigma = rel).
std::vector<double> noisy(double center, double rel, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> jitter(1.0, rel);
  std::vector<double> out(n);
  for (double& x : out) x = center * jitter(rng);
  return out;
}

TEST(VerifyStats, MedianOddAndEven) {
  EXPECT_DOUBLE_EQ(median({5.0, 1.0, 3.0}), 3.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(median({7.0}), 7.0);
}

TEST(VerifyStats, MeanStddevPercentile) {
  const std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(mean(v), 5.0);
  EXPECT_NEAR(stddev(v), 2.138089935, 1e-9);  // sample (n - 1) definition
  EXPECT_DOUBLE_EQ(stddev({3.0}), 0.0);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 100), 4.0);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 25), 1.75);  // numpy linear
  EXPECT_DOUBLE_EQ(percentile(v, 50), median(v));
  EXPECT_THROW(percentile(v, 101), std::invalid_argument);
}

TEST(VerifyStats, EmptyInputThrows) {
  EXPECT_THROW(median({}), std::invalid_argument);
  EXPECT_THROW(mean({}), std::invalid_argument);
  EXPECT_THROW(stddev({}), std::invalid_argument);
  EXPECT_THROW(percentile({}, 50), std::invalid_argument);
  EXPECT_THROW(estimate_speedup({}, {1.0}), std::invalid_argument);
  EXPECT_THROW(estimate_speedup({1.0}, {}), std::invalid_argument);
}

TEST(VerifyStats, BadArgumentsThrow) {
  EXPECT_THROW(estimate_speedup({1.0}, {0.0}), std::invalid_argument);
  EXPECT_THROW(estimate_speedup({1.0}, {1.0}, 1.0), std::invalid_argument);
  EXPECT_THROW(estimate_speedup({1.0}, {1.0}, 0.95, 0), std::invalid_argument);
}

TEST(VerifyStats, IdenticalDistributionsAreNotFaster) {
  const auto base = noisy(1.0, 0.05, 100, 1);
  const auto cand = noisy(1.0, 0.05, 100, 2);
  const SpeedupEstimate est = estimate_speedup(base, cand);
  EXPECT_LE(est.ci_low, 1.0);
  EXPECT_GE(est.ci_high, 1.0);
  EXPECT_LE(est.ci_low, est.speedup);
  EXPECT_GE(est.ci_high, est.speedup);
  EXPECT_FALSE(est.faster_beyond_noise());
  EXPECT_EQ(est.n_baseline, 100u);
  EXPECT_EQ(est.n_candidate, 100u);
}

TEST(VerifyStats, HalvedTimeIsTwiceAsFast) {
  const auto base = noisy(2.0, 0.02, 60, 3);
  std::vector<double> cand = base;
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> jitter(0.98, 1.02);
  for (double& x : cand) x = x * 0.5 * jitter(rng);
  const SpeedupEstimate est = estimate_speedup(base, cand);
  EXPECT_NEAR(est.speedup, 2.0, 0.1);
  EXPECT_GT(est.ci_low, 1.5);
  EXPECT_LT(est.ci_high, 2.5);
  EXPECT_TRUE(est.faster_beyond_noise(1.5));
  EXPECT_FALSE(est.faster_beyond_noise(2.5));
  EXPECT_NEAR(est.baseline_median, 2.0, 0.05);
  EXPECT_NEAR(est.candidate_median, 1.0, 0.05);
}

TEST(VerifyStats, BootstrapIsDeterministicPerSeed) {
  const auto base = noisy(1.0, 0.1, 40, 5);
  const auto cand = noisy(0.9, 0.1, 40, 6);
  const SpeedupEstimate a = estimate_speedup(base, cand, 0.95, 500, 42);
  const SpeedupEstimate b = estimate_speedup(base, cand, 0.95, 500, 42);
  const SpeedupEstimate c = estimate_speedup(base, cand, 0.95, 500, 43);
  EXPECT_EQ(a.ci_low, b.ci_low);
  EXPECT_EQ(a.ci_high, b.ci_high);
  EXPECT_TRUE(a.ci_low != c.ci_low || a.ci_high != c.ci_high);  // the seed matters
  EXPECT_EQ(a.speedup, c.speedup);                                // the point estimate does not
}

TEST(VerifyStats, WiderConfidenceGivesWiderInterval) {
  const auto base = noisy(1.0, 0.1, 50, 7);
  const auto cand = noisy(1.0, 0.1, 50, 8);
  const SpeedupEstimate narrow = estimate_speedup(base, cand, 0.5);
  const SpeedupEstimate wide = estimate_speedup(base, cand, 0.99);
  EXPECT_LT(narrow.ci_high - narrow.ci_low, wide.ci_high - wide.ci_low);
  EXPECT_DOUBLE_EQ(wide.confidence, 0.99);
}

}  // namespace
