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
};

struct KernelProfile {
  std::string name, kind;
  double time_ms = 0;            // per model call, all launches
  double share = 0;              // of the module's total time, 0..1
  double bytes = 0;              // read + written, all launches
  double achieved_gbps = 0;      // bytes / time
  double roofline_fraction = 0;  // achieved / limit of the bound resource, 0..~1
  std::string bound;             // "memory" | "compute" | "latency"
  std::string diagnosis;         // one sentence from rules

  nlohmann::json to_json() const;
};

/// Below this time per launch a kernel is latency-bound: a launch costs a few
/// microseconds of fixed overhead (driver, grid setup, tail), so at 10 us or
/// less the data moved or computed is not what sets the time.
inline constexpr double kLatencyBoundMsPerLaunch = 0.01;

/// Profiles each measurement; `module_time_ms` is the whole module's time per
/// call (share = time_ms / module_time_ms; 0 when module_time_ms <= 0).
std::vector<KernelProfile> profile_kernels(const std::vector<KernelMeasurement>& kernels, double module_time_ms,
                                           const DeviceLimits& limits);

}  // namespace kernelopt::agents
