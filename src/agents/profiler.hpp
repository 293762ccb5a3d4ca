/// \file
/// The offline Profiler agent: turns measured per-kernel numbers (time per
/// model call, bytes moved, FLOPs) into a roofline profile with a bound type
/// and a one-sentence diagnosis, by fixed rules. The LLM Profiler writes a
/// richer diagnosis from the same profile; the numbers are always these.
///
/// Contract: pure function; never throws. Units: ms, bytes, FLOPs, GB/s
/// (1e9 bytes/s), TFLOP/s (1e12 FLOP/s). A limit of 0 means "not measured":
/// the roofline fraction is then 0 and the diagnosis says the limit is
/// unknown. Results are in input order.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernelopt::agents {

struct DeviceLimits {
  double bandwidth_gbps = 0;  // measured copy bandwidth, GB/s; 0 = unknown
  double fp32_tflops = 0;     // measured fp32 peak, TFLOP/s; 0 = unknown
  double bf16_tflops = 0;     // measured bf16 dense peak, TFLOP/s; 0 = unknown (recorded; Inductor's
                              // Triton sub-kernels compute in fp32, so the roofline uses fp32_tflops)
};

/// The fp32 dense peak (CUDA cores, no tensor cores: what fp32 matmuls run at with TF32 off, PyTorch's
/// default) from NVIDIA's datasheet for `gpu_name` as torch.cuda.get_device_name() spells it, TFLOP/s;
/// 0 for a GPU not in the table. A datasheet figure, not a measurement: the bench's end-to-end roofline
/// uses it where nothing measured the peak. Known: NVIDIA H200 (SXM, 67), H200 NVL (60), H100 80GB HBM3
/// (SXM, 67), H100 PCIe (51), H100 NVL (60), A100 (any variant, 19.5).
double datasheet_fp32_tflops(const std::string& gpu_name);

struct KernelMeasurement {
  std::string name;
  std::string kind;    // "pointwise" | "reduction" | "persistent_reduction" | ...
  double time_ms = 0;  // per model call, all launches
  int launches = 0;    // launches per model call
  double bytes = 0;    // bytes read + written, all launches
  double flops = 0;    // floating-point operations, all launches
  double reread_bytes = 0;  // what a looped reduction's later passes over its rows read again, all launches
};

struct KernelProfile {
  std::string name, kind;
  double time_ms = 0;            // per model call, all launches
  double share = 0;              // of the module's total time, 0..1
  double bytes = 0;              // read + written, all launches
  double achieved_gbps = 0;      // bytes / time
  double roofline_fraction = 0;  // achieved / limit of the bound resource, 0..~1
  double reread_bytes = 0;       // read again by later passes over the rows (not in bytes), all launches
  double fraction_with_rereads = 0;  // of the bandwidth, counting reread_bytes, where they explain the kernel's
                                     // fraction (kRereadExplains*); 0 otherwise
  std::string bound;             // "memory" | "compute" | "latency"
  std::string diagnosis;         // one sentence from rules

  nlohmann::json to_json() const;
};

/// Below this time per launch a kernel is latency-bound: a launch costs a few
/// microseconds of fixed overhead (driver, grid setup, tail), so at 10 us or
/// less the data moved or computed is not what sets the time.
inline constexpr double kLatencyBoundMsPerLaunch = 0.01;

/// A memory-bound kernel under kRereadExplainsUnder of the bandwidth whose row passes' re-reads, counted as
/// memory traffic, bring it into [kRereadExplainsFrom, kRereadExplainsAtMost] of it says so in its diagnosis:
/// it moves about what its algorithm must (rows that do not stay in L2 between passes), at the device's pace.
inline constexpr double kRereadExplainsUnder = 0.9;
inline constexpr double kRereadExplainsFrom = 0.85;
inline constexpr double kRereadExplainsAtMost = 1.15;

/// Profiles each measurement; `module_time_ms` is the whole module's time per
/// call (share = time_ms / module_time_ms; 0 when module_time_ms <= 0).
std::vector<KernelProfile> profile_kernels(const std::vector<KernelMeasurement>& kernels, double module_time_ms,
                                           const DeviceLimits& limits);

}  // namespace kernelopt::agents
