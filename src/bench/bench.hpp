/// \file
/// `kernelopt bench DIR`: every KernelBench-format problem under DIR through
/// optimize, then the numbers the field reports: geometric mean of the
/// speedup over torch.compile (a problem whose baseline was kept counts as
/// 1.0), how many improved, fast_p, and problems with no Triton kernel; per
/// problem, each Triton kernel's time and the share of the measured memory
/// bandwidth the kernels reach, before and after; the problem end to end
/// against its own roofline (minimum bytes and counted FLOPs); what each
/// problem cost (wall, GPU and compile seconds, candidates).
/// Resumable: a problem whose run finished is read back, not rerun; one
/// problem's failure never stops the others.
/// A harness over the engine, not part of it: bench.cpp runs problems through engine::optimize,
/// rows.cpp and aggregate.cpp only read report JSON, the pages are report::bench_markdown/bench_html.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/options.hpp"

namespace kernelopt::bench {

struct BenchOptions {
  std::filesystem::path problems_dir;  ///< searched recursively for *.py
  std::filesystem::path out_dir;       ///< runs/<level>/<name>/ per problem, bench.json, bench.md
  std::string filter;                  ///< substring of the relative path; "" = all
  int level = 0;                       ///< only problems under a "level<N>" directory; 0 = all
  int shard_index = 1, shard_count = 1;  ///< this machine's share: problems i, i+n, ... (1-based)
  engine::OptimizeOptions optimize;    ///< per-problem options (out_dir and problem are set per problem)
};

/// The problems `options` selects, as paths relative to problems_dir, sorted.
std::vector<std::filesystem::path> select_problems(const BenchOptions& options);

/// Problems under a `small/` folder: a suite's host-bound sizes, reported as their own level and kept out of the
/// overall aggregate (bench/problems/small/).
inline constexpr const char* kSmallLevel = "small";

/// The level directory a problem lies under ("level1", or kSmallLevel); "other" without one.
std::string level_of(const std::filesystem::path& relative);

/// Per-problem row from a finished run's report.json (or its failure). Besides the speedup and times:
/// "kernels", one entry per Triton kernel (name, module, kind, bound, status, before_ms, after_ms, bytes,
/// flops or null, roofline_before, roofline_after); after = before unless the kernel improved and the row
/// is "improved" (an improved kernel of a reverted run has status "reverted"). "roofline", the Triton
/// kernels together (null without one): bytes, flops (null unless every kernel has them), bandwidth_gbps,
/// before_ms, after_ms, fraction_before/after = bytes / time / bandwidth (null where not measured).
/// Bytes are the distinct tensor storages a kernel's launches take, not vendor calls' traffic.
/// With the report's "problem_work" (the worker's min_bytes and FLOPs of the whole problem), "roofline" also
/// holds the problem end to end (and exists without a Triton kernel, its kernel fields null): min_bytes,
/// model_flops (FlopCounterMode: matmuls, convolutions, attention; pointwise ops not counted), intensity
/// (FLOP/byte), peak_tflops (agents::datasheet_fp32_tflops of the report's GPU; null if unknown), ridge
/// (peak / bandwidth, FLOP/byte), bound ("memory" without counted FLOPs or below the ridge, "compute" above
/// it, null when a limit is unknown), limit_ms (the roofline time: min_bytes / bandwidth or flops / peak),
/// e2e_fraction_before/after = limit_ms / the model call's time (before: torch.compile's median; after: the
/// optimized median when the row is "improved", else torch.compile's).
/// "ceiling": the best end-to-end speedup kernelopt's contract allows (it rewrites only Triton kernels):
/// torch.compile's median / (that median - the sum over the Triton kernels of their time alone minus their limit,
/// bytes / measured bandwidth, never below 0: report::ceiling_saving_ms); 1.0 without a Triton kernel,
/// null without the measured bandwidth. An upper bound: a kernel's bytes count each storage once.
/// From the report's end_to_end "gpu_ms" (the calls timed with the host's time to issue them hidden; absent
/// under the interpreter): "host_ms" = torch.compile's end-to-end median minus its GPU-alone median (the host
/// time the L2 flush does not hide, which a faster kernel cannot remove), "gpu_speedup" = GPU-alone baseline /
/// optimized (1.0 when the baseline was kept), "gpu_ceiling" = the ceiling over the GPU-alone median (what
/// kernel rewrites could reach with no host time at all); all three null without "gpu_ms".
/// Cost, from the report's "cost" (null in older reports): wall_s, gpu_s, compile_s (see report::cost_json);
/// candidates_screened and candidates_gated over the report's kernels.
/// Rows of older bench.json files lack "kernels", "roofline" and the cost fields; every reader tolerates that.
nlohmann::json bench_row(const std::filesystem::path& relative, const nlohmann::json& report, const std::string& error);
/// A row's "decisions" (only where the run searched them, --decisions): {"kept", "compile_default_ms" (the
/// median of the decisions' torch.compile default times), "best_mode" and "best_mode_ms" (the fastest correct
/// pure torch.compile mode: default, cudagraphs, max_autotune, cudagraphs_max_autotune), "with_decisions_ms"
/// (kernelopt with decisions, the end-to-end optimized median), "search_s" (the decide requests' seconds)};
/// null when the report has no decisions. bench_row adds "speedup_vs_best_mode" = the row's speedup over default x compile_default_ms / best_mode_ms
/// (each ratio from one interleaved series; null without both times).
nlohmann::json decision_columns(const nlohmann::json& report);
/// `bench --decisions` runs each problem twice (bench.cpp): the row is the run with decisions; this puts the
/// run without them (its own bench_row) under row["decisions"]["without_decisions"]: {status, speedup,
/// speedup_ci, optimized_ms, baseline_ms, error}. Nothing when the row has no "decisions".
void attach_without_decisions(nlohmann::json& row, const nlohmann::json& without_row);

/// Aggregates rows: per level and overall geomean, improved, fast_p, incorrect, no-kernel counts;
/// "roofline": the median fraction_before and fraction_after over the problems that have both, the median
/// e2e_fraction_before/after over the problems that have both (e2e_problems), compute_bound (count);
/// "cost": median and total gpu_s, compile_s, wall_s over the rows that have each (problems = rows with
/// gpu_s; null without any), candidates screened and gated in total; "limits": ceiling_geomean over the rows
/// with a ceiling (ceiling_problems), median_host_ms over the rows with host_ms (host_problems),
/// gpu_geomean_speedup and gpu_ceiling_geomean over the rows with each; each null without such rows;
/// "decisions" (only where some row searched them): problems, geomean_vs_best_mode, geomean_without_decisions
/// (each over the rows that have it), median_search_s, kept ({decision: count});
/// "under_roofline": the memory-bound Triton kernels that take >= kUnderRooflineShare of their problem's Triton
/// time and stay under kUnderRooflineFraction of the measured bandwidth after optimization, each with its
/// reason (the search's verdict and the rewrite families' own), and how many there are.
nlohmann::json aggregate(const std::vector<nlohmann::json>& rows);
inline constexpr double kUnderRooflineShare = 0.10, kUnderRooflineFraction = 0.70;  // issue 18's bar

/// Runs the selection; writes bench.json, bench.md and bench.html (report::bench_markdown, report::bench_html); returns bench.json. A row's wall_s is
/// measured here for a run it makes; a finished run read back keeps its report's.
nlohmann::json run_bench(const BenchOptions& options);

/// One report from several bench directories (shards run on other machines or in other
/// sessions): their rows, aggregated again, written to out_dir as bench.json, bench.md and
/// bench.html; returns bench.json. A problem present in two inputs, an input without
/// bench.json, an unfinished shard (its bench.json lacks "shard") or an out_dir that is one
/// of the inputs is a UserError; nothing is written then. `shard` labels the result ("merged";
/// `bench --gpus` gives the parent's i/n, so its output merges like a one-GPU shard's).
/// With later_wins, a problem in several inputs is taken from the last one given (a re-run of
/// failed problems merged over the first run), and its input's "replaced" list names it.
nlohmann::json merge_bench(const std::vector<std::filesystem::path>& bench_dirs, const std::filesystem::path& out_dir,
                           const std::string& shard = "merged", bool later_wins = false);

}  // namespace kernelopt::bench
