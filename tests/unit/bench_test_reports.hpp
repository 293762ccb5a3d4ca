// Report JSON for the bench's unit tests: a minimal report, the real softmax run on an H200
// (tests/fixtures/reports/) with its numbers read off by hand, and the Markdown table readers.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/fs.hpp"

namespace bench_test {

namespace fs = std::filesystem;
using nlohmann::json;

inline json report(bool improved, bool passed, double speedup, int kernels) {
  json mods = json::array({{{"kernels", json::array()}}});
  for (int i = 0; i < kernels; ++i) mods[0]["kernels"].push_back(json::object());
  return {{"summary", {{"improved", improved}, {"kernels_improved", improved ? 1 : 0}}},
          {"modules", mods},
          {"end_to_end",
           {{"passed", passed}, {"speedup_vs_compile", {{"speedup", speedup}, {"ci_low", speedup}, {"ci_high", speedup}}},
            {"speedup_vs_eager", 1.0}, {"baseline_ms", {{"median", 1.0}}}, {"optimized_ms", {{"median", 1.0}}},
            {"eager_ms", {{"median", 1.0}}}}}};
}

/// tests/fixtures/reports/softmax_h200.report.json: a real run of examples/softmax.py on an H200.
inline json softmax_report() {
  return json::parse(kernelopt::util::read_file(fs::path(KERNELOPT_SOURCE_DIR) / "tests" / "fixtures" / "reports" /
                                                "softmax_h200.report.json"));
}

// The fixture's numbers, read off the file by hand: one reduction kernel, improved.
constexpr double kBytes = 268435456.0;               // profile.bytes (256 MiB)
constexpr double kBeforeMs = 0.07966400310397148;    // profile.time_ms
constexpr double kAfterMs = 0.0684799998998642;      // outcome.after_ms
constexpr double kBandwidth = 4231.327954246574;     // modules[0].bandwidth_gbps

// What this branch's worker and engine add to report.json, for the fixture's softmax run (which predates
// them): the problem's work as problem_work() computes it for examples/softmax.py, a 4096x8192 fp32 softmax
// (input and output, no counted FLOPs), and a run cost. Added by the test, not measured.
constexpr double kMinBytes = 2.0 * 4096 * 8192 * 4;  // = kBytes: the one kernel reads the input, writes the output
constexpr double kBaselineMs = 0.13689599931240082;  // end_to_end.baseline_ms.median
constexpr double kOptimizedMs = 0.1239520013332367;  // end_to_end.optimized_ms.median

inline json softmax_report_with_work_and_cost() {
  json report = softmax_report();
  report["problem_work"] = {{"min_bytes", kMinBytes}, {"input_bytes", kMinBytes / 2}, {"flops", 0},
                            {"flop_counter", "FlopCounterMode"}};
  report["cost"] = {{"wall_s", 41.5}, {"gpu_s", 12.25}, {"compile_s", 8.5}, {"worker_s", 30.0}};
  return report;
}

/// A problem with no Triton kernel (a matmul left to cuBLAS): n x n times n x n, fp32, on `gpu`.
inline json matmul_report(const std::string& gpu, double baseline_ms) {
  const double n = 4096;
  json r = report(false, true, 1.0, 0);
  r["modules"][0]["bandwidth_gbps"] = kBandwidth;
  r["versions"] = {{"gpu", gpu}};
  r["end_to_end"]["baseline_ms"]["median"] = baseline_ms;
  r["problem_work"] = {{"min_bytes", 3 * n * n * 4}, {"flops", 2 * n * n * n}};
  return r;
}

/// The cells of a markdown table line ("| a | b |" -> {"a", "b"}), trimmed.
inline std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  size_t p = line.find('|');
  while (p != std::string::npos) {
    const size_t q = line.find('|', p + 1);
    if (q == std::string::npos) break;
    std::string c = line.substr(p + 1, q - p - 1);
    c.erase(0, c.find_first_not_of(' '));
    c.erase(c.find_last_not_of(' ') + 1);
    out.push_back(c);
    p = q;
  }
  return out;
}

/// The line of `md` that starts with `prefix`; "" if none.
inline std::string line_of(const std::string& md, const std::string& prefix) {
  const size_t at = md.find("\n" + prefix);
  if (at == std::string::npos) return "";
  return md.substr(at + 1, md.find('\n', at + 1) - at - 1);
}

// The softmax fixture's one kernel at its limit: its bytes at the measured bandwidth (0.0634 ms of 0.0797 ms).
inline double softmax_ceiling() {
  const double saving = kBeforeMs - kBytes / (kBandwidth * 1e6);
  return kBaselineMs / (kBaselineMs - saving);
}

}  // namespace bench_test
