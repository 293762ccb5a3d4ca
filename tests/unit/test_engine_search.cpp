// Tests for one kernel's search without a worker process: the gate pipeline, the search
// strategies and search_kernel, against a WorkerLink that answers each op with canned JSON
// shaped like the real worker's replies (python/kernelopt/worker/ops.py).
#include <gtest/gtest.h>

#include <chrono>

#include <filesystem>
#include <functional>
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "artifact/artifact.hpp"
#include "engine/context.hpp"
#include "engine/gate_pipeline.hpp"
#include "engine/kernel_search.hpp"
#include "engine/search_state.hpp"
#include "engine/search_strategies.hpp"
#include "store/store.hpp"
#include "util/fs.hpp"
#include "worker/protocol.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kernelopt;

namespace {

const std::string kKernel = "triton_red_fused__softmax_exp_prepare_softmax_online_sub_0";

// The worker's analyze facts for the softmax fixture's kernel (as in test_verify_gates.cpp): a candidate
// given the same facts passes gate 1.
json softmax_facts() {
  return json::parse(R"json({"parse_error": null,
 "imports": [{"module": "triton", "names": [], "line": 2}, {"module": "triton.language", "names": [], "line": 3},
  {"module": "torch._inductor.runtime", "names": ["triton_helpers", "triton_heuristics"], "line": 5}],
 "toplevel": [{"kind": "Import", "line": 2, "text": "import triton"},
  {"kind": "Import", "line": 3, "text": "import triton.language as tl"},
  {"kind": "ImportFrom", "line": 5, "text": "from torch._inductor.runtime import triton_helpers, triton_heuristics"},
  {"kind": "FunctionDef", "line": 18, "text": "def triton_red_fused__softmax_exp_prepare_softmax_online_sub_0(in_ptr0, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):"}],
 "functions": [{"name": "triton_red_fused__softmax_exp_prepare_softmax_online_sub_0", "params": ["in_ptr0", "out_ptr2", "xnumel", "r0_numel"],
  "constexprs": ["XBLOCK", "R0_BLOCK"], "decorators": ["triton_heuristics.reduction", "triton.jit"], "line": 18}],
 "calls": [{"name": "tl.program_id", "line": 23}, {"name": "tl.load", "line": 37}, {"name": "tl.store", "line": 61}],
 "names": ["R0_BLOCK", "XBLOCK", "in_ptr0", "out_ptr2", "r0_numel", "tl", "triton", "triton_helpers", "triton_heuristics", "xnumel"],
 "stored_params": {"triton_red_fused__softmax_exp_prepare_softmax_online_sub_0": ["out_ptr2"]}})json");
}

worker::Reply ok(json result) {
  worker::Reply r;
  r.result = std::move(result);
  return r;
}

worker::Reply failure(worker::Status status, const std::string& kind, const std::string& error) {
  worker::Reply r;
  r.status = status;
  r.kind = kind;
  r.error = error;
  return r;
}

std::vector<double> around(double ms, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(ms * (1.0 + 0.001 * (i % 5)));
  return out;
}

// The `bench` op's reply: samples for the baseline and for each candidate module the request names.
worker::Reply bench_reply(const json& args, double base_ms, double cand_ms) {
  const int n = args.value("trials", 20);
  json samples = {{"baseline", around(base_ms, n)}};
  for (const auto& path : args["candidates"]) samples[path.get<std::string>()] = around(cand_ms, n);
  return ok({{"samples_ms", samples}});
}

json check_tensor(int mismatches) {
  json t = {{"arg", "out_ptr2"}, {"position", 1}, {"dtype", "float32"}, {"numel", 1000}, {"mismatches", mismatches},
            {"nan_mismatches", 0}, {"inf_mismatches", 0}, {"max_abs_err", mismatches ? 0.5 : 0.0},
            {"max_rel_err", mismatches ? 0.4 : 0.0}, {"first_mismatches", json::array()}};
  if (mismatches > 0) t["first_mismatches"] = {{{"index", {3, 7}}, {"got", 1.5}, {"expected", 1.25}}};
  return t;
}

// The `check` op's reply: one launch on each of seeds 0-2, `mismatches` wrong elements on seed 1.
json check_result(int mismatches) {
  json runs = json::array();
  for (int seed : {0, 1, 2}) {
    runs.push_back({{"seed", seed}, {"launch", 0}, {"source", "model"}, {"error", nullptr},
                    {"tensors", {check_tensor(seed == 1 ? mismatches : 0)}}});
  }
  return {{"atol", 1e-4}, {"rtol", 1e-4}, {"tolerances", engine::OptimizeOptions().tolerances_json()}, {"repeats", 3},
          {"runs", runs}, {"determinism", {{"failures", json::array()}}}};
}

json model_result() {
  json runs = json::array();
  for (int seed : {0, 1, 2}) {
    runs.push_back({{"seed", seed}, {"error", nullptr},
                    {"outputs", {{{"index", 0}, {"matches_baseline", true}, {"max_abs_diff", 0.0},
                                  {"ref_err_baseline", nullptr}, {"ref_err_candidate", nullptr}}}}});
  }
  return {{"runs", runs}};
}

// A worker that answers each op with its handler and remembers every request. An op without a handler
// fails the test: the code under test asked something the test did not expect.
class ReplayWorker final : public engine::WorkerLink {
 public:
  using Handler = std::function<worker::Reply(const json& args)>;
  void on(const std::string& op, Handler handler) { handlers_[op] = std::move(handler); }
  // Every request the engine makes, and every canned reply, must be what the protocol allows
  // (python/kernelopt/worker/protocol.json), as the real worker would check them.
  worker::Reply request(const std::string& op, const json& args, int) override {
    requests.push_back({op, args});
    EXPECT_EQ(worker::protocol_violation(op, "args", args), "") << args.dump();
    auto it = handlers_.find(op);
    if (it == handlers_.end()) {
      ADD_FAILURE() << "unexpected worker op " << op;
      return failure(worker::Status::error, "exception", "no reply recorded for " + op);
    }
    worker::Reply reply = it->second(args);
    if (reply.ok()) {
      EXPECT_EQ(worker::protocol_violation(op, "result", reply.result), "") << reply.result.dump();
    }
    return reply;
  }
  std::vector<std::string> ops() const {
    std::vector<std::string> out;
    for (const auto& [op, args] : requests) out.push_back(op);
    return out;
  }
  std::vector<std::pair<std::string, json>> requests;

 private:
  std::map<std::string, Handler> handlers_;
};

// A worker whose candidates are twice as fast as the baseline and correct everywhere.
void answer_all_passing(ReplayWorker& w) {
  w.on("analyze", [](const json&) { return ok(softmax_facts()); });
  w.on("compile", [](const json&) { return ok({{"compiled", true}}); });
  w.on("bench", [](const json& args) { return bench_reply(args, 1.0, 0.5); });
  w.on("check", [](const json&) { return ok(check_result(0)); });
  w.on("model_check", [](const json&) { return ok(model_result()); });
  w.on("rewrite", [](const json&) { return ok({{"skipped", json::array()}, {"candidates", json::array()}}); });
}

class EngineSearch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kernelopt_search_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "candidates");
    store_.emplace(store::Store::open(dir_ / "store.db"));
    store::RunRecord rec;
    rec.input_path = "softmax.py";
    rec.input_hash = "h";
    rec.out_dir = dir_.string();
    rec.status = "running";
    run_id_ = store_->create_run(rec);
    const std::string base = std::string(KERNELOPT_SOURCE_DIR) + "/tests/fixtures/inductor/softmax";
    module_ = artifact::module_from_json(json::parse(util::read_file(base + ".artifact.json")),
                                         util::read_file(base + ".py"), 0, base + ".py");
    ctx_.emplace(engine::Context{options_, engine::input_kind_named(options_.input_kind), worker_, *store_, run_id_, dir_,
                                 {{"problem", "softmax.py"}, {"device", "cpu"}, {"seeds", {0, 1, 2}},
                                  {"input_kind", "module"}}});
  }
  void TearDown() override {
    ctx_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }

  const artifact::Kernel& kernel() const { return *module_.find_kernel(kKernel); }
  json baseline() const { return {{"XBLOCK", 1}, {"R0_BLOCK", 2048}, {"num_warps", 16}, {"num_stages", 1}}; }
  engine::Candidate tuner_config(int r0_block) const {
    engine::Candidate c;
    c.origin = "tuner";
    c.config = {{"XBLOCK", 1}, {"R0_BLOCK", r0_block}, {"num_warps", 8}, {"num_stages", 1}};
    return c;
  }
  std::string status_of_only_candidate() {
    auto cs = store_->candidates(run_id_);
    return cs.size() == 1 ? cs[0].status : "candidates: " + std::to_string(cs.size());
  }

  engine::OptimizeOptions options_;
  ReplayWorker worker_;
  fs::path dir_;
  std::optional<store::Store> store_;
  std::int64_t run_id_ = 0;
  artifact::Module module_;
  std::optional<engine::Context> ctx_;
};

TEST_F(EngineSearch, ACandidatePassingEveryGateIsKeptWithItsVerdicts) {
  answer_all_passing(worker_);
  engine::SearchTarget target(*ctx_, module_, kernel(), baseline());
  engine::SearchState state(target, engine::kernel_task(target, {}, ""), 4);
  engine::GatePipeline gates(state);
  gates.evaluate({tuner_config(1024)});

  ASSERT_EQ(state.passed.size(), 1u);
  EXPECT_EQ(state.used, 1);
  EXPECT_EQ(state.out.screened, 1);
  EXPECT_EQ(state.out.gated, 1);
  EXPECT_TRUE(state.out.rejected_by.empty());
  EXPECT_GT(state.speedup_of(state.passed[0]), 1.5);
  EXPECT_EQ(status_of_only_candidate(), "passed");
  // the gates in order: original facts, gate 1 (analyze, compile), screen, gate 2, gate 3, gate 4 (kernel, model)
  EXPECT_EQ(worker_.ops(), (std::vector<std::string>{"analyze", "analyze", "compile", "bench", "check", "model_check",
                                                     "bench", "bench"}));
  EXPECT_EQ(worker_.requests[7].second["mode"], "model");
  std::vector<std::string> gates_passed;
  for (const auto& v : store_->verdicts(state.passed[0].record.id)) {
    EXPECT_TRUE(v.passed) << v.gate << ": " << v.reason;
    gates_passed.push_back(v.gate);
  }
  EXPECT_EQ(gates_passed, (std::vector<std::string>{"static", "correctness", "model", "performance"}));
}

TEST_F(EngineSearch, ASpentSearchAllowanceGatesNothingMoreAndKeepsWhatPassed) {
  answer_all_passing(worker_);
  options_.search_seconds = 30;
  engine::SearchTarget target(*ctx_, module_, kernel(), baseline());
  engine::SearchState state(target, engine::kernel_task(target, {}, ""), 8);
  engine::GatePipeline gates(state);
  gates.evaluate({tuner_config(1024)});  // time left: through every gate
  ASSERT_EQ(state.passed.size(), 1u);
  EXPECT_FALSE(state.out_of_time);
  const auto before = worker_.ops().size();
  ctx_->search_deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);  // the 30 s are spent
  gates.evaluate({tuner_config(512)});
  EXPECT_EQ(worker_.ops().size(), before);  // not even screened
  EXPECT_TRUE(state.out_of_time);
  EXPECT_EQ(state.used, 1);
  EXPECT_EQ(state.passed.size(), 1u);  // what passed before stays
  // the whole search: the kept winner says the allowance stopped the search
  const auto outcome = engine::search_kernel(*ctx_, module_, kernel(), baseline(), 4, {}, "");
  EXPECT_EQ(outcome.status, "kept baseline");
  EXPECT_NE(outcome.why.find("the kernel search's 30 s were spent (--search-seconds)"), std::string::npos) << outcome.why;
}

TEST_F(EngineSearch, MismatchesInTheCheckRejectAtTheCorrectnessGateWithTheReason) {
  answer_all_passing(worker_);
  worker_.on("check", [](const json&) { return ok(check_result(12)); });
  engine::SearchTarget target(*ctx_, module_, kernel(), baseline());
  engine::SearchState state(target, engine::kernel_task(target, {}, ""), 4);
  engine::GatePipeline gates(state);
  gates.evaluate({tuner_config(1024)});

  EXPECT_TRUE(state.passed.empty());
  EXPECT_EQ(state.out.rejected_by, (std::map<std::string, int>{{"correctness", 1}}));
  EXPECT_EQ(status_of_only_candidate(), "rejected");
  const auto& ops = worker_.ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "model_check"), 0) << "gate 3 ran after gate 2 failed";
  ASSERT_EQ(state.out.attempts.size(), 1u);
  EXPECT_EQ(state.out.attempts[0]["gate"], "correctness");
  const std::string reason = state.out.attempts[0]["reason"];
  EXPECT_NE(reason.find("seed 1: out_ptr2 has 12 of 1000 elements mismatching"), std::string::npos) << reason;
  // the Tuner's and the Coder's agents see the failure next time
  ASSERT_EQ(state.task.earlier.size(), 1u);
  EXPECT_EQ(state.task.earlier[0].gate, "correctness");
}

TEST_F(EngineSearch, OutOfMemoryIsRetriedOnTheFirstSeedThenIsAResourceVerdict) {
  answer_all_passing(worker_);
  worker_.on("check", [](const json&) {
    return failure(worker::Status::error, "out_of_memory", "CUDA out of memory. Tried to allocate 4.00 GiB");
  });
  engine::SearchTarget target(*ctx_, module_, kernel(), baseline());
  engine::SearchState state(target, engine::kernel_task(target, {}, ""), 4);
  engine::GatePipeline gates(state);
  gates.evaluate({tuner_config(1024)});

  std::vector<json> checks;
  for (const auto& [op, args] : worker_.requests) {
    if (op == "check") checks.push_back(args);
  }
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0]["seeds"], json({0, 1, 2}));
  EXPECT_EQ(checks[1]["seeds"], json({0}));
  EXPECT_EQ(ctx_->base_args["seeds"], json({0}));  // the run's later ops keep to that seed
  EXPECT_EQ(state.out.rejected_by, (std::map<std::string, int>{{"resource", 1}}));
  ASSERT_EQ(state.out.attempts.size(), 1u);
  EXPECT_EQ(state.out.attempts[0]["gate"], "resource");
  EXPECT_EQ(state.out.attempts[0]["reason"], "resource: CUDA out of memory. Tried to allocate 4.00 GiB");
}

TEST_F(EngineSearch, WorkerFailureNamesTheGateUnlessTheDeviceRanOutOfMemory) {
  const auto hang = engine::worker_failure("correctness", failure(worker::Status::timeout, "timeout", "no reply in 900 s"));
  EXPECT_EQ(hang.gate, "correctness");
  EXPECT_FALSE(hang.passed);
  EXPECT_EQ(hang.reason, "worker timeout: no reply in 900 s");
  const auto oom = engine::worker_failure("performance", failure(worker::Status::error, "out_of_memory", "OOM"));
  EXPECT_EQ(oom.gate, "resource");
  EXPECT_EQ(oom.reason, "resource: OOM");
  EXPECT_EQ(oom.evidence["status"], "error");
}

TEST_F(EngineSearch, ASlowerConfigIsDroppedAtTheScreenAndNeverGated) {
  answer_all_passing(worker_);
  worker_.on("bench", [](const json& args) { return bench_reply(args, 1.0, 1.2); });
  engine::SearchTarget target(*ctx_, module_, kernel(), baseline());
  engine::SearchState state(target, engine::kernel_task(target, {}, ""), 4);
  engine::GatePipeline gates(state);
  gates.evaluate({tuner_config(1024), tuner_config(512)});

  EXPECT_EQ(state.used, 2);
  EXPECT_EQ(state.out.screened, 2);
  EXPECT_EQ(state.out.gated, 0);
  EXPECT_TRUE(state.passed.empty());
  const auto& ops = worker_.ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "check"), 0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "bench"), 1);  // one screen of both
}

TEST_F(EngineSearch, RewriteFamiliesPinTheBlockSizesTheRewriteWasWrittenFor) {
  worker_.on("rewrite", [](const json& args) {
    EXPECT_EQ(args["reduction_hint"], "INNER");
    // the kernel's ATen ops (from the artifact) let a family recognise what it computes
    EXPECT_EQ(args["aten_ops"], json({"prims.prepare_softmax_online", "aten.sub", "aten.exp", "aten._softmax"}));
    return ok({{"skipped", {{{"family", "split_reduction"}, {"why", "one row per program already"}}}},
               {"candidates",
                {{{"code", "def " + kKernel + "(): pass\n"},
                  {"family", "online_softmax"},
                  {"notes", "online_softmax: one pass over the row"},
                  {"meta", {{"R0_BLOCK", 1024}, {"XBLOCK", 1}, {"num_warps", 4}}}}}}});
  });
  engine::SearchTarget target(*ctx_, module_, kernel(), baseline());
  engine::SearchState state(target, engine::kernel_task(target, {}, ""), 4);
  engine::RewriteFamilies rewrites;
  auto candidates = rewrites.next(state, {});
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].origin, "rewrite");
  EXPECT_EQ(candidates[0].family, "online_softmax");
  EXPECT_EQ(candidates[0].config, json({{"XBLOCK", 1}, {"R0_BLOCK", 1024}, {"num_warps", 4}, {"num_stages", 1}}));
  EXPECT_EQ(candidates[0].pinned, json({{"R0_BLOCK", 1024}}));
  EXPECT_TRUE(rewrites.next(state, {}).empty());  // asked once per search
  EXPECT_EQ(worker_.ops(), std::vector<std::string>{"rewrite"});
}

TEST_F(EngineSearch, AFamilyThatAssertsItsXblockKeepsItFromTheTuner) {
  worker_.on("rewrite", [](const json&) {
    return ok({{"skipped", json::array()},
               {"candidates",
                {{{"code", "def " + kKernel + "(): pass\n"},
                  {"family", "outer_loop"},
                  {"notes", "outer loop: 24 outer indices on a tile of 1024"},
                  {"meta", {{"XBLOCK", 24576}, {"num_warps", 4}}},
                  {"pinned", {"XBLOCK"}}}}}});
  });
  engine::SearchTarget target(*ctx_, module_, kernel(), baseline());
  engine::SearchState state(target, engine::kernel_task(target, {}, ""), 4);
  engine::RewriteFamilies rewrites;
  auto candidates = rewrites.next(state, {});
  ASSERT_EQ(candidates.size(), 1u);
  // outer_loop's kernel asserts XBLOCK == 24 x 1024: the Tuner's XBLOCK=4096 failed to compile on the H100
  EXPECT_EQ(candidates[0].pinned, json({{"XBLOCK", 24576}}));
}

TEST_F(EngineSearch, AKeptRewriteNamesItsFamilyInTheOutcomeAndItsAttempts) {
  answer_all_passing(worker_);
  const std::string source = util::read_file(std::string(KERNELOPT_SOURCE_DIR) + "/tests/fixtures/inductor/softmax.py");
  const artifact::Kernel& k = kernel();
  const std::string kernel_source = source.substr(k.source.begin, k.source.size());
  // the code's facts as `analyze` gives them: its function's decorator, def and last lines
  auto line_of = [&](const std::string& what) {
    return 1 + static_cast<int>(std::count(kernel_source.begin(), kernel_source.begin() + kernel_source.find(what), '\n'));
  };
  json facts = softmax_facts();
  facts["functions"][0]["first_line"] = line_of("@triton_heuristics");
  facts["functions"][0]["line"] = line_of("def " + kKernel);
  facts["functions"][0]["end_line"] = static_cast<int>(std::count(kernel_source.begin(), kernel_source.end(), '\n'));
  worker_.on("analyze", [facts](const json&) { return ok(facts); });
  worker_.on("rewrite", [&](const json&) {
    return ok({{"skipped", json::array()},
               {"candidates", {{{"code", kernel_source}, {"family", "resident_row"}, {"notes", "resident row: one pass"},
                                {"meta", {{"R0_BLOCK", 2048}, {"XBLOCK", 1}, {"num_warps", 8}}}}}}});
  });
  const auto outcome = engine::search_kernel(*ctx_, module_, kernel(), baseline(), 1, {}, "");
  ASSERT_EQ(outcome.status, "improved") << outcome.why << outcome.attempts.dump();
  EXPECT_EQ(outcome.winner_origin, "rewrite");
  EXPECT_EQ(outcome.winner_family, "resident_row");
  ASSERT_FALSE(outcome.attempts.empty());
  for (const auto& a : outcome.attempts) EXPECT_EQ(a.value("family", ""), "resident_row") << a.dump();
}

TEST_F(EngineSearch, TunerSweepLeavesHalfTheRoomWhenTheBatchHoldsRewrittenCode) {
  engine::SearchTarget target(*ctx_, module_, kernel(), baseline());
  engine::SearchState state(target, engine::kernel_task(target, {}, ""), 9);
  engine::TunerSweep alone(target);
  const auto configs = alone.next(state, {});
  ASSERT_FALSE(configs.empty());
  EXPECT_LE(configs.size(), 9u);
  for (const auto& c : configs) {
    EXPECT_EQ(c.origin, "tuner");
    EXPECT_TRUE(c.code.empty());
  }
  engine::Candidate rewritten;
  rewritten.origin = "rewrite";
  rewritten.code = "def k(): pass\n";
  engine::TunerSweep after_code(target);
  // room = 9 - 1 in the batch; half of it (4) stays for tuning the best rewritten kernel
  EXPECT_LE(after_code.next(state, {rewritten}).size(), 4u);
  EXPECT_TRUE(after_code.next(state, {}).empty());  // nothing passed: no best kernel to tune
  EXPECT_TRUE(worker_.requests.empty());            // the offline Tuner asks the worker nothing
}

TEST_F(EngineSearch, OfflineSearchKeepsTheFastestConfigThatPassedAndSaysWhy) {
  answer_all_passing(worker_);
  // each candidate module keeps the time it was first given, a different one each, all faster than the baseline
  std::map<std::string, double> times;
  worker_.on("bench", [&times](const json& args) {
    const int n = args.value("trials", 20);
    json samples = {{"baseline", around(1.0, n)}};
    for (const auto& p : args["candidates"]) {
      const std::string path = p.get<std::string>();
      if (!times.contains(path)) times[path] = 0.8 - 0.05 * static_cast<double>(times.size());
      samples[path] = around(times[path], n);
    }
    return ok({{"samples_ms", samples}});
  });
  const auto outcome = engine::search_kernel(*ctx_, module_, kernel(), baseline(), 6, {}, "");

  ASSERT_EQ(outcome.status, "improved") << outcome.why;
  EXPECT_EQ(outcome.winner_origin, "tuner");
  EXPECT_EQ(outcome.why.rfind("launch config ", 0), 0u) << outcome.why;
  EXPECT_GE(outcome.screened, 2);
  EXPECT_LE(outcome.gated, options_.gate_top_k);  // only the best few configs meet gates 2-4
  ASSERT_FALSE(times.empty());
  auto fastest = std::min_element(times.begin(), times.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
  int kept = 0;
  for (const auto& c : store_->candidates(run_id_)) {
    if (c.status != "kept") continue;
    ++kept;
    EXPECT_NE(fastest->first.find(c.source_hash.substr(0, 12)), std::string::npos) << "kept is not the fastest";
    EXPECT_EQ(c.meta["config"], outcome.winner_config);
  }
  EXPECT_EQ(kept, 1);
  EXPECT_EQ(worker_.ops()[1], "rewrite");  // the rewrite library is asked before the configs are gated
}

TEST_F(EngineSearch, ARejectedCandidateIsNotRunAgainWhenTheRunContinues) {
  answer_all_passing(worker_);
  worker_.on("check", [](const json&) { return ok(check_result(3)); });
  {
    engine::SearchTarget target(*ctx_, module_, kernel(), baseline());
    engine::SearchState state(target, engine::kernel_task(target, {}, ""), 4);
    engine::GatePipeline gates(state);
    gates.evaluate({tuner_config(1024)});
    ASSERT_EQ(state.out.rejected_by["correctness"], 1);
  }
  worker_.requests.clear();
  engine::SearchTarget target(*ctx_, module_, kernel(), baseline());
  engine::SearchState state(target, engine::kernel_task(target, {}, ""), 4);
  engine::GatePipeline gates(state);
  gates.evaluate({tuner_config(1024)});
  EXPECT_EQ(state.used, 0);  // the stored verdict stands: no evaluation spent
  EXPECT_EQ(state.out.rejected_by["correctness"], 1);
  EXPECT_EQ(worker_.ops(), std::vector<std::string>{"analyze"});  // only the original's facts
}

}  // namespace
