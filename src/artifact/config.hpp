/// \file
/// Launch meta-parameters of one Triton kernel: the block sizes (XBLOCK,
/// YBLOCK, R0_BLOCK, ...), num_warps and num_stages that a triton.Config
/// carries. The engine searches over these and pins the chosen one into the
/// kernel with triton_heuristics.fixed_config, so their Python spelling
/// (python_dict) is part of the contract: blocks sorted by name, then
/// num_warps, then num_stages.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace kernelopt::artifact {

struct LaunchConfig {
  std::map<std::string, std::int64_t> blocks;  // XBLOCK, YBLOCK, R0_BLOCK, ... -> size
  int num_warps = 4;
  int num_stages = 1;

  /// {"XBLOCK": 1, "R0_BLOCK": 2048, "num_warps": 16, "num_stages": 1}.
  nlohmann::json to_json() const;
  /// Inverse of to_json: num_warps/num_stages default to 4/1 when missing;
  /// every other key is a block size. Throws ArtifactError on a non-object,
  /// a non-integer value, or a non-positive size, warp or stage count.
  static LaunchConfig from_json(const nlohmann::json& j);
  /// "{'R0_BLOCK': 2048, 'XBLOCK': 1, 'num_warps': 16, 'num_stages': 1}".
  /// Throws ArtifactError if a block name is not a Python identifier.
  std::string python_dict() const;
  /// "R0_BLOCK=2048 XBLOCK=1 w16 s1" (blocks sorted by name).
  std::string label() const;
  bool operator==(const LaunchConfig&) const = default;
};

}  // namespace kernelopt::artifact
