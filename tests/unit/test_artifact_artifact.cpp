#include "artifact/artifact.hpp"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "util/fs.hpp"
#include "util/hash.hpp"

using namespace kernelopt::artifact;
using nlohmann::json;

namespace {

const char* const kFixtures[] = {"layernorm", "layernorm_small", "mlp_block",
                                 "mlp_block_small", "softmax", "softmax_small"};

std::string fixture_path(const std::string& name, const char* ext) {
  return std::string(KERNELOPT_SOURCE_DIR) + "/tests/fixtures/inductor/" + name + ext;
}
json fixture_json(const std::string& name) {
  return json::parse(kernelopt::util::read_file(fixture_path(name, ".artifact.json")));
}
std::string fixture_source(const std::string& name) {
  return kernelopt::util::read_file(fixture_path(name, ".py"));
}
Module load(const std::string& name) {
  return module_from_json(fixture_json(name), fixture_source(name), 0, fixture_path(name, ".py"));
}

// Expects module_from_json(artifact, source) to throw ArtifactError whose message contains needle.
void expect_rejected(const json& artifact, const std::string& source, const std::string& needle) {
  try {
    module_from_json(artifact, source, 0, "x.py");
    FAIL() << "accepted; expected an error mentioning " << needle;
  } catch (const ArtifactError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(ArtifactModule, AllFixturesLoadAndSpansHoldTheirKernels) {
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    Module m = load(name);
    EXPECT_EQ(m.source_hash, kernelopt::util::sha256_hex(m.source));
    ASSERT_FALSE(m.kernels.empty());
    ASSERT_FALSE(m.launches.empty());
    for (const Kernel& k : m.kernels) {
      EXPECT_EQ(kernelopt::util::sha256_hex(m.kernel_source(k)), k.source_hash);
      EXPECT_EQ(m.source.compare(k.function.begin, 4, "def "), 0) << k.name;
      EXPECT_EQ(m.source.compare(k.decorator.begin, 18, "triton_heuristics."), 0) << k.name;
      EXPECT_FALSE(m.launches_of(k.name).empty()) << k.name;
    }
  }
}

TEST(ArtifactModule, MlpBlockHasThreeKernelsTwoMatmulsInOrder) {
  Module m = load("mlp_block");
  ASSERT_EQ(m.kernels.size(), 3u);
  ASSERT_EQ(m.vendor_calls.size(), 2u);
  ASSERT_EQ(m.launches.size(), 3u);
  for (const VendorCall& v : m.vendor_calls) EXPECT_EQ(v.op, "extern_kernels.mm");
  EXPECT_EQ(m.vendor_calls[0].kwargs.at("out"), "buf4");
  // launch, mm, launch, mm, launch
  for (std::size_t i = 0; i < m.launches.size(); ++i) {
    EXPECT_EQ(m.launches[i].kernel, m.kernels[i].name);
    EXPECT_EQ(m.launches[i].order, static_cast<int>(2 * i));
    if (i > 0) {
      EXPECT_GT(m.launches[i].line, m.launches[i - 1].line);
    }
  }
  EXPECT_EQ(m.vendor_calls[0].order, 1);
  EXPECT_EQ(m.vendor_calls[1].order, 3);
  EXPECT_EQ(m.kernels[0].kind, "persistent_reduction");
  EXPECT_EQ(m.kernels[0].reduction_hint, "INNER");
  EXPECT_EQ(m.kernels[1].reduction_hint, "");
  EXPECT_EQ(m.kernels[0].fixed_constexprs.at("R0_BLOCK"), 1024);
  EXPECT_EQ(m.launches[0].numels, (std::vector<std::int64_t>{8192, 1024}));
  EXPECT_EQ(m.launches[0].buffers[3], "buf3");
  EXPECT_EQ(m.launches[0].buffers[4], "");  // null in the JSON: an integer argument
}

TEST(ArtifactModule, FindKernelAndKernelSource) {
  Module m = load("mlp_block");
  const Kernel* k = m.find_kernel("triton_poi_fused_addmm_gelu_1");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->kind, "pointwise");
  EXPECT_EQ(m.find_kernel("triton_no_such_kernel"), nullptr);
  EXPECT_TRUE(m.kernel_source(*k).starts_with("\nimport triton")) << m.kernel_source(*k).substr(0, 40);
  ASSERT_EQ(m.launches_of(k->name).size(), 1u);
  EXPECT_EQ(m.launches_of(k->name)[0]->args.back(), "33554432");
}

TEST(ArtifactModule, BufferBytesUseDtypeSize) {
  Module m = load("mlp_block");
  const Buffer& buf4 = m.buffers.at("buf4");
  EXPECT_EQ(buf4.numel(), 8192LL * 4096);
  EXPECT_EQ(buf4.bytes(), 8192LL * 4096 * 4);
  EXPECT_EQ(buf4.device, "cuda");
  const Buffer& weight = m.buffers.at("arg3_1");  // dtype missing in the JSON
  EXPECT_EQ(weight.dtype, "");
  EXPECT_THROW(weight.bytes(), ArtifactError);
  Buffer half{{3, 5}, {5, 1}, "bfloat16", "alloc", "cuda"};
  EXPECT_EQ(half.bytes(), 30);
  half.dtype = "float7";
  EXPECT_THROW(half.bytes(), ArtifactError);
}

TEST(ArtifactModule, TamperedSourceIsRejectedNamingTheHash) {
  // A byte in the wrapper's header comment, outside every kernel span.
  json j = fixture_json("mlp_block_small");
  std::string source = fixture_source("mlp_block_small");
  ASSERT_LT(2u, j["kernels"][0]["source_span"][0].get<std::size_t>());
  source[2] ^= 0x01;
  expect_rejected(j, source, "source_hash " + j["source_hash"].get<std::string>() + " does not match");
}

TEST(ArtifactModule, OutOfRangeSpanIsRejected) {
  json j = fixture_json("mlp_block_small");
  std::string source = fixture_source("mlp_block_small");
  j["kernels"][1]["function_span"][1] = source.size() + 1;
  expect_rejected(j, source, "out of range");
}

TEST(ArtifactModule, DecoratorOutsideKernelSourceIsRejected) {
  json j = fixture_json("mlp_block_small");
  j["kernels"][0]["decorator_span"][0] = 10;
  expect_rejected(j, fixture_source("mlp_block_small"), "decorator_span not inside");
}

TEST(ArtifactModule, ShiftedSourceSpanFailsTheKernelHash) {
  json j = fixture_json("softmax_small");
  j["kernels"][0]["source_span"][0] = j["kernels"][0]["source_span"][0].get<std::size_t>() - 1;
  expect_rejected(j, fixture_source("softmax_small"), "source_hash does not match");
}

TEST(ArtifactModule, LaunchOfUnknownKernelIsRejected) {
  json j = fixture_json("mlp_block_small");
  j["launches"][2]["kernel"] = "triton_missing";
  expect_rejected(j, fixture_source("mlp_block_small"), "unknown kernel triton_missing");
}

TEST(ArtifactModule, WrongFieldTypeIsAnArtifactError) {
  json j = fixture_json("mlp_block_small");
  j["kernels"][0]["params"] = 5;
  expect_rejected(j, fixture_source("mlp_block_small"), "'params' has the wrong type");
}

TEST(ArtifactModule, RowRunBytesIsReadAndWrittenBackWhereThereIsOne) {
  json original = fixture_json("softmax");
  original["kernels"][0]["row_run_bytes"] = nullptr;  // the parser's null: contiguous rows
  EXPECT_EQ(module_from_json(original, fixture_source("softmax"), 3, "p.py").kernels[0].row_run_bytes, 0);
  original["kernels"][0]["row_run_bytes"] = 32;
  const Module m = module_from_json(original, fixture_source("softmax"), 3, "p.py");
  EXPECT_EQ(m.kernels[0].row_run_bytes, 32);
  EXPECT_EQ(to_json(m)["kernels"][0]["row_run_bytes"], 32);  // the Tuner reads it from here
}

TEST(ArtifactModule, ToJsonReproducesTheParserOutputAndRoundTrips) {
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    json original = fixture_json(name);
    Module m = module_from_json(original, fixture_source(name), 3, "p.py");
    json out = to_json(m);
    EXPECT_EQ(out, original) << json::diff(original, out).dump();
    Module back = module_from_json(out, m.source, 3, "p.py");
    EXPECT_EQ(back, m);
  }
}
