/// \file
/// The offline Tuner agent's search space: launch meta-parameters (block
/// sizes, num_warps, num_stages) to measure for one Inductor Triton kernel.
/// The measured search (the run loop) times these in order and keeps the best
/// that passes the gates; this module only proposes, it measures nothing.
///
/// Contract: pure and deterministic; never throws. A config is a JSON object
/// with one integer per tunable block constexpr plus "num_warps" and
/// "num_stages", e.g. {"XBLOCK": 1, "R0_BLOCK": 2048, "num_warps": 16,
/// "num_stages": 1} (fixed constexprs such as a persistent reduction's
/// R0_BLOCK are not part of it). The result never contains `current_config`
/// (compared on the config's keys; a missing num_warps/num_stages in current
/// reads as Triton's 4 / 1), has no duplicates, holds at most `max_configs`
/// entries, and is ordered by closeness to current: configs differing in one
/// parameter first, then two, ...; within that, smaller steps (sum of
/// |log2(new / old)|) first, then lexicographically by (blocks in constexpr
/// order, num_warps, num_stages). Except for a reduction whose rows interleave in
/// memory (the kernel's "row_run_bytes" under 128: each row's run of bytes before the
/// next row's): then the first half of the list (nearest first) are configs whose
/// XBLOCK adjacent rows fill a 128-byte line (XBLOCK * row_run_bytes >= 128), the
/// rest ordered as above. (Tiles widened for rows narrower than fp32 were measured slower
/// on an H100 and are not preferred.)
///
/// Supported kernels (anything else, including multi-dimensional reductions
/// with R1_BLOCK, returns an empty list):
///   - pointwise, constexprs [XBLOCK]
///   - pointwise, constexprs {XBLOCK, YBLOCK}
///   - reduction, constexprs {XBLOCK, R0_BLOCK}
///   - persistent_reduction, constexprs [XBLOCK] with fixed_constexprs.R0_BLOCK
///   - triton_jit (a standalone kernel): only "num_warps" and "num_stages" (its
///     block sizes are its launcher's and stay). num_warps in {1, ..., 32}, at
///     most one warp per 32 elements of the tile when the tile is known (the
///     product of current_config's power-of-two values for constexprs named
///     *BLOCK* or *RDIM*); num_stages in {1, 2, 3, 4} only for a kernel with
///     loops (num_loops > 0, or -1 = not counted): without one it changes
///     nothing, so current_config's num_stages is kept.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

namespace kernelopt::agents {

/// Candidate configs for `kernel` (one kernel object of the artifact JSON:
/// kind, constexprs, fixed_constexprs, size_hints) around `current_config`
/// (the config Inductor's launcher chose, same shape as the results).
std::vector<nlohmann::json> tuner_space(const nlohmann::json& kernel, const nlohmann::json& current_config,
                                        int max_configs);

}  // namespace kernelopt::agents
