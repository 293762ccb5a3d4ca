#include "agents/profiler.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace kernelopt::agents {
namespace {

int percent(double fraction) { return static_cast<int>(std::lround(fraction * 100.0)); }

}  // namespace

double datasheet_fp32_tflops(const std::string& gpu_name) {
  struct Peak {
    const char* name;
    double tflops;
  };
  static constexpr Peak kExact[] = {{"NVIDIA H200", 67.0},           {"NVIDIA H200 NVL", 60.0},
                                    {"NVIDIA H100 80GB HBM3", 67.0}, {"NVIDIA H100 PCIe", 51.0},
                                    {"NVIDIA H100 NVL", 60.0}};
  for (const auto& p : kExact) {
    if (gpu_name == p.name) return p.tflops;
  }
  if (gpu_name.rfind("NVIDIA A100", 0) == 0) return 19.5;
  return 0.0;
}

nlohmann::json KernelProfile::to_json() const {
  nlohmann::json out = {{"name", name},
          {"kind", kind},
          {"time_ms", time_ms},
          {"share", share},
          {"bytes", bytes},
          {"achieved_gbps", achieved_gbps},
          {"roofline_fraction", roofline_fraction},
          {"bound", bound},
          {"diagnosis", diagnosis}};
  if (reread_bytes > 0) out["reread_bytes"] = reread_bytes;
  if (fraction_with_rereads > 0) out["fraction_with_rereads"] = fraction_with_rereads;
  return out;
}

std::vector<KernelProfile> profile_kernels(const std::vector<KernelMeasurement>& kernels, double module_time_ms,
                                           const DeviceLimits& limits) {
  std::vector<KernelProfile> out;
  out.reserve(kernels.size());
  for (const KernelMeasurement& k : kernels) {
    KernelProfile p;
    p.name = k.name;
    p.kind = k.kind;
    p.time_ms = k.time_ms;
    p.bytes = k.bytes;
    p.reread_bytes = k.reread_bytes;
    p.share = module_time_ms > 0 ? k.time_ms / module_time_ms : 0.0;
    const double seconds = k.time_ms * 1e-3;
    p.achieved_gbps = seconds > 0 ? k.bytes / seconds / 1e9 : 0.0;
    const double achieved_tflops = seconds > 0 ? k.flops / seconds / 1e12 : 0.0;

    // Ridge point of the roofline, FLOP/byte: above it the FLOP peak limits, below it bandwidth.
    const bool have_both = limits.bandwidth_gbps > 0 && limits.fp32_tflops > 0;
    const double ridge = have_both ? limits.fp32_tflops * 1e12 / (limits.bandwidth_gbps * 1e9) : 0.0;
    const double intensity = k.bytes > 0 ? k.flops / k.bytes : 0.0;
    const bool compute = k.flops > 0 && have_both && (k.bytes <= 0 || intensity > ridge);
    const double memory_fraction = limits.bandwidth_gbps > 0 ? p.achieved_gbps / limits.bandwidth_gbps : 0.0;
    const double compute_fraction = limits.fp32_tflops > 0 ? achieved_tflops / limits.fp32_tflops : 0.0;
    p.roofline_fraction = compute ? compute_fraction : memory_fraction;

    const int launches = std::max(k.launches, 1);
    const double ms_per_launch = k.time_ms / launches;
    if (ms_per_launch < kLatencyBoundMsPerLaunch) {
      p.bound = "latency";
      p.diagnosis = fmt::format(
          "latency-bound: {:.1f} us per launch over {} launch(es) is dominated by launch overhead; "
          "fusing launches helps more than faster code",
          ms_per_launch * 1e3, launches);
    } else if (compute) {
      p.bound = "compute";
      p.diagnosis = fmt::format("compute-bound at {}% of the {:.0f} TFLOP/s fp32 peak ({:.1f} FLOP/byte); {}% headroom",
                                percent(p.roofline_fraction), limits.fp32_tflops, intensity,
                                percent(std::max(0.0, 1.0 - p.roofline_fraction)));
    } else {
      p.bound = "memory";
      p.diagnosis = limits.bandwidth_gbps > 0
                        ? fmt::format("memory-bound at {}% of the {:.0f} GB/s measured bandwidth; {}% headroom",
                                      percent(p.roofline_fraction), limits.bandwidth_gbps,
                                      percent(std::max(0.0, 1.0 - p.roofline_fraction)))
                        : fmt::format("memory-bound at {:.0f} GB/s; device bandwidth not measured, headroom unknown",
                                      p.achieved_gbps);
      // counted once a storage, a two-pass row read from memory twice looks like headroom it does not have
      const double with_rereads =
          limits.bandwidth_gbps > 0 && seconds > 0 ? (k.bytes + k.reread_bytes) / seconds / 1e9 / limits.bandwidth_gbps : 0.0;
      if (k.reread_bytes > 0 && p.roofline_fraction < kRereadExplainsUnder && with_rereads >= kRereadExplainsFrom &&
          with_rereads <= kRereadExplainsAtMost) {
        p.fraction_with_rereads = with_rereads;
        p.diagnosis += fmt::format(
            "; {}% counting the {:.2f} GB its later passes over each row read again (from memory, where rows do "
            "not stay in L2 between passes): only reading each row once would go faster",
            percent(with_rereads), k.reread_bytes / 1e9);
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace kernelopt::agents
