// Tests for the four gates: verify/static_gate, correctness_gate, model_gate,
// performance_gate. Each gate: a passing case, then each rule failing alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/correctness_gate.hpp"
#include "verify/model_gate.hpp"
#include "verify/performance_gate.hpp"
#include "verify/static_gate.hpp"
#include "verify/verdict.hpp"

using namespace kernelopt::verify;
using nlohmann::json;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// ---------------------------------------------------------------- static gate

// The worker's analyze facts (python/kernelopt/artifact/static.py) for the real
// softmax reduction kernel in tests/fixtures/inductor/softmax.py.
const char* const kSoftmaxFacts = R"json({"parse_error": null,
 "imports": [{"module": "triton", "names": [], "line": 2}, {"module": "triton.language", "names": [], "line": 3},
  {"module": "torch._inductor.runtime", "names": ["triton_helpers", "triton_heuristics"], "line": 5},
  {"module": "torch._inductor.runtime.triton_helpers", "names": ["libdevice", "math"], "line": 6},
  {"module": "torch._inductor.runtime.hints", "names": ["AutotuneHint", "ReductionHint", "TileHint", "DeviceProperties"], "line": 7}],
 "toplevel": [{"kind": "Import", "line": 2, "text": "import triton"},
  {"kind": "Import", "line": 3, "text": "import triton.language as tl"},
  {"kind": "ImportFrom", "line": 5, "text": "from torch._inductor.runtime import triton_helpers, triton_heuristics"},
  {"kind": "ImportFrom", "line": 6, "text": "from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math"},
  {"kind": "ImportFrom", "line": 7, "text": "from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties"},
  {"kind": "Expr", "line": 8, "text": "triton_helpers.set_driver_to_gpu()"},
  {"kind": "FunctionDef", "line": 18, "text": "def triton_red_fused__softmax_exp_prepare_softmax_online_sub_0(in_ptr0, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):"}],
 "functions": [{"name": "triton_red_fused__softmax_exp_prepare_softmax_online_sub_0", "params": ["in_ptr0", "out_ptr2", "xnumel", "r0_numel"],
  "constexprs": ["XBLOCK", "R0_BLOCK"], "decorators": ["triton_heuristics.reduction", "triton.jit"], "line": 18}],
 "calls": [{"name": "triton_helpers.set_driver_to_gpu", "line": 8}, {"name": "triton_heuristics.reduction", "line": 10},
  {"name": "tl.full", "line": 29}, {"name": "tl.zeros", "line": 30}, {"name": "tl.range", "line": 31},
  {"name": "triton_helpers.online_softmax_reduce", "line": 47}, {"name": "tl.range", "line": 51},
  {"name": "tl.program_id", "line": 23}, {"name": "tl.full", "line": 25}, {"name": "tl.arange", "line": 26},
  {"name": "float", "line": 29}, {"name": "tl.load", "line": 37}, {"name": "tl.broadcast_to", "line": 38},
  {"name": "triton_helpers.online_softmax_combine", "line": 40}, {"name": "tl.where", "line": 44},
  {"name": "tl.where", "line": 45}, {"name": "tl.load", "line": 57}, {"name": "libdevice.exp", "line": 59},
  {"name": "tl.store", "line": 61}, {"name": "tl.arange", "line": 24}, {"name": "DeviceProperties", "line": 14},
  {"name": "set", "line": 15}],
 "names": ["DeviceProperties", "R0_BLOCK", "RBLOCK", "ReductionHint", "XBLOCK", "__file__", "_tmp2_max", "_tmp2_max_next",
  "_tmp2_sum", "_tmp2_sum_next", "float", "in_ptr0", "libdevice", "out_ptr2", "r0_1", "r0_base", "r0_index", "r0_mask",
  "r0_numel", "r0_offset", "rbase", "rindex", "rnumel", "roffset", "set", "tl", "tmp0", "tmp1", "tmp2", "tmp3", "tmp4",
  "tmp5", "tmp6", "tmp7", "triton", "triton_helpers", "triton_heuristics", "x0", "xindex", "xmask", "xnumel", "xoffset"],
 "stored_params": {"triton_red_fused__softmax_exp_prepare_softmax_online_sub_0": ["out_ptr2"]}})json";

const std::string kKernel = "triton_red_fused__softmax_exp_prepare_softmax_online_sub_0";

json original() { return json::parse(kSoftmaxFacts); }

// Fails the test unless the verdict failed with a reason containing `needle`.
void expect_rejected(const Verdict& v, const std::string& needle) {
  EXPECT_EQ(v.gate, "static");
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, needle)) << "reason: " << v.reason;
  ASSERT_TRUE(v.evidence["violations"].is_array());
  EXPECT_FALSE(v.evidence["violations"].empty());
}

TEST(VerifyStaticGate, OriginalAgainstItselfPasses) {
  const Verdict v = static_gate(original(), original());
  EXPECT_TRUE(v.passed) << v.reason;
  EXPECT_EQ(v.gate, "static");
  EXPECT_TRUE(v.evidence["violations"].empty());
  EXPECT_EQ(v.evidence["kernel"], kKernel);
}

TEST(VerifyStaticGate, LiteralAssignmentAndHelperFunctionPass) {
  json cand = original();
  cand["toplevel"].push_back({{"kind", "Assign"}, {"line", 9}, {"text", "EPS = 1e-5"}, {"literal", true}});
  cand["functions"].push_back({{"name", "helper"}, {"params", {"x"}}, {"constexprs", json::array()},
                               {"decorators", {"triton.jit"}}, {"line", 12}});
  cand["imports"].push_back({{"module", "triton.language.extra.cuda"}, {"names", {"libdevice"}}, {"line", 4}});
  const Verdict v = static_gate(cand, original());
  EXPECT_TRUE(v.passed) << v.reason;
}

TEST(VerifyStaticGate, OsImportRejectedNamingOs) {
  json cand = original();
  cand["imports"].push_back({{"module", "os"}, {"names", json::array()}, {"line", 3}});
  const Verdict v = static_gate(cand, original());
  expect_rejected(v, "import of os is not allowed (line 3)");
}

TEST(VerifyStaticGate, DisallowedFromImportNameRejected) {
  json cand = original();
  cand["imports"].push_back({{"module", "torch._inductor.runtime"}, {"names", {"triton_helpers", "compile_tasks"}}, {"line", 5}});
  expect_rejected(static_gate(cand, original()), "compile_tasks");
  json plain_torch = original();
  plain_torch["imports"].push_back({{"module", "torch._inductor.runtime"}, {"names", json::array()}, {"line", 5}});
  expect_rejected(static_gate(plain_torch, original()), "import of torch._inductor.runtime");
}

TEST(VerifyStaticGate, MissingStoreToOutputRejected) {
  json cand = original();
  cand["stored_params"][kKernel] = json::array();
  expect_rejected(static_gate(cand, original()), "never stores to out_ptr2");
}

TEST(VerifyStaticGate, RenamedParamRejected) {
  json cand = original();
  cand["functions"][0]["params"] = {"in_ptr0", "out_ptr0", "xnumel", "r0_numel"};
  cand["stored_params"][kKernel] = {"out_ptr0"};
  const Verdict v = static_gate(cand, original());
  expect_rejected(v, "params differ");
  EXPECT_TRUE(contains(v.reason, "out_ptr0")) << v.reason;
}

TEST(VerifyStaticGate, ReorderedConstexprsRejected) {
  json cand = original();
  cand["functions"][0]["constexprs"] = {"R0_BLOCK", "XBLOCK"};
  expect_rejected(static_gate(cand, original()), "constexprs differ");
}

TEST(VerifyStaticGate, MissingKernelRejected) {
  json cand = original();
  cand["functions"][0]["name"] = "my_kernel";
  expect_rejected(static_gate(cand, original()), "does not define kernel " + kKernel);
}

TEST(VerifyStaticGate, NonLiteralModuleAssignmentRejected) {
  json cand = original();
  cand["toplevel"].push_back({{"kind", "Assign"}, {"line", 9}, {"text", "buf = make_buffer()"}, {"literal", false}});
  expect_rejected(static_gate(cand, original()), "module-level assignment of a non-literal is not allowed (line 9)");
}

TEST(VerifyStaticGate, OtherModuleLevelCodeRejected) {
  json cand = original();
  cand["toplevel"].push_back({{"kind", "Expr"}, {"line", 9}, {"text", "print('hi')"}});
  expect_rejected(static_gate(cand, original()), "module-level Expr statement");
  json if_stmt = original();
  if_stmt["toplevel"].push_back({{"kind", "If"}, {"line", 9}, {"text", "if True:"}});
  expect_rejected(static_gate(if_stmt, original()), "module-level If statement");
}

TEST(VerifyStaticGate, TorchEmptyCallRejected) {
  json cand = original();
  cand["calls"].push_back({{"name", "torch.empty"}, {"line", 40}});
  expect_rejected(static_gate(cand, original()), "call to torch.empty is not allowed");
  json via_helper = original();
  via_helper["calls"].push_back({{"name", "triton_helpers.torch.cuda.Stream"}, {"line", 40}});
  expect_rejected(static_gate(via_helper, original()), "torch is off limits");
}

TEST(VerifyStaticGate, ExecRejected) {
  json cand = original();
  cand["names"].push_back("exec");
  cand["calls"].push_back({{"name", "exec"}, {"line", 41}});
  const Verdict v = static_gate(cand, original());
  expect_rejected(v, "use of exec is not allowed");
  EXPECT_EQ(v.evidence["violations"].size(), 1u);  // the name, not reported twice
}

TEST(VerifyStaticGate, DunderEscapeRejectedButFileAllowed) {
  json cand = original();
  cand["names"].push_back("__subclasses__");
  expect_rejected(static_gate(cand, original()), "use of __subclasses__");
  // Inductor's decorator passes filename=__file__; the original uses it and passes.
  const json names = original()["names"];
  ASSERT_NE(std::find(names.begin(), names.end(), "__file__"), names.end());
  EXPECT_TRUE(static_gate(original(), original()).passed);
}

TEST(VerifyStaticGate, InlineAsmRejectedUnderAnyAlias) {
  json cand = original();
  cand["calls"].push_back({{"name", "tl.inline_asm_elementwise"}, {"line", 42}});
  expect_rejected(static_gate(cand, original()), "tl.inline_asm_elementwise");
  json alias = original();
  alias["calls"].push_back({{"name", "language.inline_asm_elementwise"}, {"line", 42}});
  expect_rejected(static_gate(alias, original()), "language.inline_asm_elementwise");
}

TEST(VerifyStaticGate, DecoratorRulesEnforced) {
  json no_jit = original();
  no_jit["functions"][0]["decorators"] = {"triton_heuristics.reduction"};
  expect_rejected(static_gate(no_jit, original()), "must have @triton.jit as its last decorator");
  json jit_first = original();
  jit_first["functions"][0]["decorators"] = {"triton.jit", "triton_heuristics.reduction"};
  expect_rejected(static_gate(jit_first, original()), "last decorator");
  json foreign = original();
  foreign["functions"][0]["decorators"] = {"functools.cache", "triton.jit"};
  expect_rejected(static_gate(foreign, original()), "decorator @functools.cache");
  json two = original();
  two["functions"][0]["decorators"] = {"triton_heuristics.reduction", "triton_heuristics.pointwise", "triton.jit"};
  expect_rejected(static_gate(two, original()), "3 decorators");
  // The engine's launch-config line for standalone kernels (@triton.heuristics with lambdas) is never
  // judged by this gate; model-written code carrying it, or an autotuner, is rejected.
  for (const char* d : {"triton.heuristics", "triton.autotune"}) {
    json launch = original();
    launch["functions"][0]["decorators"] = {d, "triton.jit"};
    expect_rejected(static_gate(launch, original()), std::string("decorator @") + d);
  }
}

TEST(VerifyStaticGate, ParseErrorRejected) {
  const json cand = {{"parse_error", "SyntaxError: invalid syntax (line 4)"}};
  expect_rejected(static_gate(cand, original()), "SyntaxError: invalid syntax (line 4)");
}

TEST(VerifyStaticGate, EvidenceListsEveryViolationReasonTheFirst) {
  json cand = original();
  cand["imports"].push_back({{"module", "subprocess"}, {"names", json::array()}, {"line", 1}});
  cand["calls"].push_back({{"name", "os.system"}, {"line", 50}});
  cand["stored_params"][kKernel] = json::array();
  const Verdict v = static_gate(cand, original());
  expect_rejected(v, "import of subprocess");
  EXPECT_EQ(v.evidence["violations"].size(), 3u);
  EXPECT_EQ(v.evidence["violations"][1]["line"], 50);
  EXPECT_EQ(v.to_json()["gate"], "static");
  EXPECT_EQ(v.to_json()["reason"], v.reason);
}

// ----------------------------------------------------------- correctness gate

json tensor(const std::string& arg, int mismatches = 0, int nan = 0, int inf = 0) {
  json t = {{"arg", arg},        {"position", 1},       {"dtype", "float32"},   {"numel", 1000},
            {"mismatches", mismatches}, {"nan_mismatches", nan}, {"inf_mismatches", inf},
            {"max_abs_err", 0.0}, {"max_rel_err", 0.0},  {"first_mismatches", json::array()}};
  if (mismatches + nan + inf > 0)
    t["first_mismatches"] = {{{"index", {3, 7}}, {"got", 1.5}, {"expected", 1.25}}};
  return t;
}

json run(int seed, std::vector<json> tensors, const std::string& source = "model") {
  return {{"seed", seed}, {"launch", 0}, {"source", source}, {"error", nullptr}, {"tensors", tensors}};
}

json check(std::vector<json> runs) { return {{"atol", 1e-4}, {"rtol", 1e-4}, {"runs", runs}}; }

TEST(VerifyCorrectnessGate, ThreeCleanSeedsPass) {
  const Verdict v = correctness_gate(check({run(0, {tensor("out_ptr0")}), run(1, {tensor("out_ptr0")}),
                                            run(2, {tensor("out_ptr0")}), run(7, {tensor("out_ptr0")}, "synthetic")}));
  EXPECT_EQ(v.gate, "correctness");
  EXPECT_TRUE(v.passed) << v.reason;
  EXPECT_EQ(v.evidence["seeds"].size(), 3u);  // synthetic seed not counted when model runs exist
  EXPECT_EQ(v.evidence["compared"].size(), 4u);
}

TEST(VerifyCorrectnessGate, ACheckStoppedAtItsFirstFailureFailsOnThatFailureAndSaysWhereItStopped) {
  // the worker's check ends at the first failing run: one seed ran, its mismatch is the reason (not the seed count)
  json stopped = check({run(0, {tensor("out_ptr0", 46)})});
  stopped["stopped_early"] = "stopped at the first failing run (seed 0, launch 0): the candidate is rejected";
  const Verdict v = correctness_gate(stopped);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.reason.rfind("seed 0: out_ptr0 has 46 of 1000 elements mismatching", 0), 0u) << v.reason;
  EXPECT_EQ(v.evidence["stopped_early"], stopped["stopped_early"]);
  EXPECT_TRUE(correctness_gate(check({run(0, {tensor("o")}), run(1, {tensor("o")}), run(2, {tensor("o")})}))
                  .evidence["stopped_early"]
                  .is_null());
}

TEST(VerifyCorrectnessGate, SyntheticSeedsCountWhenNoModelRuns) {
  EXPECT_TRUE(correctness_gate(check({run(0, {tensor("o")}, "synthetic"), run(1, {tensor("o")}, "synthetic"),
                                      run(2, {tensor("o")}, "synthetic")}))
                  .passed);
}

TEST(VerifyCorrectnessGate, MismatchFailsNamingSeedArgAndElement) {
  const Verdict v = correctness_gate(
      check({run(0, {tensor("out_ptr0")}), run(1, {tensor("out_ptr0", 12)}), run(2, {tensor("out_ptr0")})}));
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, "seed 1")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "out_ptr0")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "12 of 1000")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "[3,7]: got 1.5, expected 1.25")) << v.reason;
}

TEST(VerifyCorrectnessGate, NanMismatchFails) {
  const Verdict v = correctness_gate(
      check({run(0, {tensor("out_ptr0")}), run(1, {tensor("out_ptr0", 0, 2)}), run(2, {tensor("out_ptr0")})}));
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, "2 NaN")) << v.reason;
}

TEST(VerifyCorrectnessGate, InfMismatchFails) {
  EXPECT_FALSE(correctness_gate(check({run(0, {tensor("o")}), run(1, {tensor("o")}), run(2, {tensor("o", 0, 0, 1)})}))
                   .passed);
}

TEST(VerifyCorrectnessGate, TwoSeedsAreTooFew) {
  const Verdict v = correctness_gate(check({run(0, {tensor("o")}), run(1, {tensor("o")}), run(1, {tensor("o")})}));
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, "only 2 distinct")) << v.reason;
  EXPECT_TRUE(correctness_gate(check({run(0, {tensor("o")}), run(1, {tensor("o")})}), CorrectnessPolicy{2}).passed);
}

TEST(VerifyCorrectnessGate, StaleOutputRunMismatchFailsNamingIt) {
  const Verdict v = correctness_gate(check({run(0, {tensor("o")}), run(1, {tensor("o")}), run(2, {tensor("o")}),
                                            run(0, {tensor("o", 7)}, "stale")}));
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, "seed 0 (stale output)")) << v.reason;
}

json three_clean() {
  return check({run(0, {tensor("o")}), run(1, {tensor("o")}), run(2, {tensor("o")})});
}

TEST(VerifyCorrectnessGate, NonDeterministicCandidateFailsWithTheWorkersReason) {
  json c = three_clean();
  const std::string line =
      "non-deterministic: repeat 2 of seed 1 differs from repeat 1 at [3, 7] (0.0 vs 0.25) in out_ptr0, launch 0";
  c["determinism"] = {{"repeats", 3}, {"launches_checked", 3}, {"failures", json::array({line})}, {"original_nondeterministic", json::array()}};
  const Verdict v = correctness_gate(c);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.gate, "correctness");
  EXPECT_EQ(v.reason, line);
  EXPECT_EQ(v.evidence["determinism"]["launches_checked"], 3);
}

TEST(VerifyCorrectnessGate, DeterminismIsSaidInThePassReason) {
  json c = three_clean();
  c["determinism"] = {{"repeats", 3}, {"launches_checked", 3}, {"failures", json::array()},
                      {"original_nondeterministic", json::array()}};
  Verdict v = correctness_gate(c);
  EXPECT_TRUE(v.passed) << v.reason;
  EXPECT_TRUE(contains(v.reason, "bit-identical across 3 repeats")) << v.reason;

  c["determinism"]["original_nondeterministic"] = json::array({"seed 0, launch 0: the original's repeat 2 differs"});
  v = correctness_gate(c);
  EXPECT_TRUE(v.passed) << v.reason;
  EXPECT_TRUE(contains(v.reason, "compared at tolerance only")) << v.reason;
  EXPECT_FALSE(contains(v.reason, "bit-identical")) << v.reason;

  EXPECT_TRUE(correctness_gate(three_clean()).passed);  // an older worker's result: no determinism field
}

TEST(VerifyCorrectnessGate, RepeatRunMismatchFailsNamingTheRepeat) {
  json c = three_clean();
  json rep = run(2, {tensor("o", 4)}, "repeat");
  rep["repeat"] = 3;
  c["runs"].push_back(rep);
  const Verdict v = correctness_gate(c);
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, "seed 2 (repeat 3)")) << v.reason;
}

TEST(VerifyCorrectnessGate, RunErrorFailsQuotingIt) {
  json bad = run(1, {});
  bad["error"] = "CUDA error: an illegal memory access was encountered";
  const Verdict v = correctness_gate(check({run(0, {tensor("o")}), bad, run(2, {tensor("o")})}));
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, "failed on seed 1: CUDA error: an illegal memory access")) << v.reason;
}

TEST(VerifyCorrectnessGate, NothingComparedFails) {
  const Verdict empty = correctness_gate(check({}));
  EXPECT_FALSE(empty.passed);
  EXPECT_TRUE(contains(empty.reason, "nothing compared")) << empty.reason;
  const Verdict no_tensors = correctness_gate(check({run(0, {tensor("o")}), run(1, {}), run(2, {tensor("o")})}));
  EXPECT_FALSE(no_tensors.passed);
  EXPECT_TRUE(contains(no_tensors.reason, "nothing compared on seed 1")) << no_tensors.reason;
  EXPECT_FALSE(correctness_gate(json::object()).passed);
}

// ------------------------------------------------------------------ model gate

json output(bool matches, json ref_base = nullptr, json ref_cand = nullptr) {
  return {{"index", 0}, {"matches_baseline", matches}, {"max_abs_diff", matches ? 0.0 : 2e-4},
          {"ref_err_baseline", ref_base}, {"ref_err_candidate", ref_cand}};
}

json model_check(std::vector<json> outputs_per_seed) {
  json runs = json::array();
  int seed = 100;
  for (const json& o : outputs_per_seed) runs.push_back({{"seed", seed++}, {"error", nullptr}, {"outputs", {o}}});
  return {{"runs", runs}};
}

TEST(VerifyModelGate, MatchingBaselinePasses) {
  const Verdict v = model_gate(model_check({output(true), output(true), output(true)}));
  EXPECT_EQ(v.gate, "model");
  EXPECT_TRUE(v.passed) << v.reason;
  EXPECT_EQ(v.evidence["outputs"][0]["how"], "matches baseline");
}

TEST(VerifyModelGate, Float64FallbackPassesWhenNoWorse) {
  const Verdict v = model_gate(model_check({output(true), output(false, 1e-5, 1e-5), output(false, 1e-5, 0.8e-5)}));
  EXPECT_TRUE(v.passed) << v.reason;
  EXPECT_EQ(v.evidence["outputs"][1]["how"], "fell back to float64");
  EXPECT_EQ(v.evidence["outputs"][2]["how"], "fell back to float64");
}

TEST(VerifyModelGate, Float64FallbackFailsAtTwiceTheError) {
  const Verdict v = model_gate(model_check({output(true), output(false, 1e-5, 2e-5), output(true)}));
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, "seed 101 output 0")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "float64")) << v.reason;
  // A looser stated factor accepts it.
  EXPECT_TRUE(model_gate(model_check({output(true), output(false, 1e-5, 2e-5), output(true)}), ModelPolicy{2.5}).passed);
}

TEST(VerifyModelGate, AbsoluteSlackCoversNearZeroBaselineError) {
  EXPECT_TRUE(model_gate(model_check({output(true), output(false, 0.0, 5e-8), output(true)})).passed);
  EXPECT_FALSE(model_gate(model_check({output(true), output(false, 0.0, 5e-7), output(true)})).passed);
}

TEST(VerifyModelGate, InfWhereFloat64IsFiniteFailsThoughTheFiniteErrorIsSmaller) {
  // a candidate that turns a loss into +Inf: its error over finite elements is no worse, its specials are
  json inf = output(false, 1e-6, 5e-7);
  inf["ref_special_baseline"] = 0;
  inf["ref_special_candidate"] = 2;
  const Verdict v = model_gate(model_check({output(true), inf, output(true)}));
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, "seed 101 output 0: 2 NaN/Inf positions differ from float64")) << v.reason;
  inf["ref_special_candidate"] = 0;  // as many as the baseline's: judged by the finite error alone
  EXPECT_TRUE(model_gate(model_check({output(true), inf, output(true)})).passed);
}

TEST(VerifyModelGate, DifferenceWithoutReferenceFails) {
  const Verdict v = model_gate(model_check({output(true), output(false), output(true)}));
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, "differs from baseline")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "no float64 reference")) << v.reason;
}

TEST(VerifyModelGate, RunErrorTooFewSeedsAndNoOutputsFail) {
  json with_error = model_check({output(true), output(true), output(true)});
  with_error["runs"][2]["error"] = "RuntimeError: CUDA out of memory";
  const Verdict err = model_gate(with_error);
  EXPECT_FALSE(err.passed);
  EXPECT_TRUE(contains(err.reason, "seed 102: RuntimeError: CUDA out of memory")) << err.reason;

  const Verdict few = model_gate(model_check({output(true), output(true)}));
  EXPECT_FALSE(few.passed);
  EXPECT_TRUE(contains(few.reason, "only 2 distinct seed")) << few.reason;

  json no_outputs = model_check({output(true), output(true), output(true)});
  no_outputs["runs"][0]["outputs"] = json::array();
  EXPECT_FALSE(model_gate(no_outputs).passed);
  EXPECT_FALSE(model_gate(json{{"runs", json::array()}}).passed);
}

// ------------------------------------------------------------ performance gate

std::vector<double> samples(double center, std::size_t n, std::uint64_t seed, double rel = 0.02) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> jitter(1.0, rel);
  std::vector<double> out(n);
  for (double& x : out) x = center * jitter(rng);
  return out;
}

TEST(VerifyPerformanceGate, IdenticalDistributionsFail) {
  const Verdict v = performance_gate(samples(1.0, 100, 1), samples(1.0, 100, 2), samples(5.0, 100, 3),
                                     samples(5.0, 100, 4));
  EXPECT_EQ(v.gate, "performance");
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, "within noise")) << v.reason;
  EXPECT_LE(v.evidence["kernel"]["ci_low"].get<double>(), 1.0);
}

TEST(VerifyPerformanceGate, ClearSpeedupOnBothPasses) {
  const Verdict v = performance_gate(samples(1.3, 100, 1), samples(1.0, 100, 2), samples(6.5, 100, 3),
                                     samples(5.0, 100, 4));
  EXPECT_TRUE(v.passed) << v.reason;
  EXPECT_NEAR(v.evidence["kernel"]["speedup"].get<double>(), 1.3, 0.03);
  EXPECT_NEAR(v.evidence["model"]["speedup"].get<double>(), 1.3, 0.03);
  EXPECT_GT(v.evidence["model"]["ci_low"].get<double>(), 1.0);
  EXPECT_EQ(v.evidence["kernel"]["n_baseline"], 100);
  EXPECT_TRUE(v.evidence["kernel"].contains("baseline_median_ms"));
}

TEST(VerifyPerformanceGate, KernelFasterButModelFlatFails) {
  const Verdict v = performance_gate(samples(1.3, 100, 1), samples(1.0, 100, 2), samples(5.0, 100, 3),
                                     samples(5.0, 100, 4));
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, "but model")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "within noise")) << v.reason;
}

TEST(VerifyPerformanceGate, SlowerCandidateNamedSlower) {
  const Verdict v = performance_gate(samples(1.0, 100, 1), samples(1.3, 100, 2), samples(5.0, 100, 3),
                                     samples(6.5, 100, 4));
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, "is slower")) << v.reason;
}

TEST(VerifyPerformanceGate, MinimumSpeedupApplies) {
  PerformancePolicy policy;
  policy.min_kernel_speedup = 1.5;
  const Verdict v = performance_gate(samples(1.3, 100, 1), samples(1.0, 100, 2), samples(6.5, 100, 3),
                                     samples(5.0, 100, 4), policy);
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, "required 1.500x")) << v.reason;
}

TEST(VerifyPerformanceGate, TooFewOrBadSamplesFail) {
  const Verdict few = performance_gate(samples(1.3, 9, 1), samples(1.0, 100, 2), samples(6.5, 100, 3),
                                       samples(5.0, 100, 4));
  EXPECT_FALSE(few.passed);
  EXPECT_TRUE(contains(few.reason, "too few samples: kernel baseline has 9")) << few.reason;
  std::vector<double> bad = samples(1.0, 20, 2);
  bad[3] = 0.0;
  const Verdict v = performance_gate(samples(1.3, 20, 1), bad, samples(6.5, 20, 3), samples(5.0, 20, 4));
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, "bad timing samples")) << v.reason;
}

}  // namespace
