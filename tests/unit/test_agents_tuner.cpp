// Tests for agents/tuner.hpp on the real Inductor artifacts in tests/fixtures/inductor.
#include "agents/tuner.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using namespace kernelopt::agents;
using nlohmann::json;

namespace {

json load_kernel(const std::string& artifact, const std::string& kind) {
  std::ifstream in(std::string(KERNELOPT_SOURCE_DIR) + "/tests/fixtures/inductor/" + artifact);
  EXPECT_TRUE(in.good()) << artifact;
  const json a = json::parse(in);
  for (const json& k : a["kernels"])
    if (k["kind"] == kind) return k;
  ADD_FAILURE() << "no " << kind << " kernel in " << artifact;
  return json::object();
}

int changed_params(const json& config, const json& current) {
  int n = 0;
  for (const auto& [key, value] : config.items())
    if (!current.contains(key) || current[key] != value) ++n;
  return n;
}

const json kSoftmaxCurrent = {{"XBLOCK", 1}, {"R0_BLOCK", 2048}, {"num_warps", 16}, {"num_stages", 1}};

TEST(AgentsTuner, SoftmaxReductionSpaceRespectsCaps) {
  const json kernel = load_kernel("softmax.artifact.json", "reduction");
  const auto configs = tuner_space(kernel, kSoftmaxCurrent, 1000);
  ASSERT_FALSE(configs.empty());
  std::set<std::string> seen;
  for (const json& c : configs) {
    EXPECT_NE(c, kSoftmaxCurrent);
    EXPECT_TRUE(seen.insert(c.dump()).second) << "duplicate " << c.dump();
    ASSERT_EQ(c.size(), 4u) << c.dump();
    const int x = c["XBLOCK"], r = c["R0_BLOCK"], w = c["num_warps"], s = c["num_stages"];
    EXPECT_TRUE(std::set<int>({1, 2, 4, 8, 16, 32, 64}).count(x)) << c.dump();
    EXPECT_TRUE(std::set<int>({64, 128, 256, 512, 1024, 2048, 4096}).count(r)) << c.dump();
    EXPECT_GE(x * r, 256) << c.dump();
    EXPECT_LE(x * r, 16384) << c.dump();
    EXPECT_TRUE(std::set<int>({2, 4, 8, 16, 32}).count(w)) << c.dump();
    EXPECT_LE(w, x * r / 32) << c.dump();
    EXPECT_TRUE(s == 1 || s == 2) << c.dump();
  }
  // The nearest neighbours come first: one parameter changed, by one power-of-two step.
  EXPECT_EQ(changed_params(configs[0], kSoftmaxCurrent), 1) << configs[0].dump();
  for (std::size_t i = 1; i < configs.size(); ++i)
    EXPECT_LE(changed_params(configs[i - 1], kSoftmaxCurrent), changed_params(configs[i], kSoftmaxCurrent));
  EXPECT_EQ(configs[0], json({{"XBLOCK", 1}, {"R0_BLOCK", 1024}, {"num_warps", 16}, {"num_stages", 1}}));
}

TEST(AgentsTuner, MlpPersistentReductionKeepsRowsInRegisters) {
  const json kernel = load_kernel("mlp_block.artifact.json", "persistent_reduction");
  ASSERT_EQ(kernel["fixed_constexprs"]["R0_BLOCK"], 1024);
  const json current = {{"XBLOCK", 8}, {"num_warps", 8}, {"num_stages", 1}};
  const auto configs = tuner_space(kernel, current, 1000);
  ASSERT_FALSE(configs.empty());
  std::set<int> xblocks;
  for (const json& c : configs) {
    EXPECT_NE(c, current);
    EXPECT_FALSE(c.contains("R0_BLOCK")) << c.dump();
    const int x = c["XBLOCK"], w = c["num_warps"];
    EXPECT_LE(x * 1024, 32768) << c.dump();
    EXPECT_LE(w, std::max(1, x * 1024 / 32)) << c.dump();
    EXPECT_EQ(c["num_stages"], 1);
    xblocks.insert(x);
  }
  EXPECT_EQ(xblocks, std::set<int>({1, 2, 4, 8, 16, 32}));  // 64 rows of 1024 would exceed 32768
  EXPECT_EQ(changed_params(configs[0], current), 1);
  EXPECT_EQ(changed_params(configs[1], current), 1);
}

TEST(AgentsTuner, MlpPointwiseCappedBySizeHint) {
  const json kernel = load_kernel("mlp_block.artifact.json", "pointwise");
  const json current = {{"XBLOCK", 1024}, {"num_warps", 4}, {"num_stages", 1}};
  const auto configs = tuner_space(kernel, current, 1000);
  ASSERT_FALSE(configs.empty());
  for (const json& c : configs) {
    const int x = c["XBLOCK"], w = c["num_warps"];
    EXPECT_GE(x, 128);
    EXPECT_LE(x, 4096);
    EXPECT_LE(w, std::max(1, x / 32)) << c.dump();
    EXPECT_NE(c, current);
  }
  json small = kernel;
  small["size_hints"]["x"] = 300;  // next_pow2 = 512
  for (const json& c : tuner_space(small, current, 1000)) EXPECT_LE(c["XBLOCK"].get<int>(), 512) << c.dump();
}

TEST(AgentsTuner, MaxConfigsRespectedAndDeterministic) {
  const json kernel = load_kernel("softmax.artifact.json", "reduction");
  const auto all = tuner_space(kernel, kSoftmaxCurrent, 1000);
  const auto five = tuner_space(kernel, kSoftmaxCurrent, 5);
  ASSERT_EQ(five.size(), 5u);
  for (std::size_t i = 0; i < five.size(); ++i) EXPECT_EQ(five[i], all[i]);
  EXPECT_EQ(tuner_space(kernel, kSoftmaxCurrent, 1000), all);
  EXPECT_TRUE(tuner_space(kernel, kSoftmaxCurrent, 0).empty());
}

TEST(AgentsTuner, TwoDimensionalPointwise) {
  const json kernel = {{"kind", "pointwise"}, {"constexprs", {"YBLOCK", "XBLOCK"}},
                       {"size_hints", {{"y", 1024}, {"x", 1024}}}, {"fixed_constexprs", json::object()}};
  const json current = {{"YBLOCK", 64}, {"XBLOCK", 64}, {"num_warps", 4}, {"num_stages", 1}};
  const auto configs = tuner_space(kernel, current, 1000);
  ASSERT_FALSE(configs.empty());
  for (const json& c : configs) {
    const int x = c["XBLOCK"], y = c["YBLOCK"];
    EXPECT_GE(x * y, 256);
    EXPECT_LE(x * y, 4096);
    EXPECT_TRUE(std::set<int>({2, 4, 8}).count(c["num_warps"].get<int>()));
  }
}

TEST(AgentsTuner, BlocksOfAnUnmaskedDimensionDivideItsCount) {
  // Inductor fixed xmask to all True for 3 * 1024 elements (every block it uses divides that):
  // a block of 2048 or 4096 would leave a partial last program running past the end
  json kernel = {{"kind", "pointwise"}, {"constexprs", {"XBLOCK"}}, {"size_hints", {{"x", 4096}}},
                 {"fixed_constexprs", json::object()}};
  const json current = {{"XBLOCK", 256}, {"num_warps", 4}, {"num_stages", 1}};
  std::set<int> free_blocks, unmasked_blocks;
  for (const json& c : tuner_space(kernel, current, 1000)) free_blocks.insert(c["XBLOCK"].get<int>());
  kernel["unmasked_numel"] = {{"XBLOCK", 3 * 1024}};
  for (const json& c : tuner_space(kernel, current, 1000)) unmasked_blocks.insert(c["XBLOCK"].get<int>());
  EXPECT_TRUE(free_blocks.count(2048) && free_blocks.count(4096));
  EXPECT_EQ(unmasked_blocks, (std::set<int>{128, 256, 512, 1024}));
}

TEST(AgentsTuner, InterleavedRowsGetProgramsOfAdjacentRowsThatFillLines) {
  // a group norm over channels-last data (tests/fixtures/inductor/survey-h100/level1__43_*): each row's 8
  // channels of a pixel (32 bytes), then the next row's; one-row programs read a quarter of each line
  json kernel = {{"kind", "reduction"}, {"constexprs", {"XBLOCK", "R0_BLOCK"}},
                 {"size_hints", {{"x", 1024}, {"r0_", 524288}}}, {"fixed_constexprs", json::object()}};
  const json current = {{"XBLOCK", 1}, {"R0_BLOCK", 2048}, {"num_warps", 16}, {"num_stages", 1}};
  const auto plain = tuner_space(kernel, current, 8);
  EXPECT_LT(plain[0]["XBLOCK"].get<int>() * 32, 128) << plain[0].dump();  // nearest: still one row
  kernel["row_run_bytes"] = 32;
  const auto hinted = tuner_space(kernel, current, 8);
  ASSERT_EQ(hinted.size(), 8u);
  for (int i = 0; i < 4; ++i) EXPECT_GE(hinted[i]["XBLOCK"].get<int>() * 32, 128) << hinted[i].dump();
  // the other half as ranked without the hint, never a config twice
  std::set<std::string> seen;
  for (const json& c : hinted) EXPECT_TRUE(seen.insert(c.dump()).second) << c.dump();
  EXPECT_EQ(hinted[4], plain[0]);
  // rows that fill lines already, or another kind of kernel: the order is the plain one
  kernel["row_run_bytes"] = 128;
  EXPECT_EQ(tuner_space(kernel, current, 8), plain);
}

TEST(AgentsTuner, UnsupportedKernelsYieldNothing) {
  const json current = {{"XBLOCK", 1}, {"num_warps", 4}, {"num_stages", 1}};
  EXPECT_TRUE(tuner_space({{"kind", "template"}, {"constexprs", {"XBLOCK"}}}, current, 10).empty());
  EXPECT_TRUE(tuner_space({{"kind", "reduction"}, {"constexprs", {"XBLOCK", "R0_BLOCK", "R1_BLOCK"}}}, current, 10).empty());
  EXPECT_TRUE(tuner_space({{"kind", "persistent_reduction"}, {"constexprs", {"XBLOCK"}},
                           {"fixed_constexprs", json::object()}}, current, 10).empty());
  EXPECT_TRUE(tuner_space(json(), current, 10).empty());
}

// A standalone kernel as the worker describes examples/triton/softmax.py (no loop; the launcher
// passes BLOCK and num_warps; num_stages is Triton's default).
const json kStandaloneSoftmax = {{"kind", "triton_jit"}, {"constexprs", {"BLOCK"}}, {"num_loops", 0}};

TEST(AgentsTuner, StandaloneKernelWithoutLoopsTunesOnlyWarps) {
  const json current = {{"BLOCK", 256}, {"num_warps", 4}, {"num_stages", 3}};
  const auto configs = tuner_space(kStandaloneSoftmax, current, 1000);
  std::vector<int> warps;
  for (const json& c : configs) {
    ASSERT_EQ(c.size(), 2u) << c.dump();  // never a block size: those are the launcher's
    EXPECT_EQ(c["num_stages"], 3) << c.dump();  // nothing to pipeline
    warps.push_back(c["num_warps"]);
  }
  // 256 elements: at most 8 warps of 32 threads; nearest first
  EXPECT_EQ(warps, (std::vector<int>{2, 8, 1}));
}

TEST(AgentsTuner, StandaloneKernelWithLoopsTunesStagesToo) {
  json kernel = kStandaloneSoftmax;
  kernel["num_loops"] = 1;
  kernel["constexprs"] = {"BLOCK_M", "BLOCK_N", "GROUP"};
  const json current = {{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"GROUP", 3}, {"num_warps", 4}, {"num_stages", 3}};
  const auto configs = tuner_space(kernel, current, 1000);
  std::set<std::pair<int, int>> points;
  for (const json& c : configs) {
    ASSERT_EQ(c.size(), 2u) << c.dump();
    points.insert({c["num_warps"].get<int>(), c["num_stages"].get<int>()});
  }
  EXPECT_EQ(points.size(), 6u * 4u - 1u);  // 1..32 warps (a 4096-element tile) x 1..4 stages, less the current
  EXPECT_FALSE(points.count({4, 3}));
  EXPECT_TRUE(points.count({32, 1}) && points.count({1, 4}));
  EXPECT_EQ(changed_params(configs[0], current), 1) << configs[0].dump();
  EXPECT_EQ(tuner_space(kernel, current, 5).size(), 5u);
  // loops not counted (-1, absent): stages are tuned as well
  kernel.erase("num_loops");
  EXPECT_EQ(tuner_space(kernel, current, 1000).size(), configs.size());
}

TEST(AgentsTuner, StandaloneKernelWithUnknownTileTriesEveryWarpCount) {
  const json current = {{"num_warps", 8}, {"num_stages", 1}};  // no block constexpr known
  const auto configs = tuner_space(kStandaloneSoftmax, current, 1000);
  ASSERT_EQ(configs.size(), 5u);
  for (const json& c : configs) EXPECT_EQ(c["num_stages"], 1);
}

}  // namespace
