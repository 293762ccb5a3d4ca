// Tests for agents/prompt.hpp (the renderer, the compiled-in templates) and
// golden files of every agent's prompt (tests/unit/golden/<agent>.txt) for a
// real Inductor kernel: any change to a template or to the code that fills it
// shows up here, and in the diff of the golden file once it is updated.
#include "agents/prompt.hpp"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "agents/llm_agents.hpp"
#include "artifact/artifact.hpp"
#include "util/fs.hpp"

using namespace kernelopt::agents;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// --- the renderer -------------------------------------------------------------

TEST(AgentsPrompt, FillsPlaceholdersWithStringsAndNumbers) {
  EXPECT_EQ(render("a {{x}} b {{n}} c {{f}} {{x}}", {{"x", "X"}, {"n", 42}, {"f", 0.25}}), "a X b 42 c 0.25 X");
  EXPECT_EQ(render("no placeholders", json::object()), "no placeholders");
  EXPECT_EQ(render("{{u}}", {{"u", 7u}}), "7");
  // values are inserted once, never re-scanned: kernel source full of braces stays as it is
  EXPECT_EQ(render("[{{code}}]", {{"code", "{'x': {{y}}}"}}), "[{'x': {{y}}}]");
  // single braces and closing pairs in the template are text
  EXPECT_EQ(render("{\"meta\": {{m}}} }}", {{"m", "{}"}}), "{\"meta\": {}} }}");
}

TEST(AgentsPrompt, UnknownPlaceholderNamesIt) {
  try {
    render("hello {{who}}", {{"whom", "x"}}, "greeting");
    FAIL() << "no PromptError";
  } catch (const PromptError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("greeting"), std::string::npos) << m;
    EXPECT_NE(m.find("who"), std::string::npos) << m;
  }
}

TEST(AgentsPrompt, UnusedVariableNamesIt) {
  try {
    render("hello {{who}}", {{"who", "x"}, {"extra", "y"}}, "greeting");
    FAIL() << "no PromptError";
  } catch (const PromptError& e) {
    EXPECT_NE(std::string(e.what()).find("'extra' is not used"), std::string::npos) << e.what();
  }
}

TEST(AgentsPrompt, RejectsMalformedPlaceholdersAndBadValues) {
  EXPECT_THROW(render("a {{ x }}", {{"x", "1"}}), PromptError);
  EXPECT_THROW(render("a {{x", {{"x", "1"}}), PromptError);
  EXPECT_THROW(render("a {{1x}}", json::object()), PromptError);
  EXPECT_THROW(render("a {{}}", json::object()), PromptError);
  EXPECT_THROW(render("{{x}}", {{"x", json::array()}}), PromptError);
  EXPECT_THROW(render("{{x}}", {{"x", nullptr}}), PromptError);
  EXPECT_THROW(render("{{x}}", {{"x", true}}), PromptError);
  EXPECT_THROW(render("x", json::array()), PromptError);
}

TEST(AgentsPrompt, EveryTemplateIsCompiledIn) {
  const std::vector<std::string> want = {"coder",   "kernel", "kernel_answer", "planner",
                                         "profiler", "repairer", "system",       "tuner"};
  EXPECT_EQ(prompt_template_names(), want);
  for (const auto& name : want) {
    // byte-identical to the file in the repo (the build re-embeds a changed template)
    const std::string file = kernelopt::util::read_file(fs::path(KERNELOPT_SOURCE_DIR) / "prompts" / (name + ".md"));
    EXPECT_EQ(std::string(prompt_template(name)), file) << name;
  }
  EXPECT_THROW(prompt_template("nope"), PromptError);
}

// --- golden prompts -----------------------------------------------------------

const fs::path kGoldenDir = fs::path(KERNELOPT_SOURCE_DIR) / "tests" / "unit" / "golden";

std::string show(const kernelopt::llm::ChatRequest& r) {
  std::ostringstream out;
  out << "# tag: " << r.tag << "\n# max_tokens: " << r.max_tokens << ", temperature: " << r.temperature << "\n"
      << "=== system\n" << r.system << "\n=== user\n" << r.messages.at(0).content << "\n";
  return out.str();
}

// Compares `got` with tests/unit/golden/<name>.txt; KERNELOPT_UPDATE_GOLDEN=1 rewrites the file instead.
void expect_golden(const std::string& name, const std::string& got) {
  const fs::path file = kGoldenDir / (name + ".txt");
  const char* update = std::getenv("KERNELOPT_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    kernelopt::util::write_file_atomic(file, got);
    std::cout << "updated " << file.string() << "\n";
    return;
  }
  const std::string how = "if the change is intended, rewrite the golden files with\n"
                          "  KERNELOPT_UPDATE_GOLDEN=1 ctest --test-dir build -R test_agents\n"
                          "and review their diff (git diff tests/unit/golden)";
  ASSERT_TRUE(fs::exists(file)) << file.string() << " is missing; " << how;
  const std::string want = kernelopt::util::read_file(file);
  if (got == want) return;
  std::istringstream a(want), b(got);
  std::string la, lb;
  int line = 1;
  while (true) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) break;
    if (!more_a || !more_b || la != lb) {
      ADD_FAILURE() << "prompt " << name << " differs from " << file.string() << " at line " << line
                    << "\n  golden: " << (more_a ? la : "<end of file>") << "\n  now:    "
                    << (more_b ? lb : "<end of file>") << "\n" << how;
      return;
    }
    ++line;
  }
  ADD_FAILURE() << "prompt " << name << " differs from " << file.string() << " (line endings)\n" << how;
}

// The softmax kernel of tests/fixtures/inductor (captured on an H200), with
// the facts the engine gives the agents and realistic measurements.
KernelTask softmax_task() {
  const fs::path fixtures = fs::path(KERNELOPT_SOURCE_DIR) / "tests" / "fixtures" / "inductor";
  const json artifact = json::parse(kernelopt::util::read_file(fixtures / "softmax.artifact.json"));
  const auto module = kernelopt::artifact::module_from_json(artifact, kernelopt::util::read_file(fixtures / "softmax.py"),
                                                            0, (fixtures / "softmax.py").string());
  const auto& k = module.kernels.at(0);
  KernelTask t;
  t.kernel_name = k.name;
  t.kind = k.kind;
  t.source = module.kernel_source(k);
  t.params = k.params;
  t.constexprs = k.constexprs;
  t.signature = k.signature;
  t.aten_ops = k.aten_ops;
  t.graph_fragment = k.graph_fragment;
  t.size_hints = k.size_hints;
  t.current_config = {{"XBLOCK", 1}, {"R0_BLOCK", 2048}, {"num_warps", 16}, {"num_stages", 1}};
  t.atol = t.rtol = 1e-4;  // a run's default tolerances, as engine::kernel_task passes them on
  t.half_atol = t.half_rtol = 1e-2;
  for (const auto* l : module.launches_of(k.name)) t.launch_numels.emplace_back(l->numels.begin(), l->numels.end());
  t.grid_rule = "(cdiv(xnumel, XBLOCK), 1, 1)";
  // 4096 x 8192 fp32: the online softmax reads the input twice and writes it once (402.7 MB)
  t.profile = profile_kernels({{k.name, k.kind, 0.2153, 1, 3.0 * 4096 * 8192 * 4, 0}}, 0.2189,
                              {4012, 0, 0}).at(0);
  t.bandwidth_gbps = 4012;
  t.diagnosis =
      "Memory-bound at 47% of the measured bandwidth: the online-softmax loop reads each 32 KB row twice in "
      "2048-wide chunks (402.7 MB moved where 268.4 MB would do); one pass over a row held in registers would cut "
      "the traffic by a third.";
  t.strategy =
      "One pass: one program per row with R0_BLOCK = 8192 (the whole row), load it once, take the max, exp and sum "
      "in registers and write the normalized row; try num_warps 16 and 32.";
  t.earlier = {{"tuner", "R0_BLOCK=4096 XBLOCK=1 w16 s1", "performance",
                "slower than the baseline in the screen: 0.2201 ms vs 0.2153 ms", false},
               {"tuner", "R0_BLOCK=1024 XBLOCK=1 w8 s1", "performance",
                "slower than the baseline in the screen: 0.2297 ms vs 0.2153 ms", false}};
  return t;
}

// The three Triton kernels of tests/fixtures/inductor/mlp_block (LayerNorm, GELU, residual add) around two GEMMs.
std::vector<KernelProfile> mlp_profiles() {
  return profile_kernels({{"triton_per_fused_native_layer_norm_0", "persistent_reduction", 0.0301, 1, 67174400, 0},
                          {"triton_poi_fused_addmm_gelu_1", "pointwise", 0.0742, 1, 268451840, 0},
                          {"triton_poi_fused_add_addmm_2", "pointwise", 0.0312, 1, 100667392, 0}},
                         0.9120, {4012, 0, 0});
}

KernelAnswer failed_candidate() {
  KernelAnswer a;
  a.code = R"(@triton.jit
def triton_red_fused__softmax_exp_prepare_softmax_online_sub_0(in_ptr0, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_mask = r0_index < r0_numel
    x = tl.load(in_ptr0 + (r0_index + 8192 * xindex), r0_mask, other=float('-inf'))
    row_max = tl.max(x, 1)[:, None]
    e = libdevice.exp(x - row_max)
    denom = tl.sum(e, 0)[None, :]
    tl.store(out_ptr2 + (r0_index + 8192 * xindex), e / denom, r0_mask)
)";
  a.meta = {{"XBLOCK", 1}, {"R0_BLOCK", 8192}, {"num_warps", 16}, {"num_stages", 1}};
  a.notes = "one pass over each row held in registers";
  return a;
}

GateFailure correctness_failure() {
  GateFailure f;
  f.gate = "correctness";
  f.reason = "seed 0: out_ptr2 has 33554432 of 33554432 elements mismatching (0 NaN, 0 Inf positions); first at [0, 0]: "
             "got 1.0, expected 0.000118";
  f.evidence = {{"atol", 1e-4},
                {"rtol", 1e-4},
                {"seeds", {0, 1, 2}},
                {"min_seeds", 3},
                {"failures",
                 {f.reason,
                  "seed 1: out_ptr2 has 33554432 of 33554432 elements mismatching (0 NaN, 0 Inf positions); first at "
                  "[0, 0]: got 1.0, expected 0.000131",
                  "seed 2: out_ptr2 has 33554432 of 33554432 elements mismatching (0 NaN, 0 Inf positions); first at "
                  "[0, 0]: got 1.0, expected 0.000097"}},
                {"compared",
                 {{{"seed", 0}, {"launch", 0}, {"arg", "out_ptr2"}, {"max_abs_err", 0.99988}, {"max_rel_err", 8474.6}, {"passed", false}},
                  {{"seed", 1}, {"launch", 0}, {"arg", "out_ptr2"}, {"max_abs_err", 0.99987}, {"max_rel_err", 7632.5}, {"passed", false}},
                  {{"seed", 2}, {"launch", 0}, {"arg", "out_ptr2"}, {"max_abs_err", 0.99990}, {"max_rel_err", 10308.3}, {"passed", false}}}}};
  return f;
}

TEST(AgentsPromptGolden, Profiler) { expect_golden("profiler", show(profiler_request(mlp_profiles(), 4012))); }

TEST(AgentsPromptGolden, Planner) { expect_golden("planner", show(planner_request(mlp_profiles(), 48))); }

TEST(AgentsPromptGolden, Coder) { expect_golden("coder", show(coder_request(softmax_task(), 2))); }

TEST(AgentsPromptGolden, Repairer) {
  expect_golden("repairer", show(repairer_request(softmax_task(), failed_candidate(), correctness_failure())));
}

TEST(AgentsPromptGolden, Tuner) { expect_golden("tuner", show(tuner_request(softmax_task(), 8))); }

// --- what the prompts must say --------------------------------------------------

TEST(AgentsPrompt, CoderPromptCarriesTheKernelFactsAndTheRules) {
  const KernelTask t = softmax_task();
  const auto r = coder_request(t, 3);
  const std::string& u = r.messages.at(0).content;
  EXPECT_EQ(r.tag, "coder." + t.kernel_name);
  for (const std::string& s :
       {t.kernel_name, std::string("tmp6 = libdevice.exp(tmp5)"), std::string("in_ptr0: *fp32"),
        std::string("prims.prepare_softmax_online"), std::string("%exp_default"), std::string("x=4096, r0_=8192"),
        std::string("xnumel=4096, r0_numel=8192"), std::string("XBLOCK=1, R0_BLOCK=2048, num_warps=16, num_stages=1"),
        std::string("1870 GB/s, 47% of the measured 4012 GB/s"), t.diagnosis, t.strategy,
        std::string("rejected by the performance gate"), std::string("\"### Candidate 3\" for the last"), std::string("```python"),
        std::string("```json"), std::string("\"grid\": null"), std::string("Outputs (pointers it stores to): out_ptr2"),
        std::string("def " + t.kernel_name + "(in_ptr0, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr)"),
        std::string("atol = 0.0001 and rtol = 0.0001"), std::string("No imports")}) {
    EXPECT_NE(u.find(s), std::string::npos) << "missing: " << s;
  }
  EXPECT_EQ(u.find("{{"), std::string::npos);
  EXPECT_FALSE(r.system.empty());
}

TEST(AgentsPrompt, RequestsAreDeterministic) {
  EXPECT_EQ(kernelopt::llm::canonical_request(coder_request(softmax_task(), 2)),
            kernelopt::llm::canonical_request(coder_request(softmax_task(), 2)));
  EXPECT_NE(kernelopt::llm::request_hash(coder_request(softmax_task(), 2)),
            kernelopt::llm::request_hash(coder_request(softmax_task(), 3)));
}

TEST(AgentsPrompt, RepairerCutsLongEvidenceAndHandlesAnUnreadableAnswer) {
  KernelAnswer raw;
  raw.code = "I would rather explain in prose.";  // an unreadable answer goes back as text, with no meta
  GateFailure f{"static", "unreadable answer: no ```python block in the answer", json{{"blob", std::string(10000, 'x')}}};
  const auto r = repairer_request(softmax_task(), raw, f);
  const std::string& u = r.messages.at(0).content;
  EXPECT_NE(u.find("...(truncated)"), std::string::npos);
  EXPECT_LT(u.find("...(truncated)") - u.find("\"blob\""), kMaxEvidenceChars + 10);
  EXPECT_NE(u.find("meta (none given) and grid null"), std::string::npos);
  EXPECT_NE(u.find("The static gate reads"), std::string::npos);
  EXPECT_EQ(r.tag, "repairer." + softmax_task().kernel_name);
}

TEST(AgentsPrompt, StoredPointersScanTheSource) {
  EXPECT_EQ(stored_pointers("tl.store(out_ptr0 + x, v)\ntl.atomic_add(out_ptr1 + (x), v)\ntl.store( in_out_ptr0 + 1, w)",
                            {"in_out_ptr0", "in_ptr0", "out_ptr0", "out_ptr1", "xnumel"}),
            (std::vector<std::string>{"in_out_ptr0", "out_ptr0", "out_ptr1"}));
  EXPECT_TRUE(stored_pointers("x = tl.load(in_ptr0)", {"in_ptr0"}).empty());
}

}  // namespace
