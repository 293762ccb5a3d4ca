/// \file
/// Small statistics for the performance gate: robust summaries of timing
/// samples and a bootstrap confidence interval for the speedup of a candidate
/// over its baseline. Contract: functions take samples in any one unit and
/// return results in that unit (the speedup is unitless); empty inputs throw
/// std::invalid_argument; estimate_speedup is deterministic for a given seed on
/// every platform (std::mt19937_64, no std:: distributions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kernelopt::verify {

/// Middle value; the mean of the two middle values for an even count.
double median(std::vector<double> samples);
double mean(const std::vector<double>& samples);
/// Sample standard deviation (n - 1 denominator); 0 for a single sample.
double stddev(const std::vector<double>& samples);
/// p-th percentile, p in [0, 100], linear interpolation between closest ranks
/// (numpy's default). percentile(v, 50) == median(v).
double percentile(std::vector<double> samples, double p);

struct SpeedupEstimate {
  double speedup = 1.0;             // baseline median / candidate median (> 1: candidate faster)
  double ci_low = 1.0;              // bootstrap percentile interval of that ratio
  double ci_high = 1.0;
  double confidence = 0.95;         // coverage of [ci_low, ci_high], in (0, 1)
  std::size_t n_baseline = 0;       // sample counts
  std::size_t n_candidate = 0;
  double baseline_median = 0;       // same unit as the samples
  double candidate_median = 0;      // same unit as the samples

  /// True when even the pessimistic end of the interval beats `min_speedup`.
  bool faster_beyond_noise(double min_speedup = 1.0) const { return ci_low > min_speedup; }
};

/// Estimates baseline/candidate median ratio with a percentile bootstrap
/// (`resamples` independent resamples of both sides). Samples are durations:
/// all must be finite and > 0. Throws std::invalid_argument on empty inputs,
/// bad samples, confidence outside (0, 1) or resamples < 1.
SpeedupEstimate estimate_speedup(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                 double confidence = 0.95, int resamples = 2000, std::uint64_t seed = 12345);

}  // namespace kernelopt::verify
