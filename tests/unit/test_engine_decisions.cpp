// Whole-model decisions: the whitelist's static gate, judging one decision's evidence, choosing the kept
// one, and the search over a worker that replays `decide` replies (each checked against the protocol)
// with a real SQLite store, resumed.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "engine/context.hpp"
#include "engine/decisions.hpp"
#include "engine/run_dir.hpp"
#include "store/store.hpp"
#include "util/fs.hpp"
#include "worker/protocol.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kernelopt;

namespace {

std::vector<double> around(double ms, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(ms * (1.0 + 0.001 * (i % 5)));
  return out;
}

json runs(bool match) {
  json out = json::array();
  for (int seed : {0, 1, 2}) {
    out.push_back({{"seed", seed}, {"error", nullptr},
                   {"outputs", {{{"index", 0}, {"matches_baseline", match}, {"max_abs_diff", match ? 0.0 : 0.5},
                                 {"ref_err_baseline", match ? json() : json(1e-6)},
                                 {"ref_err_candidate", match ? json() : json(0.5)}}}}});
  }
  return out;
}

json evidence(const std::string& name, double base_ms, double cand_ms, bool match = true, int n = 20) {
  return {{"decision", name}, {"skipped", nullptr}, {"refused", nullptr}, {"runs", runs(match)},
          {"checks", json::object()},
          {"samples_ms", {{"baseline", around(base_ms, n)}, {"candidate", around(cand_ms, n)}}}};
}

const engine::Decision& named(const std::string& name) {
  static std::map<std::string, engine::Decision> all;
  if (all.empty()) {
    for (const auto& d : engine::decision_space()) all[d.name] = d;
  }
  return all.at(name);
}

/// The protocol's verdict on a `decide` request for the decision ("" = admitted).
std::string decide_violation(const engine::Decision& d) {
  return worker::protocol_violation("decide", "args",
                                    {{"problem", "p.py"}, {"decision", {{"name", d.name}, {"settings", d.settings}}},
                                     {"tolerances", engine::OptimizeOptions().tolerances_json()}});
}

}  // namespace

TEST(DecisionStaticGate, EveryWhitelistedDecisionPasses) {
  // default and at most eight to try (the search's cost; cudnn_benchmark compiles as default, a timing only)
  EXPECT_LE(engine::decision_space().size(), 9u);
  for (const auto& d : engine::decision_space()) {
    EXPECT_TRUE(engine::decision_static_gate(d.settings).passed) << d.name;
    EXPECT_EQ(decide_violation(d), "") << d.name;
  }
}

TEST(DecisionStaticGate, SettingsOutsideTheWhitelistFail) {
  const std::vector<std::pair<json, std::string>> bad = {
      {{{"mode", "max-autotune-everything"}}, "mode"},
      {{{"options", {{"triton.unique_kernel_names", true}}}}, "triton.unique_kernel_names"},
      {{{"options", {{"freezing", "yes"}}}}, "boolean"},
      {{{"cudnn_benchmark", 1}}, "cudnn_benchmark is not a boolean"},
      {{{"backend", "eager"}}, "backend"},
      {{{"mode", "reduce-overhead"}, {"options", {{"freezing", true}}}}, "together"},
      {json::array(), "object"},
  };
  for (const auto& [settings, word] : bad) {
    const auto v = engine::decision_static_gate(settings);
    EXPECT_FALSE(v.passed) << settings.dump();
    EXPECT_NE(v.reason.find(word), std::string::npos) << v.reason;
  }
}

TEST(JudgeDecision, FasterAndCorrectPasses) {
  const auto o = engine::judge_decision(named("cudagraphs"), evidence("cudagraphs", 2.0, 1.0));
  EXPECT_EQ(o.status, "passed") << o.why;
  ASSERT_TRUE(o.speedup);
  EXPECT_GT(o.speedup->ci_low, 1.0);
}

TEST(JudgeDecision, SlowerFailsThePerformanceGate) {
  const auto o = engine::judge_decision(named("cudagraphs"), evidence("cudagraphs", 1.0, 2.0));
  EXPECT_EQ(o.status, "rejected");
  EXPECT_EQ(o.gate, "performance");
}

TEST(JudgeDecision, WrongOutputsFailTheModelGateEvenWhenFaster) {
  const auto o = engine::judge_decision(named("freezing"), evidence("freezing", 2.0, 1.0, false));
  EXPECT_EQ(o.status, "rejected");
  EXPECT_EQ(o.gate, "model");
}

TEST(JudgeDecision, SkippedRefusedAndMovedInputsAreNotKept) {
  json skipped = evidence("cudagraphs", 2.0, 1.0);
  skipped["skipped"] = "CUDA graphs need a CUDA device";
  EXPECT_EQ(engine::judge_decision(named("cudagraphs"), skipped).status, "skipped");
  json refused = evidence("cudagraphs", 2.0, 1.0);
  refused["refused"] = "the model writes its inputs";
  const auto r = engine::judge_decision(named("cudagraphs"), refused);
  EXPECT_EQ(r.status, "rejected");
  EXPECT_EQ(r.gate, "decision");
  json moved = evidence("cudagraphs", 2.0, 1.0);
  moved["checks"] = {{"outputs_overwritten", true}, {"new_addresses_ok", false}};
  EXPECT_EQ(engine::judge_decision(named("cudagraphs"), moved).gate, "decision");
}

TEST(ChooseDecision, FastestPassingIsKeptElseDefault) {
  std::vector<engine::DecisionOutcome> outcomes = {
      {"default", json::object(), "baseline", "", "", std::nullopt, json::object()},
      engine::judge_decision(named("cudagraphs"), evidence("cudagraphs", 2.0, 1.0)),
      engine::judge_decision(named("max_autotune"), evidence("max_autotune", 2.0, 1.6)),
  };
  EXPECT_EQ(engine::choose_decision(outcomes), "cudagraphs");
  EXPECT_EQ(outcomes[1].status, "kept");
  EXPECT_EQ(outcomes[2].status, "passed");
  EXPECT_EQ(outcomes[0].status, "baseline");
  std::vector<engine::DecisionOutcome> none = {
      {"default", json::object(), "baseline", "", "", std::nullopt, json::object()},
      engine::judge_decision(named("cudagraphs"), evidence("cudagraphs", 1.0, 2.0)),
  };
  EXPECT_EQ(engine::choose_decision(none), "default");
  EXPECT_EQ(none[0].status, "kept");
}

namespace {

// Answers `decide` from a table of (base, candidate) medians per decision; counts the requests.
class DecideWorker final : public engine::WorkerLink {
 public:
  std::map<std::string, std::pair<double, double>> times;
  std::vector<std::string> asked;
  std::vector<int> waits_ms;      // how long the engine said it would wait for each request
  std::set<std::string> hanging;  // decisions whose request times out (a compile that never ends)
  worker::Reply request(const std::string& op, const json& args, int timeout_ms) override {
    EXPECT_EQ(op, "decide");
    EXPECT_EQ(worker::protocol_violation(op, "args", args), "") << args.dump();
    const std::string name = args["decision"]["name"];
    asked.push_back(name);
    waits_ms.push_back(timeout_ms);
    worker::Reply r;
    if (hanging.count(name)) {
      r.status = worker::Status::timeout;
      r.kind = "timeout";
      r.error = "no reply within the timeout";
      return r;
    }
    auto it = times.find(name);
    r.result = it == times.end() ? evidence(name, 1.0, 1.0) : evidence(name, it->second.first, it->second.second);
    if (name == "cudagraphs" && args["device"] == "cpu") r.result["skipped"] = "CUDA graphs need a CUDA device";
    r.phases = {{"decide.compile_decision", 2.5}, {"decide.timing", 0.5}};  // as the worker's reply carries them
    EXPECT_EQ(worker::protocol_violation(op, "result", r.result), "") << r.result.dump();
    return r;
  }
};

class DecisionSearch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kernelopt_decisions_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_.emplace(store::Store::open(dir_ / "store.db"));
    store::RunRecord rec;
    rec.input_path = "net.py";
    rec.input_hash = "h";
    rec.out_dir = dir_.string();
    rec.status = "running";
    run_id_ = store_->create_run(rec);
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  engine::DecisionSearch search(const std::string& device, bool continuing,
                                const std::function<double()>& elapsed_s = {}) {
    engine::Context ctx{options_, engine::input_kind_named("module"), worker_, *store_, run_id_, dir_,
                        {{"problem", "net.py"}, {"device", device}, {"seeds", {0, 1, 2}}, {"input_kind", "module"}}};
    ctx.continuing = continuing;
    return engine::search_decisions(ctx, elapsed_s);
  }
  engine::OptimizeOptions options_;
  DecideWorker worker_;
  fs::path dir_;
  std::optional<store::Store> store_;
  std::int64_t run_id_ = 0;
};

}  // namespace

TEST_F(DecisionSearch, KeepsTheFastestPassingAndRecordsEveryVerdict) {
  worker_.times = {{"max_autotune", {2.0, 1.5}}, {"freezing", {2.0, 1.2}}};
  const auto s = search("cuda", false);
  EXPECT_EQ(s.kept.name, "freezing");
  // every single decision but default, then the one composition of the two that passed (not faster here)
  const std::size_t asked = engine::decision_space().size() - 1 + 1;
  ASSERT_EQ(worker_.asked.size(), asked);
  EXPECT_EQ(worker_.asked.back(), "freezing+max_autotune");
  EXPECT_EQ(store_->candidates(run_id_).size(), asked);
  const json j = s.to_json();
  EXPECT_EQ(j["kept"], "freezing");
  EXPECT_EQ(j["tried"].size(), asked + 1);
  for (const auto& t : j["tried"]) {  // each decide request's seconds; default asks nothing
    EXPECT_EQ(t["seconds"].is_number(), t["name"] != "default") << t.dump();
    if (t["seconds"].is_number()) {
      EXPECT_GE(t["seconds"].get<double>(), 0.0);
      EXPECT_EQ(t["phases_s"], json({{"decide.compile_decision", 2.5}, {"decide.timing", 0.5}}));  // the request's phases
      EXPECT_EQ(engine::DecisionOutcome::from_json(t).to_json(), t);  // and read back as written (resume)
    }
  }
}

TEST(DecisionCompose, ModesBecomeTheOptionsTorchCompileTurnsThemInto) {
  EXPECT_EQ(engine::options_of(named("cudagraphs").settings), json({{"triton.cudagraphs", true}}));
  EXPECT_EQ(engine::options_of(named("max_autotune").settings),
            json({{"max_autotune", true}, {"coordinate_descent_tuning", true}}));
  EXPECT_EQ(engine::options_of(named("cudagraphs_max_autotune").settings),
            json({{"max_autotune", true}, {"coordinate_descent_tuning", true}, {"triton.cudagraphs", true}}));
  EXPECT_EQ(engine::options_of(named("freezing").settings), json({{"freezing", true}}));
  EXPECT_EQ(engine::options_of(named("channels_last").settings), json::object());
}

TEST(DecisionCompose, TheUnionOfSettingsPassesTheStaticGateAndTheProtocol) {
  const engine::Decision c = engine::compose(named("cudagraphs"), named("freezing"));
  EXPECT_EQ(c.name, "cudagraphs+freezing");
  EXPECT_EQ(c.settings, json({{"options", {{"triton.cudagraphs", true}, {"freezing", true}}}}));
  const engine::Decision cl = engine::compose(c, named("channels_last"));
  EXPECT_EQ(cl.settings["channels_last"], true);
  EXPECT_EQ(cl.settings["options"].size(), 2u);
  for (const auto& d : {c, cl}) {
    EXPECT_TRUE(engine::decision_static_gate(d.settings).passed) << d.name;
    EXPECT_EQ(decide_violation(d), "") << d.name;
  }
  // what compiles the same: max-autotune already has CUDA graphs; channels_last twice; a mode and its options
  const auto same = [](const engine::Decision& a, const engine::Decision& b) {
    return engine::compiled_as(a.settings) == engine::compiled_as(b.settings);
  };
  EXPECT_TRUE(same(engine::compose(named("cudagraphs_max_autotune"), named("cudagraphs")),
                   named("cudagraphs_max_autotune")));
  EXPECT_TRUE(same(engine::compose(cl, named("channels_last")), cl));
  EXPECT_TRUE(same(engine::compose(named("cudagraphs"), named("max_autotune")), named("cudagraphs_max_autotune")));
  EXPECT_FALSE(same(c, named("cudagraphs")));
  EXPECT_FALSE(same(cl, c));
  // cuDNN's autotuning compiles as default but runs otherwise: a decision of its own, kept in compositions
  EXPECT_FALSE(same(named("cudnn_benchmark"), named("default")));
  const engine::Decision cb = engine::compose(named("channels_last"), named("cudnn_benchmark"));
  EXPECT_EQ(cb.settings, json({{"channels_last", true}, {"cudnn_benchmark", true}}));
  EXPECT_TRUE(engine::decision_static_gate(cb.settings).passed);
  EXPECT_EQ(decide_violation(cb), "");
  EXPECT_FALSE(same(cb, named("channels_last")));
  EXPECT_TRUE(same(engine::compose(cb, named("cudnn_benchmark")), cb));
}

TEST_F(DecisionSearch, ACompositionThatBeatsTheBestIsKeptAndBuiltOn) {
  worker_.times = {{"cudagraphs", {2.0, 1.0}},
                   {"freezing", {2.0, 1.6}},
                   {"channels_last", {2.0, 1.8}},
                   {"cudagraphs+freezing", {2.0, 0.8}},
                   {"cudagraphs+freezing+channels_last", {2.0, 0.9}}};
  const auto s = search("cuda", false);
  EXPECT_EQ(s.kept.name, "cudagraphs+freezing");
  EXPECT_EQ(s.kept.settings, json({{"options", {{"triton.cudagraphs", true}, {"freezing", true}}}}));
  const std::vector<std::string> compositions(worker_.asked.end() - 2, worker_.asked.end());
  EXPECT_EQ(compositions, (std::vector<std::string>{"cudagraphs+freezing", "cudagraphs+freezing+channels_last"}));
  int kept = 0;
  for (const auto& o : s.outcomes) kept += o.status == "kept";
  EXPECT_EQ(kept, 1);
}

TEST_F(DecisionSearch, ACompositionEqualToADecisionAlreadyJudgedIsNotAskedAgain) {
  // cudagraphs + max_autotune compiles as cudagraphs_max_autotune (mode max-autotune), judged already
  worker_.times = {{"cudagraphs", {2.0, 1.0}}, {"max_autotune", {2.0, 1.5}}, {"cudagraphs_max_autotune", {2.0, 1.1}}};
  const auto s = search("cuda", false);
  for (const auto& name : worker_.asked) EXPECT_EQ(name.find("cudagraphs+max_autotune"), std::string::npos) << name;
  // the next passing one is composed instead: cudagraphs + cudagraphs_max_autotune adds max-autotune too, the
  // same again, so no composition at all is asked
  EXPECT_EQ(worker_.asked.size(), engine::decision_space().size() - 1);
  EXPECT_EQ(s.kept.name, "cudagraphs");
}

TEST_F(DecisionSearch, OnePassingDecisionIsNotComposed) {
  worker_.times = {{"freezing", {2.0, 1.2}}};
  search("cuda", false);
  EXPECT_EQ(worker_.asked.size(), engine::decision_space().size() - 1);
}

TEST_F(DecisionSearch, CudaGraphsSkippedOnTheCpuAndNothingFasterKeepsDefault) {
  const auto s = search("cpu", false);
  EXPECT_EQ(s.kept.name, "default");
  for (const auto& o : s.outcomes) {
    if (o.name == "cudagraphs") {
      EXPECT_EQ(o.status, "skipped");
    }
  }
}

TEST_F(DecisionSearch, AResumedRunSkipsDecisionsAlreadyJudged) {
  worker_.times = {{"coordinate_descent", {2.0, 1.3}}};
  search("cuda", false);
  worker_.asked.clear();
  const auto again = search("cuda", true);
  EXPECT_TRUE(worker_.asked.empty());
  EXPECT_EQ(again.kept.name, "coordinate_descent");
}

TEST_F(DecisionSearch, WithoutTheFlagNothingIsAskedAndNoRequestOrManifestChanges) {
  util::write_file_atomic(dir_ / "net.py", "# a problem\n");
  auto run_dir = engine::RunDir::prepare(dir_ / "run", dir_ / "net.py", "h");
  const json base = {{"problem", "net.py"}, {"device", "cuda"}, {"seeds", {0, 1, 2}}, {"input_kind", "module"}};
  engine::Context ctx{options_, engine::input_kind_named("module"), worker_, *store_, run_id_, dir_, base};
  EXPECT_TRUE(engine::decisions_before_capture(ctx, run_dir).is_null());
  EXPECT_TRUE(worker_.asked.empty());
  EXPECT_EQ(ctx.base_args, base);
  run_dir.write_manifest();
  EXPECT_FALSE(json::parse(util::read_file(dir_ / "run" / "manifest.json")).contains("decision"));
}

TEST_F(DecisionSearch, WithTheFlagTheKeptSettingsReachTheCaptureAndTheManifest) {
  util::write_file_atomic(dir_ / "net.py", "# a problem\n");
  auto run_dir = engine::RunDir::prepare(dir_ / "run", dir_ / "net.py", "h");
  options_.decisions = true;
  worker_.times = {{"freezing", {2.0, 1.2}}};
  engine::Context ctx{options_, engine::input_kind_named("module"), worker_, *store_, run_id_, dir_,
                      {{"problem", "net.py"}, {"device", "cuda"}, {"seeds", {0, 1, 2}}, {"input_kind", "module"}}};
  const json report = engine::decisions_before_capture(ctx, run_dir);
  EXPECT_EQ(report["kept"], "freezing");
  EXPECT_EQ(ctx.base_args["compile_settings"], json({{"options", {{"freezing", true}}}}));
  json capture = ctx.base_args;
  capture["out_dir"] = "x";
  EXPECT_EQ(worker::protocol_violation("capture", "args", capture), "");
  run_dir.write_manifest();
  const json manifest = json::parse(util::read_file(dir_ / "run" / "manifest.json"));
  EXPECT_EQ(manifest["decision"]["kept"], "freezing");
}

TEST_F(DecisionSearch, TheStoreMarksTheKeptDecision) {
  worker_.times = {{"max_autotune", {2.0, 1.5}}};
  search("cpu", false);
  int kept = 0;
  for (const auto& c : store_->candidates(run_id_)) {
    if (c.status == "kept") {
      ++kept;
      EXPECT_EQ(c.source_hash, "max_autotune");
    }
  }
  EXPECT_EQ(kept, 1);
}

TEST_F(DecisionSearch, ASkippedDecisionIsStoredAsSkippedAndResumesAsSkipped) {
  search("cpu", false);
  int skipped = 0;
  for (const auto& c : store_->candidates(run_id_)) {
    if (c.source_hash == "cudagraphs") {
      EXPECT_EQ(c.status, "skipped");
      const auto vs = store_->verdicts(c.id);
      ASSERT_EQ(vs.size(), 1u);
      EXPECT_EQ(vs[0].gate, "decision");
      EXPECT_FALSE(vs[0].passed);
      EXPECT_EQ(vs[0].reason, "CUDA graphs need a CUDA device");
    } else {
      EXPECT_EQ(c.status, "rejected") << c.source_hash;  // no faster than default: the performance gate
    }
    skipped += c.status == "skipped";
  }
  EXPECT_EQ(skipped, 1);
  worker_.asked.clear();
  const auto again = search("cpu", true);
  EXPECT_TRUE(worker_.asked.empty());
  for (const auto& o : again.outcomes) {
    if (o.name == "cudagraphs") {
      EXPECT_EQ(o.status, "skipped");
    }
  }
}

namespace {

const engine::DecisionOutcome& outcome_of(const engine::DecisionSearch& s, const std::string& name) {
  for (const auto& o : s.outcomes) {
    if (o.name == name) return o;
  }
  throw std::runtime_error("no outcome for " + name);
}

}  // namespace

TEST_F(DecisionSearch, TheAllowanceBoundsEachRequestAndSkipsWhatItCannotStart) {
  options_.decisions_seconds = 60;
  worker_.times = {{"freezing", {2.0, 1.5}}};
  // each decide request takes 25 s of the search's clock: 0, 25, 50 s at the first three starts, 75 s at the fourth
  const auto s = search("cuda", false, [this] { return 25.0 * static_cast<double>(worker_.asked.size()); });
  ASSERT_EQ(worker_.asked, (std::vector<std::string>{"cudagraphs", "freezing", "channels_last"}));
  // the first waits the allowance (60 s is under --timeout's 900 s), the next what is left of it
  EXPECT_EQ(worker_.waits_ms, (std::vector<int>{60000, 35000, 10000}));
  EXPECT_EQ(s.kept.name, "freezing");  // judged within the allowance, kept on its merits
  for (const char* name :
       {"cudnn_benchmark", "combo_kernels", "coordinate_descent", "max_autotune", "cudagraphs_max_autotune"}) {
    const auto& o = outcome_of(s, name);
    EXPECT_EQ(o.status, "skipped") << name;
    EXPECT_EQ(o.why, "not tried: the decision search's 60 s were spent (--decisions-seconds)") << name;
    EXPECT_FALSE(o.seconds.has_value()) << name;
  }
  // skipped rows are recorded like the others (a resumed run reads them back)
  EXPECT_EQ(store_->candidates(run_id_).size(), engine::decision_space().size() - 1);
}

TEST_F(DecisionSearch, ADecisionTheAllowanceStopsIsSkippedNotRejected) {
  options_.decisions_seconds = 60;
  worker_.hanging = {"max_autotune"};
  const auto s = search("cuda", false, [] { return 20.0; });  // 40 s left at every start
  const auto& o = outcome_of(s, "max_autotune");
  EXPECT_EQ(o.status, "skipped");
  EXPECT_EQ(o.why, "stopped: not done in the 40 s left of the decision search's 60 s (--decisions-seconds)");
  ASSERT_TRUE(o.seconds.has_value());
  // a request that outlives the run's own --timeout (shorter than what the allowance leaves) is the worker's failure
  options_.decisions_seconds = 0;
  options_.request_timeout_s = 30;
  worker_.asked.clear();
  worker_.waits_ms.clear();
  const auto t = search("cuda", false);
  EXPECT_EQ(outcome_of(t, "max_autotune").status, "rejected");
  EXPECT_EQ(outcome_of(t, "max_autotune").gate, "worker");
  for (int w : worker_.waits_ms) EXPECT_EQ(w, 30000);  // no allowance: every request waits --timeout
  EXPECT_EQ(worker_.asked.size(), engine::decision_space().size() - 1);
}

TEST(DecisionEndToEnd, AKeptDecisionIsConfirmedOnlyWhenTheCheckPassedAndItIsNotSlower) {
  const json kept = {{"kept", "channels_last"},
                     {"settings", {{"channels_last", true}}},
                     {"tried", {{{"name", "default"}, {"status", "baseline"}},
                                {{"name", "channels_last"}, {"status", "kept"}, {"why", "the fastest"}}}}};
  verify::SpeedupEstimate faster, slower;
  faster.speedup = 1.011, faster.ci_low = 1.004, faster.ci_high = 1.015;
  slower.speedup = 0.97, slower.ci_low = 0.96, slower.ci_high = 0.98;
  EXPECT_EQ(engine::decision_unconfirmed_why(kept, true, faster), "");
  EXPECT_EQ(engine::decision_unconfirmed_why(kept, false, faster), "the end-to-end check did not pass");
  EXPECT_EQ(engine::decision_unconfirmed_why(kept, true, slower),
            "end to end 0.970x [0.960, 0.980] is not faster than torch.compile default");
  // nothing to confirm: default kept, or no --decisions
  EXPECT_EQ(engine::decision_unconfirmed_why({{"kept", "default"}}, false, slower), "");
  EXPECT_EQ(engine::decision_unconfirmed_why(json(), false, slower), "");

  const json dropped = engine::drop_kept_decision(kept, "the end-to-end check did not pass");
  EXPECT_EQ(dropped["kept"], "default");
  EXPECT_EQ(dropped["settings"], json::object());
  EXPECT_EQ(dropped["dropped"], json({{"name", "channels_last"}, {"why", "the end-to-end check did not pass"}}));
  EXPECT_EQ(dropped["tried"][1]["status"], "dropped");
  EXPECT_EQ(dropped["tried"][1]["why"], "passed its gates, but the end-to-end check did not pass");
  EXPECT_EQ(dropped["tried"][0]["status"], "baseline");
  EXPECT_EQ(engine::decision_unconfirmed_why(dropped, false, slower), "");  // once dropped, nothing left to drop
}

