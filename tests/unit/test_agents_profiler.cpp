// Tests for agents/profiler.hpp: roofline numbers, bound type and diagnosis rules.
#include "agents/profiler.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace kernelopt::agents;

namespace {

// H200 figures from shared GPU.md: ~4.3 TB/s copy bandwidth; fp32 peak ~67 TFLOP/s.
const DeviceLimits kH200{4250.0, 67.0, 790.0};

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

TEST(AgentsProfiler, MemoryBoundPointwise) {
  // 8192x4096 fp32 read-modify-write: 268 MB in 0.103 ms is ~2600 GB/s.
  const double bytes = 8192.0 * 4096 * 4 * 2;
  const auto p = profile_kernels({{"triton_poi_fused_addmm_gelu_1", "pointwise", 0.103, 1, bytes, 8192.0 * 4096 * 20}},
                                 1.0, kH200);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].bound, "memory");
  EXPECT_NEAR(p[0].share, 0.103, 1e-12);
  EXPECT_NEAR(p[0].achieved_gbps, bytes / 0.103e-3 / 1e9, 1e-6);
  EXPECT_NEAR(p[0].roofline_fraction, p[0].achieved_gbps / 4250.0, 1e-12);
  EXPECT_TRUE(contains(p[0].diagnosis, "memory-bound at 61% of the 4250 GB/s measured bandwidth; 39% headroom"))
      << p[0].diagnosis;
  EXPECT_EQ(p[0].to_json()["bound"], "memory");
  EXPECT_EQ(p[0].to_json()["name"], "triton_poi_fused_addmm_gelu_1");
}

TEST(AgentsProfiler, RowPassesReadingAgainExplainAMemoryBoundFraction) {
  // level1/47 on an H100 (bench/results/2026-12-07-gates-and-tuner-h100): 4.3 GB in, 4.3 GB out, the input read
  // in two passes, 4.333 ms at the 3024 GB/s measured: 65% counted once a storage, 98% counting the re-read
  const DeviceLimits h100{3024.0, 67.0, 0.0};
  const double gb = 4294967296.0;
  KernelMeasurement two_pass{"triton_red_fused_clamp_min_div_0", "reduction", 4.333, 1, 2 * gb, 0.0};
  two_pass.reread_bytes = gb;
  const auto p = profile_kernels({two_pass}, 4.4, h100);
  EXPECT_NEAR(p[0].roofline_fraction, 0.656, 1e-3);
  EXPECT_NEAR(p[0].fraction_with_rereads, 0.983, 1e-3);
  EXPECT_TRUE(contains(p[0].diagnosis, "memory-bound at 66% of the 3024 GB/s measured bandwidth; 34% headroom; 98% "
                                       "counting the 4.29 GB its later passes over each row read again"))
      << p[0].diagnosis;
  EXPECT_DOUBLE_EQ(p[0].to_json()["reread_bytes"].get<double>(), gb);
  EXPECT_NEAR(p[0].to_json()["fraction_with_rereads"].get<double>(), 0.983, 1e-3);
  // rows that stay in L2 between passes (a layer norm at 100% counted once): the re-reads explain nothing
  KernelMeasurement cached = two_pass;
  cached.time_ms = 2.9;
  const auto q = profile_kernels({cached}, 4.4, h100);
  EXPECT_EQ(q[0].fraction_with_rereads, 0.0);
  EXPECT_FALSE(contains(q[0].diagnosis, "read again")) << q[0].diagnosis;
  EXPECT_TRUE(q[0].to_json().contains("reread_bytes") && !q[0].to_json().contains("fraction_with_rereads"));
  // slow beyond what the re-reads explain (40% counted once, 60% with them): the headroom stays unexplained
  KernelMeasurement slow = two_pass;
  slow.time_ms = 7.1;
  EXPECT_FALSE(contains(profile_kernels({slow}, 7.2, h100)[0].diagnosis, "read again"));
  two_pass.reread_bytes = 0;  // one pass: no clause, no field
  const auto one = profile_kernels({two_pass}, 4.4, h100);
  EXPECT_FALSE(contains(one[0].diagnosis, "read again"));
  EXPECT_FALSE(one[0].to_json().contains("reread_bytes"));
}

TEST(AgentsProfiler, ZeroFlopsIsMemoryBound) {
  const auto p = profile_kernels({{"copy", "pointwise", 0.5, 1, 1e9, 0.0}}, 2.0, kH200);
  EXPECT_EQ(p[0].bound, "memory");
  EXPECT_DOUBLE_EQ(p[0].share, 0.25);
}

TEST(AgentsProfiler, HighIntensityIsComputeBound) {
  // 1 GFLOP over 1 MB: 1000 FLOP/byte, far above the ridge (67e12 / 4250e9 ~ 16 FLOP/byte).
  const auto p = profile_kernels({{"dense", "reduction", 0.05, 1, 1e6, 1e9}}, 0.1, kH200);
  EXPECT_EQ(p[0].bound, "compute");
  EXPECT_NEAR(p[0].roofline_fraction, (1e9 / 0.05e-3 / 1e12) / 67.0, 1e-12);
  EXPECT_TRUE(contains(p[0].diagnosis, "compute-bound at 30% of the 67 TFLOP/s")) << p[0].diagnosis;
}

TEST(AgentsProfiler, ShortLaunchesAreLatencyBound) {
  // 4 launches in 0.02 ms: 5 us each, under the 10 us threshold.
  const auto p = profile_kernels({{"tiny", "pointwise", 0.02, 4, 4096, 0}, {"big", "pointwise", 0.04, 1, 1e8, 0}},
                                 0.06, kH200);
  EXPECT_EQ(p[0].bound, "latency");
  EXPECT_TRUE(contains(p[0].diagnosis, "5.0 us per launch")) << p[0].diagnosis;
  EXPECT_EQ(p[1].bound, "memory");  // 40 us in one launch is not latency-bound
}

TEST(AgentsProfiler, UnknownLimitsAndZeroModuleTime) {
  const auto p = profile_kernels({{"k", "pointwise", 0.5, 1, 1e9, 0}}, 0.0, DeviceLimits{});
  EXPECT_DOUBLE_EQ(p[0].share, 0.0);
  EXPECT_DOUBLE_EQ(p[0].roofline_fraction, 0.0);
  EXPECT_NEAR(p[0].achieved_gbps, 2000.0, 1e-9);
  EXPECT_TRUE(contains(p[0].diagnosis, "not measured")) << p[0].diagnosis;
}

TEST(AgentsProfiler, KeepsInputOrder) {
  const auto p = profile_kernels({{"a", "pointwise", 0.1, 1, 1e8, 0}, {"b", "reduction", 0.9, 1, 1e9, 0}}, 1.0, kH200);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].name, "a");
  EXPECT_EQ(p[1].name, "b");
  EXPECT_EQ(p[1].kind, "reduction");
}

}  // namespace

TEST(AgentsProfiler, DatasheetFp32PeakByDeviceName) {
  EXPECT_DOUBLE_EQ(datasheet_fp32_tflops("NVIDIA H200"), 67.0);  // the name torch gives the H200 SXM
  EXPECT_DOUBLE_EQ(datasheet_fp32_tflops("NVIDIA H200 NVL"), 60.0);
  EXPECT_DOUBLE_EQ(datasheet_fp32_tflops("NVIDIA A100-SXM4-80GB"), 19.5);
  EXPECT_DOUBLE_EQ(datasheet_fp32_tflops("NVIDIA GeForce RTX 4090"), 0.0);  // not in the table: unknown
  EXPECT_DOUBLE_EQ(datasheet_fp32_tflops(""), 0.0);
}
