#include "artifact/config.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "artifact/artifact.hpp"

using namespace kernelopt::artifact;
using nlohmann::json;

namespace {
LaunchConfig reduction_config() {
  LaunchConfig cfg;
  cfg.blocks = {{"XBLOCK", 1}, {"R0_BLOCK", 2048}};
  cfg.num_warps = 16;
  cfg.num_stages = 1;
  return cfg;
}
}  // namespace

TEST(ArtifactConfig, PythonDictSortsBlocksThenWarpsThenStages) {
  EXPECT_EQ(reduction_config().python_dict(),
            "{'R0_BLOCK': 2048, 'XBLOCK': 1, 'num_warps': 16, 'num_stages': 1}");
  LaunchConfig defaults;
  EXPECT_EQ(defaults.python_dict(), "{'num_warps': 4, 'num_stages': 1}");
}

TEST(ArtifactConfig, LabelIsCompact) {
  EXPECT_EQ(reduction_config().label(), "R0_BLOCK=2048 XBLOCK=1 w16 s1");
}

TEST(ArtifactConfig, JsonRoundTrips) {
  LaunchConfig cfg = reduction_config();
  cfg.num_stages = 3;
  json j = cfg.to_json();
  EXPECT_EQ(j, json::parse(R"({"XBLOCK": 1, "R0_BLOCK": 2048, "num_warps": 16, "num_stages": 3})"));
  EXPECT_EQ(LaunchConfig::from_json(j), cfg);
  EXPECT_NE(LaunchConfig::from_json(j), reduction_config());
}

TEST(ArtifactConfig, FromJsonDefaultsWarpsAndStages) {
  LaunchConfig cfg = LaunchConfig::from_json(json::parse(R"({"XBLOCK": 64})"));
  EXPECT_EQ(cfg.blocks.at("XBLOCK"), 64);
  EXPECT_EQ(cfg.num_warps, 4);
  EXPECT_EQ(cfg.num_stages, 1);
}

TEST(ArtifactConfig, FromJsonRejectsBadValues) {
  EXPECT_THROW(LaunchConfig::from_json(json::array()), ArtifactError);
  EXPECT_THROW(LaunchConfig::from_json(json::parse(R"({"XBLOCK": "64"})")), ArtifactError);
  EXPECT_THROW(LaunchConfig::from_json(json::parse(R"({"XBLOCK": 0})")), ArtifactError);
  EXPECT_THROW(LaunchConfig::from_json(json::parse(R"({"num_warps": 2.5})")), ArtifactError);
  EXPECT_THROW(LaunchConfig::from_json(json::parse(R"({"X'BLOCK": 8})")), ArtifactError);
}

TEST(ArtifactConfig, PythonDictRefusesANonIdentifierBlock) {
  LaunchConfig cfg;
  cfg.blocks["a': 1}); import os #"] = 1;
  EXPECT_THROW(cfg.python_dict(), ArtifactError);
}
