/// \file
/// `kernelopt bench --gpus N`: one bench spread over the GPUs of one machine, without a
/// scheduler of our own. The parent starts N child `kernelopt bench` processes, child i
/// seeing only the i-th visible GPU (CUDA_VISIBLE_DEVICES), taking its own exact share of
/// the parent's shard, writing to OUT/gpuI (log OUT/gpuI.log) with its own store
/// (WORKSPACE/gpuI) and the shared kernel library (one file; SQLite rollback journal with
/// busy retries, so concurrent writers wait for each other). When all have exited, the
/// finished children are merged into OUT with merge_bench. Each child's bench is resumable,
/// so rerunning the same command resumes. One child per GPU: timings never share a GPU.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench.hpp"

namespace kernelopt::bench {

/// The shard {index, count} of child `child` (1-based) of `children` under the parent's shard
/// shard_index/shard_count: {shard_index + (child - 1) * shard_count, shard_count * children}.
/// select_problems deals problems round robin (position p is in shard p mod count + 1), so the
/// children's shards split the parent's positions p = shard_index - 1 (mod shard_count) by
/// p mod (shard_count * children): every problem of the parent's shard in exactly one child.
std::pair<int, int> child_shard(int shard_index, int shard_count, int child, int children);

/// Turns a child's options into its command line (after the binary): the CLI spells its flags.
using BenchChildArgs = std::function<std::vector<std::string>(const BenchOptions& child)>;

struct BenchGpusResult {
  nlohmann::json bench;              ///< the merged bench.json; null when no child finished
  std::vector<std::string> failed;   ///< one line per child that did not finish its bench
};

/// Runs `gpu_ids.size()` children (>= 2) for `o` and merges them into o.out_dir. gpu_ids[i] is
/// child i+1's CUDA_VISIBLE_DEVICES ("" = leave the environment as it is: --device cpu). A child
/// whose share is empty is not started. A child finished when it exited with 0 or 1 (1: a
/// problem was incorrect) and wrote a finished bench.json; the merged bench.json's "shard" is
/// the parent's. Logs one line per child as it starts and as it ends. Throws UserError for
/// options no child could run with (an empty selection).
BenchGpusResult run_bench_on_gpus(const BenchOptions& o, const std::vector<std::string>& gpu_ids,
                                  const std::string& kernelopt_binary, const BenchChildArgs& child_args);

}  // namespace kernelopt::bench
