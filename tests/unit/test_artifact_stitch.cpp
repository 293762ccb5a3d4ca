#include "artifact/stitch.hpp"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "util/fs.hpp"
#include "util/hash.hpp"

using namespace kernelopt::artifact;

namespace {

Module load(const std::string& name) {
  std::string base = std::string(KERNELOPT_SOURCE_DIR) + "/tests/fixtures/inductor/" + name;
  return module_from_json(nlohmann::json::parse(kernelopt::util::read_file(base + ".artifact.json")),
                          kernelopt::util::read_file(base + ".py"), 0, base + ".py");
}

// The full line of source containing byte offset pos (without its newline).
std::string line_at(const std::string& source, std::size_t pos) {
  std::size_t begin = source.rfind('\n', pos);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return source.substr(begin, source.find('\n', pos) - begin);
}

// The full text of 1-based line `line`.
std::string line_number(const std::string& source, int line) {
  std::size_t pos = 0;
  for (int i = 1; i < line; ++i) pos = source.find('\n', pos) + 1;
  return line_at(source, pos);
}

}  // namespace

TEST(ArtifactSplice, AppliesReplacementsGivenInAnyOrder) {
  std::string out = splice("abcdefgh", {{{6, 8}, "GH"}, {{0, 1}, "A"}, {{3, 3}, "+"}, {{4, 6}, ""}});
  EXPECT_EQ(out, "Abc+dGH");
  EXPECT_EQ(splice("abc", {}), "abc");
}

TEST(ArtifactSplice, OverlapThrows) {
  EXPECT_THROW(splice("abcdefgh", {{{4, 7}, "x"}, {{2, 5}, "y"}}), ArtifactError);
  EXPECT_NO_THROW(splice("abcdefgh", {{{4, 7}, "x"}, {{2, 4}, "y"}}));
}

TEST(ArtifactSplice, OutOfRangeThrows) {
  EXPECT_THROW(splice("abc", {{{2, 4}, "x"}}), ArtifactError);
  EXPECT_THROW(splice("abc", {{{2, 1}, "x"}}), ArtifactError);
}

TEST(ArtifactStitch, FixedConfigReplacesOnlyTheDecorator) {
  Module m = load("softmax");
  const Kernel& k = m.kernels.at(0);
  ASSERT_EQ(k.kind, "reduction");
  LaunchConfig cfg;
  cfg.blocks = {{"XBLOCK", 2}, {"R0_BLOCK", 1024}};
  cfg.num_warps = 8;
  std::string original = m.kernel_source(k);
  std::string out = kernel_source_with_config(m, k, cfg);

  EXPECT_NE(out.find("@triton_heuristics.fixed_config(config={'R0_BLOCK': 1024, 'XBLOCK': 2, "
                     "'num_warps': 8, 'num_stages': 1}, filename=__file__, triton_meta="),
            std::string::npos);
  EXPECT_NE(out.find(", inductor_meta=" + k.heuristic_args.at("inductor_meta") + ")\n@triton.jit\n"),
            std::string::npos);
  EXPECT_EQ(original.find("triton_heuristics.fixed_config("), std::string::npos);
  EXPECT_NE(original.find("triton_heuristics.reduction("), std::string::npos);
  EXPECT_EQ(out.find("triton_heuristics.reduction("), std::string::npos);

  std::size_t deco_begin = k.decorator.begin - k.source.begin;
  std::size_t after = original.size() - (k.decorator.end - k.source.begin);
  ASSERT_GE(out.size(), after);
  EXPECT_EQ(out.substr(0, deco_begin), original.substr(0, deco_begin));
  std::string tail = original.substr(original.size() - after);
  EXPECT_TRUE(tail.starts_with("\n@triton.jit\ndef " + k.name)) << tail.substr(0, 60);
  EXPECT_EQ(out.substr(out.size() - after), tail);
}

TEST(ArtifactStitch, FixedConfigNeedsExactlyTheKernelsConstexprs) {
  Module m = load("softmax_small");  // persistent: R0_BLOCK is fixed in the body
  const Kernel& k = m.kernels.at(0);
  LaunchConfig cfg;
  cfg.blocks = {{"XBLOCK", 2}, {"R0_BLOCK", 1024}};
  EXPECT_THROW(kernel_source_with_config(m, k, cfg), ArtifactError);
  cfg.blocks.erase("R0_BLOCK");
  EXPECT_NO_THROW(kernel_source_with_config(m, k, cfg));
  cfg.blocks.clear();
  EXPECT_THROW(kernel_source_with_config(m, k, cfg), ArtifactError);
}

TEST(ArtifactStitch, FixedConfigNeedsTheMetaArguments) {
  Module m = load("softmax_small");
  Kernel k = m.kernels.at(0);
  LaunchConfig cfg;
  cfg.blocks = {{"XBLOCK", 2}};
  k.heuristic_args.erase("inductor_meta");
  EXPECT_THROW(kernel_source_with_config(m, k, cfg), ArtifactError);
  k = m.kernels.at(0);
  k.heuristic_args.erase("triton_meta");
  EXPECT_THROW(kernel_source_with_config(m, k, cfg), ArtifactError);
}

TEST(ArtifactStitch, ReplacingOneKernelKeepsEveryOtherByte) {
  Module m = load("mlp_block");
  ASSERT_EQ(m.kernels.size(), 3u);
  const Kernel& target = m.kernels[1];
  LaunchConfig cfg;
  cfg.blocks = {{"XBLOCK", 1024}};
  std::string replacement = kernel_source_with_config(m, target, cfg);
  ASSERT_NE(replacement, m.kernel_source(target));
  std::string out = stitch_kernels(m, {{target.name, replacement}});

  std::string prefix = m.source.substr(0, target.source.begin);
  std::string suffix = m.source.substr(target.source.end);
  ASSERT_EQ(out.size(), prefix.size() + replacement.size() + suffix.size());
  EXPECT_EQ(out.substr(0, prefix.size()), prefix);
  EXPECT_EQ(out.substr(prefix.size(), replacement.size()), replacement);
  EXPECT_EQ(out.substr(out.size() - suffix.size()), suffix);

  std::ptrdiff_t shift = static_cast<std::ptrdiff_t>(replacement.size()) -
                         static_cast<std::ptrdiff_t>(target.source.size());
  for (const Kernel& k : m.kernels) {
    if (k.name == target.name) continue;
    std::size_t begin = k.source.begin > target.source.begin ? k.source.begin + shift : k.source.begin;
    EXPECT_EQ(out.substr(begin, k.source.size()), m.kernel_source(k)) << k.name;
  }
  ASSERT_EQ(m.vendor_calls.size(), 2u);
  for (const VendorCall& v : m.vendor_calls) {
    std::string line = line_number(m.source, v.line);
    ASSERT_NE(line.find("extern_kernels.mm("), std::string::npos) << line;
    EXPECT_NE(out.find(line + "\n"), std::string::npos) << line;
  }
}

TEST(ArtifactStitch, EmptyMapAndIdentityReturnTheOriginal) {
  Module m = load("mlp_block_small");
  EXPECT_EQ(stitch_kernels(m, {}), m.source);
  std::map<std::string, std::string> same;
  for (const Kernel& k : m.kernels) same[k.name] = m.kernel_source(k);
  EXPECT_EQ(stitch_kernels(m, same), m.source);
}

TEST(ArtifactStitch, RejectsTextThatWouldBreakTheLiteral) {
  Module m = load("mlp_block_small");
  const std::string name = m.kernels[0].name;
  const std::string body = m.kernel_source(m.kernels[0]);
  EXPECT_NO_THROW(stitch_kernels(m, {{name, body + "# ok\n"}}));
  EXPECT_THROW(stitch_kernels(m, {{name, body + "x = '''\n"}}), ArtifactError);
  EXPECT_THROW(stitch_kernels(m, {{name, body + "x = \"\"\"\n"}}), ArtifactError);
  EXPECT_THROW(stitch_kernels(m, {{name, body + "x = '\\n'\n"}}), ArtifactError);
  EXPECT_THROW(stitch_kernels(m, {{name, body + "x = ''"}}), ArtifactError);
  EXPECT_THROW(stitch_kernels(m, {{name, body + std::string(1, '\0')}}), ArtifactError);
  EXPECT_THROW(stitch_kernels(m, {{"triton_not_here", body}}), ArtifactError);
}

TEST(ArtifactStitch, GridBecomesAFixedGridInInductorMeta) {
  Module m = load("softmax");
  const Kernel& k = m.kernels.at(0);
  LaunchConfig cfg;
  cfg.blocks = {{"XBLOCK", 4}, {"R0_BLOCK", 1024}};
  std::string out = kernel_source_with_config(m, k, cfg, {"(xnumel + 3) // 4"});
  EXPECT_NE(out.find("inductor_meta={**" + k.heuristic_args.at("inductor_meta") +
                     ", 'grid_type': 'FixedGrid', 'fixed_grid': ['(xnumel + 3) // 4', '1', '1']}"),
            std::string::npos)
      << out;
  // written inside a Python string literal: a quote or a call could escape it
  EXPECT_THROW(kernel_source_with_config(m, k, cfg, {"xnumel'] + __import__('os')"}), ArtifactError);
  EXPECT_THROW(kernel_source_with_config(m, k, cfg, {"1", "1", "1", "1"}), ArtifactError);
}

TEST(ArtifactStitch, InductorCandidateKeepsImportsAndPutsFixedConfigOnTheKernel) {
  Module m = load("softmax");
  const Kernel& k = m.kernels.at(0);
  LaunchConfig cfg;
  cfg.blocks = {{"XBLOCK", 1}, {"R0_BLOCK", 2048}};
  cfg.num_warps = 8;
  const std::string code =
      "@triton.jit\n"
      "def helper(x):\n"
      "    return x * 2\n"
      "\n"
      "@triton.jit\n"
      "def " + k.name + "(in_ptr0, out_ptr2, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):\n"
      "    pass\n"
      "trailing = 1\n";
  std::string out = inductor_candidate(m, k, code, FunctionLines{5, 6, 7}, cfg);
  const std::string original = m.kernel_source(k);
  const std::size_t decorator_at = k.decorator.begin - k.source.begin - 1;
  EXPECT_EQ(out.substr(0, decorator_at), original.substr(0, decorator_at));  // the imports, byte for byte
  const std::size_t helper = out.find("def helper(x)");
  const std::size_t fixed = out.find("@triton_heuristics.fixed_config(config={'R0_BLOCK': 2048, 'XBLOCK': 1, 'num_warps': 8");
  const std::size_t jit = out.find("@triton.jit\ndef " + k.name);
  ASSERT_NE(helper, std::string::npos);
  ASSERT_NE(fixed, std::string::npos) << out;
  ASSERT_NE(jit, std::string::npos);
  EXPECT_LT(helper, fixed);
  EXPECT_LT(fixed, jit);
  EXPECT_EQ(out.find("trailing"), std::string::npos);  // nothing after the kernel function is kept
  EXPECT_THROW(inductor_candidate(m, k, code, FunctionLines{5, 6, 40}, cfg), ArtifactError);
  // and it stitches into the module's literal
  EXPECT_NO_THROW(stitch_kernels(m, {{k.name, out}}));
}

TEST(ArtifactStitch, StandaloneCandidateKeepsTheUsersDecoratorsAndEverythingElse) {
  const std::string source =
      "import triton\nimport triton.language as tl\n\n"
      "@triton.autotune(configs=[triton.Config({}, num_warps=4)], key=['n'])\n"
      "@triton.jit\n"
      "def k(x_ptr, n, BLOCK: tl.constexpr):\n"
      "    tl.store(x_ptr, 1.0)\n"
      "\n\ndef launch(x):\n    k[(1,)](x, x.numel(), BLOCK=128)\n    return x\n";
  const std::size_t begin = source.find("@triton.autotune"), def = source.find("def k("),
                    end = source.find("1.0)") + 4;
  nlohmann::json artifact = {
      {"source_hash", kernelopt::util::sha256_hex(source)},
      {"input_kind", "triton"},
      {"kernels",
       {{{"name", "k"},
         {"kind", "triton_jit"},
         {"source_hash", kernelopt::util::sha256_hex(source.substr(begin, end - begin))},
         {"source_span", {begin, end}},
         {"decorator_span", {source.find("triton.jit"), source.find("triton.jit") + 10}},
         {"function_span", {def, end}},
         {"params", {"x_ptr", "n"}},
         {"constexprs", {"BLOCK"}}}}}};
  Module m = module_from_json(artifact, source, 0, "k.py");
  EXPECT_EQ(m.input_kind, "triton");
  const std::string code = "@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr):\n    tl.store(x_ptr, 2.0)\n";
  std::string text = standalone_candidate(m, m.kernels[0], code, FunctionLines{1, 2, 3});
  std::string out = stitch_kernels(m, {{"k", text}});
  std::string expected = source;
  expected.replace(expected.find("1.0)"), 4, "2.0)");
  EXPECT_EQ(out, expected);  // the autotune decorator, the launcher, every other byte: as the user wrote them
  // a helper function goes before the user's decorators
  const std::string with_helper = "@triton.jit\ndef h(v):\n    return v\n\n" + code;
  std::string text2 = standalone_candidate(m, m.kernels[0], with_helper, FunctionLines{5, 6, 7});
  EXPECT_LT(text2.find("def h(v)"), text2.find("@triton.autotune"));
}

namespace {

// A standalone file with one kernel decorated by `decorators` (source lines, outermost first) and
// a launcher that passes num_warps itself; the artifact as the worker's parser describes it.
Module standalone_module(const std::string& decorators, const std::vector<std::string>& names) {
  const std::string source =
      "import triton\nimport triton.language as tl\n\n" + decorators +
      "def k(x_ptr, n, BLOCK: tl.constexpr):\n"
      "    tl.store(x_ptr, 1.0)\n"
      "\n\ndef launch(x):\n    k[(1,)](x, x.numel(), BLOCK=128, num_warps=8)\n    return x\n";
  const std::size_t begin = source.find('@'), def = source.find("def k("), end = source.find("1.0)") + 4;
  const std::size_t jit = source.rfind("jit", def);
  nlohmann::json artifact = {
      {"source_hash", kernelopt::util::sha256_hex(source)},
      {"input_kind", "triton"},
      {"kernels",
       {{{"name", "k"},
         {"kind", "triton_jit"},
         {"source_hash", kernelopt::util::sha256_hex(source.substr(begin, end - begin))},
         {"source_span", {begin, end}},
         {"decorator_span", {jit, jit + 3}},
         {"function_span", {def, end}},
         {"decorators", names},
         {"num_loops", 0},
         {"params", {"x_ptr", "n"}},
         {"constexprs", {"BLOCK"}}}}}};
  return module_from_json(artifact, source, 0, "k.py");
}

}  // namespace

TEST(ArtifactStitch, StandaloneConfigPinsWarpsAndStagesAboveTheUsersKernel) {
  Module m = standalone_module("@triton.jit\n", {"triton.jit"});
  const Kernel& k = m.kernels.at(0);
  EXPECT_EQ(k.decorators, std::vector<std::string>{"triton.jit"});
  EXPECT_EQ(k.num_loops, 0);
  EXPECT_EQ(standalone_untunable(k), "");
  LaunchConfig cfg;
  cfg.num_warps = 2;
  cfg.num_stages = 1;
  const std::string text = standalone_with_config(m, k, cfg);
  EXPECT_EQ(text, "@triton.heuristics(values={'num_warps': lambda args: 2, 'num_stages': lambda args: 1})\n" +
                      m.kernel_source(k));
  const std::string out = stitch_kernels(m, {{"k", text}});
  // every byte of the user's file stays, the launcher included; one line is added above the kernel
  std::string expected = m.source;
  expected.insert(k.source.begin, text.substr(0, text.find('\n') + 1));
  EXPECT_EQ(out, expected);
  // the artifact JSON keeps what the tuner reads
  const auto j = to_json(m);
  EXPECT_EQ(j["kernels"][0]["num_loops"], 0);
  EXPECT_EQ(j["kernels"][0]["decorators"], nlohmann::json({"triton.jit"}));
}

TEST(ArtifactStitch, StandaloneConfigUsesTheKernelsOwnModuleName) {
  Module m = standalone_module("@tr.jit\n", {"tr.jit"});
  LaunchConfig cfg;
  cfg.num_warps = 16;
  cfg.num_stages = 4;
  EXPECT_EQ(standalone_with_config(m, m.kernels[0], cfg).substr(0, 19), "@tr.heuristics(valu");
}

TEST(ArtifactStitch, StandaloneConfigRefusesKernelsWhoseConfigTheUserChooses) {
  const Module autotuned = standalone_module(
      "@triton.autotune(configs=[triton.Config({}, num_warps=4)], key=['n'])\n@triton.jit\n",
      {"triton.autotune", "triton.jit"});
  EXPECT_NE(standalone_untunable(autotuned.kernels[0]).find("@triton.autotune"), std::string::npos);
  const Module heuristic = standalone_module("@triton.heuristics(values={'BLOCK': lambda a: 64})\n@triton.jit\n",
                                             {"triton.heuristics", "triton.jit"});
  EXPECT_NE(standalone_untunable(heuristic.kernels[0]).find("@triton.heuristics"), std::string::npos);
  const Module bare = standalone_module("@jit\n", {"jit"});
  EXPECT_NE(standalone_untunable(bare.kernels[0]).find("not @<module>.jit"), std::string::npos);
  const Module other = standalone_module("@my_decorator\n@triton.jit\n", {"my_decorator", "triton.jit"});
  EXPECT_NE(standalone_untunable(other.kernels[0]).find("@my_decorator"), std::string::npos);
  LaunchConfig cfg;
  for (const Module* m : {&autotuned, &heuristic, &bare, &other}) {
    EXPECT_THROW(standalone_with_config(*m, m->kernels[0], cfg), ArtifactError);
  }
}

TEST(ArtifactStitch, StandaloneConfigRefusesBlocksAndOutOfRangeValues) {
  Module m = standalone_module("@triton.jit\n", {"triton.jit"});
  LaunchConfig blocks;
  blocks.blocks = {{"BLOCK", 256}};  // the launcher's choice, never the engine's
  EXPECT_THROW(standalone_with_config(m, m.kernels[0], blocks), ArtifactError);
  for (int w : {0, 3, 64}) {
    LaunchConfig cfg;
    cfg.num_warps = w;
    EXPECT_THROW(standalone_with_config(m, m.kernels[0], cfg), ArtifactError) << w;
  }
  for (int s : {0, 9}) {
    LaunchConfig cfg;
    cfg.num_stages = s;
    EXPECT_THROW(standalone_with_config(m, m.kernels[0], cfg), ArtifactError) << s;
  }
}
