// What each kind of input decides in a kernel's search (engine/input_kind.hpp), chosen by name once.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "engine/candidate.hpp"
#include "engine/input_kind.hpp"
#include "engine/optimize.hpp"

using nlohmann::json;
using namespace kernelopt;

namespace {

const json kTunable = {{"XBLOCK", 1}, {"R0_BLOCK", 2048}, {"num_warps", 16}, {"num_stages", 1}};

store::LibraryEntry entry_with_code(const std::string& code) {
  store::LibraryEntry e;
  e.kernel_name = "k_old";
  e.source = "def k_old(x):  # as stitched\n";
  e.code = code;
  e.config = {{"num_warps", 8}, {"num_stages", 2}};
  return e;
}

}  // namespace

TEST(EngineInputKind, ChosenByNameAndAnUnknownNameIsAUserError) {
  for (const char* name : {"module", "triton", "helion"}) EXPECT_EQ(engine::input_kind_named(name).name(), name);
  try {
    engine::input_kind_named("trition");
    FAIL() << "no error";
  } catch (const engine::UserError& e) {
    EXPECT_STREQ(e.what(), "unknown input kind 'trition' (want module, triton or helion)");
  }
}

TEST(EngineInputKind, AModulesKernelTakesTheWholeConfigAndItsAnswersMeta) {
  const engine::InputKind& kind = engine::input_kind_named("module");
  EXPECT_EQ(kind.library_kind(), "inductor");
  EXPECT_EQ(kind.own_config(kTunable), kTunable);
  json config = kind.answer_config(kTunable, {{"R0_BLOCK", 512}});
  EXPECT_EQ(config["R0_BLOCK"], 512);
  EXPECT_EQ(config["num_warps"], 16);
  EXPECT_TRUE(kind.rewrites_and_tunes_code());
  EXPECT_EQ(kind.untunable(artifact::Kernel{}), "");
  engine::Candidate c;
  c.kernel_source = "stitched text";
  c.code = "answer";
  EXPECT_EQ(kind.static_text(c, "original").text, "stitched text");  // what runs is what gate 1 reads
  EXPECT_EQ(kind.static_text(c, "original").engine_line, "");
  engine::Candidate from_library;
  kind.from_library(entry_with_code("def k_old(x): pass\n"), "k_new", from_library);
  EXPECT_EQ(from_library.kernel_source, "def k_new(x):  # as stitched\n");  // used as is, under this kernel's name
  EXPECT_EQ(from_library.config, entry_with_code("").config);
}

TEST(EngineInputKind, AStandaloneKernelKeepsItsLaunchersBlockSizesAndGrid) {
  for (const char* name : {"triton", "helion"}) {  // a Helion run optimizes the Triton file it exported
    const engine::InputKind& kind = engine::input_kind_named(name);
    EXPECT_EQ(kind.library_kind(), "triton") << name;
    EXPECT_EQ(kind.own_config(kTunable), json({{"num_warps", 16}, {"num_stages", 1}}));
    EXPECT_TRUE(kind.answer_config(kTunable, {{"BLOCK", 64}}).is_null());  // the launcher keeps its own
    EXPECT_FALSE(kind.rewrites_and_tunes_code());
    agents::KernelTask task;
    task.constexprs = {"BLOCK"};
    task.current_config = {{"BLOCK", 128}, {"num_warps", 4}, {"num_stages", 1}};
    const agents::KernelTask asked = kind.tuner_task(task);
    EXPECT_TRUE(asked.constexprs.empty());
    EXPECT_EQ(asked.current_config, json({{"num_warps", 4}, {"num_stages", 1}}));
    // gate 1 reads the model's code, or for a launch config the user's kernel (the engine's line is evidence)
    engine::Candidate config;
    config.kernel_source = "@triton.heuristics(values={'num_warps': lambda args: 2})\n@triton.jit\ndef k(): pass\n";
    const engine::StaticText read = kind.static_text(config, "@triton.jit\ndef k(): pass\n");
    EXPECT_EQ(read.text, "@triton.jit\ndef k(): pass\n");
    EXPECT_EQ(read.engine_line, "@triton.heuristics(values={'num_warps': lambda args: 2})");
    engine::Candidate written;
    written.code = "@triton.jit\ndef k(): return\n";
    EXPECT_EQ(kind.static_text(written, "original").text, written.code);
    // a library entry is rebuilt from its code; a config entry is a config of the user's kernel
    engine::Candidate with_code, with_config;
    kind.from_library(entry_with_code("def k_old(x): pass\n"), "k_new", with_code);
    EXPECT_EQ(with_code.code, "def k_new(x): pass\n");
    EXPECT_TRUE(with_code.kernel_source.empty());
    EXPECT_TRUE(with_code.config.is_null());
    kind.from_library(entry_with_code(""), "k_new", with_config);
    EXPECT_EQ(with_config.config, entry_with_code("").config);
  }
}
