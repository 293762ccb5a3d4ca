/// \file
/// `kernelopt bench DIR`: every KernelBench-format problem under DIR through
/// optimize, then the numbers the field reports: geometric mean of the
/// speedup over torch.compile (a problem whose baseline was kept counts as
/// 1.0), how many improved, fast_p, and problems with no Triton kernel; per
/// problem, each Triton kernel's time and the share of the measured memory
/// bandwidth the kernels reach, before and after.
/// Resumable: a problem whose run finished is read back, not rerun; one
/// problem's failure never stops the others.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/options.hpp"

namespace kernelopt::engine {

struct BenchOptions {
  std::filesystem::path problems_dir;  ///< searched recursively for *.py
  std::filesystem::path out_dir;       ///< runs/<level>/<name>/ per problem, bench.json, bench.md
  std::string filter;                  ///< substring of the relative path; "" = all
  int level = 0;                       ///< only problems under a "level<N>" directory; 0 = all
  int shard_index = 1, shard_count = 1;  ///< this machine's share: problems i, i+n, ... (1-based)
  OptimizeOptions optimize;            ///< per-problem options (out_dir and problem are set per problem)
};

/// The problems `options` selects, as paths relative to problems_dir, sorted.
std::vector<std::filesystem::path> select_problems(const BenchOptions& options);

/// Per-problem row from a finished run's report.json (or its failure). Besides the speedup and times:
/// "kernels", one entry per Triton kernel (name, module, kind, bound, status, before_ms, after_ms, bytes,
/// flops or null, roofline_before, roofline_after); after = before unless the kernel improved and the row
/// is "improved" (an improved kernel of a reverted run has status "reverted"). "roofline", the Triton
/// kernels together (null without one): bytes, flops (null unless every kernel has them), bandwidth_gbps,
/// before_ms, after_ms, fraction_before/after = bytes / time / bandwidth (null where not measured).
/// Bytes are the distinct tensor storages a kernel's launches take, not vendor calls' traffic.
/// Rows of older bench.json files lack "kernels" and "roofline"; every reader tolerates that.
nlohmann::json bench_row(const std::filesystem::path& relative, const nlohmann::json& report, const std::string& error);

/// Aggregates rows: per level and overall geomean, improved, fast_p, incorrect, no-kernel counts, and
/// "roofline": the median fraction_before and fraction_after over the problems that have both.
nlohmann::json aggregate(const std::vector<nlohmann::json>& rows);

/// Runs the selection; writes bench.json and bench.md; returns bench.json.
nlohmann::json run_bench(const BenchOptions& options);

/// One report from several bench directories (shards run on other machines or in other
/// sessions): their rows, aggregated again, written to out_dir as bench.json, bench.md and
/// bench.html; returns bench.json. A problem present in two inputs, an input without
/// bench.json, an unfinished shard (its bench.json lacks "shard") or an out_dir that is one
/// of the inputs is a UserError; nothing is written then.
nlohmann::json merge_bench(const std::vector<std::filesystem::path>& bench_dirs, const std::filesystem::path& out_dir);

}  // namespace kernelopt::engine
