#include "verify/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

namespace kernelopt::verify {
namespace {

void require_nonempty(const std::vector<double>& samples, const char* what) {
  if (samples.empty()) throw std::invalid_argument(std::string(what) + ": no samples");
}

void require_durations(const std::vector<double>& samples, const char* what) {
  require_nonempty(samples, what);
  for (double s : samples) {
    if (!std::isfinite(s) || s <= 0.0)
      throw std::invalid_argument(std::string(what) + ": samples must be finite and > 0, got " + std::to_string(s));
  }
}

// Median of `v`, reordering it; v is non-empty.
double median_in_place(std::vector<double>& v) {
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2.0;
}

// Fills `out` with a resample (with replacement) of `from`. Indexing by
// modulo keeps results identical across standard libraries; its bias is
// below n / 2^64, far under bootstrap noise.
void resample(const std::vector<double>& from, std::vector<double>& out, std::mt19937_64& rng) {
  out.resize(from.size());
  for (double& x : out) x = from[rng() % from.size()];
}

}  // namespace

double median(std::vector<double> samples) {
  require_nonempty(samples, "median");
  return median_in_place(samples);
}

double mean(const std::vector<double>& samples) {
  require_nonempty(samples, "mean");
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

double stddev(const std::vector<double>& samples) {
  require_nonempty(samples, "stddev");
  if (samples.size() == 1) return 0.0;
  const double m = mean(samples);
  double ss = 0.0;
  for (double s : samples) ss += (s - m) * (s - m);
  return std::sqrt(ss / static_cast<double>(samples.size() - 1));
}

double percentile(std::vector<double> samples, double p) {
  require_nonempty(samples, "percentile");
  if (!(p >= 0.0 && p <= 100.0)) throw std::invalid_argument("percentile: p must be in [0, 100]");
  std::sort(samples.begin(), samples.end());
  const double rank = p / 100.0 * static_cast<double>(samples.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, samples.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return samples[lo] + frac * (samples[hi] - samples[lo]);
}

SpeedupEstimate estimate_speedup(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                 double confidence, int resamples, std::uint64_t seed) {
  require_durations(baseline, "estimate_speedup baseline");
  require_durations(candidate, "estimate_speedup candidate");
  if (!(confidence > 0.0 && confidence < 1.0))
    throw std::invalid_argument("estimate_speedup: confidence must be in (0, 1)");
  if (resamples < 1) throw std::invalid_argument("estimate_speedup: resamples must be >= 1");

  SpeedupEstimate est;
  est.confidence = confidence;
  est.n_baseline = baseline.size();
  est.n_candidate = candidate.size();
  est.baseline_median = median(baseline);
  est.candidate_median = median(candidate);
  est.speedup = est.baseline_median / est.candidate_median;

  std::mt19937_64 rng(seed);
  std::vector<double> ratios(static_cast<size_t>(resamples));
  std::vector<double> b, c;
  for (double& r : ratios) {
    resample(baseline, b, rng);
    resample(candidate, c, rng);
    r = median_in_place(b) / median_in_place(c);
  }
  const double tail = (1.0 - confidence) / 2.0 * 100.0;
  est.ci_low = percentile(ratios, tail);
  est.ci_high = percentile(ratios, 100.0 - tail);
  return est;
}

}  // namespace kernelopt::verify
