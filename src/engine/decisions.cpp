#include "engine/decisions.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "engine/context.hpp"
#include "engine/run_dir.hpp"
#include "report/report.hpp"
#include "verify/model_gate.hpp"

namespace kernelopt::engine {

using nlohmann::json;

namespace {

const std::set<std::string> kModes = {"reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune"};
// the options a decision may set: the single decisions' own and those a mode stands for (compositions)
const std::set<std::string> kOptions = {"coordinate_descent_tuning", "combo_kernels", "freezing", "triton.cudagraphs",
                                        "max_autotune"};
// compositions tried after the single decisions (each one more `decide` request: the search's cost)
constexpr int kMaxCompositions = 2;
// a decision's row in the store: a candidate of no module, named after the decision
constexpr int kDecisionModule = -1;
const std::string kDecisionKernel = "decision";

verify::Verdict static_fail(const std::string& why, const json& settings) {
  return {"static", false, why, {{"settings", settings}}};
}

std::vector<double> samples_of(const json& evidence, const char* key) {
  std::vector<double> out;
  const json& s = evidence.value("samples_ms", json::object());
  if (!s.is_object() || !s.contains(key) || !s[key].is_array()) return out;
  for (const auto& v : s[key]) {
    if (v.is_number()) out.push_back(v.get<double>());
  }
  return out;
}

DecisionOutcome rejected(DecisionOutcome o, const std::string& gate, const std::string& why) {
  o.status = "rejected";
  o.gate = gate;
  o.why = why;
  return o;
}

}  // namespace

json options_of(const json& settings) {
  json opts = json::object();
  const json mode = settings.value("mode", json());
  if (mode == "reduce-overhead" || mode == "max-autotune") opts["triton.cudagraphs"] = true;
  if (mode == "max-autotune-no-cudagraphs" || mode == "max-autotune") {
    opts["max_autotune"] = true;
    opts["coordinate_descent_tuning"] = true;
  }
  const json own = settings.value("options", json::object());  // a named copy: items() of a temporary dangles
  for (const auto& [k, v] : own.items()) opts[k] = v;
  return opts;
}

json compiled_as(const json& settings) {
  return json{options_of(settings), settings.value("channels_last", false), settings.value("cudnn_benchmark", false)};
}

Decision compose(const Decision& a, const Decision& b) {
  json opts = options_of(a.settings);
  const json added = options_of(b.settings);
  for (const auto& [k, v] : added.items()) opts[k] = v;
  json settings = json::object();
  if (!opts.empty()) settings["options"] = opts;
  if (a.settings.value("channels_last", false) || b.settings.value("channels_last", false))
    settings["channels_last"] = true;
  if (a.settings.value("cudnn_benchmark", false) || b.settings.value("cudnn_benchmark", false))
    settings["cudnn_benchmark"] = true;
  return Decision{a.name + "+" + b.name, settings, a.what + "; " + b.what};
}

const std::vector<Decision>& decision_space() {
  // cheapest compiles first (max-autotune's, the longest, last), so a run cut short has judged most
  static const std::vector<Decision> space = {
      {"default", json::object(), "torch.compile with no settings (the baseline)"},
      {"cudagraphs", {{"mode", "reduce-overhead"}}, "CUDA graphs (cudagraph trees): one replay per call"},
      {"freezing", {{"options", {{"freezing", true}}}}, "weights as constants (conv-BN folded), inference only"},
      {"channels_last", {{"channels_last", true}}, "model and 4-D inputs channels_last (convolution networks)"},
      // compiles as default (the flag is read at call time): the cost is its timing, not a compile
      {"cudnn_benchmark", {{"cudnn_benchmark", true}},
       "cuDNN's autotuning (torch.backends.cudnn.benchmark), each call on a thread of its own: its fastest "
       "algorithm per convolution shape (convolution networks)"},
      {"combo_kernels", {{"options", {{"combo_kernels", true}}}},
       "Inductor's combo (horizontal) kernels: independent small kernels fused into one launch"},
      {"coordinate_descent", {{"options", {{"coordinate_descent_tuning", true}}}},
       "Inductor's coordinate-descent tuning of kernel configs"},
      {"max_autotune", {{"mode", "max-autotune-no-cudagraphs"}}, "Inductor's GEMM/conv templates, epilogues fused"},
      {"cudagraphs_max_autotune", {{"mode", "max-autotune"}}, "the templates and CUDA graphs together"},
  };
  return space;
}

verify::Verdict decision_static_gate(const json& settings) {
  if (!settings.is_object()) return static_fail("settings are not an object", settings);
  for (const auto& [key, value] : settings.items()) {
    if (key == "mode") {
      if (!value.is_null() && !(value.is_string() && kModes.count(value.get<std::string>()))) {
        return static_fail("mode " + value.dump() + " is not one of the whitelisted torch.compile modes", settings);
      }
    } else if (key == "options") {
      if (!value.is_object()) return static_fail("options are not an object", settings);
      for (const auto& [opt, v] : value.items()) {
        if (!kOptions.count(opt)) return static_fail("Inductor option " + opt + " is not whitelisted", settings);
        if (!v.is_boolean()) return static_fail("Inductor option " + opt + " is not a boolean", settings);
      }
    } else if (key == "channels_last" || key == "cudnn_benchmark") {
      if (!value.is_boolean()) return static_fail(key + " is not a boolean", settings);
    } else {
      return static_fail("setting " + key + " is not whitelisted", settings);
    }
  }
  const bool has_mode = settings.contains("mode") && !settings["mode"].is_null();
  if (has_mode && settings.contains("options") && !settings["options"].empty()) {
    return static_fail("a mode and Inductor options together (torch.compile takes one or the other)", settings);
  }
  return {"static", true, "", {{"settings", settings}}};
}

json DecisionOutcome::to_json() const {
  json j = {{"name", name}, {"settings", settings}, {"status", status}, {"why", why}, {"gate", gate},
            {"checks", checks}, {"speedup", nullptr}, {"seconds", seconds ? json(*seconds) : json(nullptr)},
            {"phases_s", phases}};
  if (speedup) {
    j["speedup"] = {{"speedup", speedup->speedup}, {"ci_low", speedup->ci_low}, {"ci_high", speedup->ci_high},
                    {"baseline_ms", speedup->baseline_median}, {"candidate_ms", speedup->candidate_median},
                    {"n", speedup->n_candidate}};
  }
  return j;
}

DecisionOutcome DecisionOutcome::from_json(const json& j) {
  DecisionOutcome o;
  o.name = j.value("name", "");
  o.settings = j.value("settings", json::object());
  o.status = j.value("status", "");
  o.why = j.value("why", "");
  o.gate = j.value("gate", "");
  o.checks = j.value("checks", json());
  if (j.contains("seconds") && j["seconds"].is_number()) o.seconds = j["seconds"].get<double>();
  if (j.contains("phases_s")) o.phases = worker::phases_from_json(j["phases_s"]);
  if (j.contains("speedup") && j["speedup"].is_object()) {
    const json& s = j["speedup"];
    verify::SpeedupEstimate e;
    e.speedup = s.value("speedup", 1.0);
    e.ci_low = s.value("ci_low", 1.0);
    e.ci_high = s.value("ci_high", 1.0);
    e.baseline_median = s.value("baseline_ms", 0.0);
    e.candidate_median = s.value("candidate_ms", 0.0);
    e.n_baseline = e.n_candidate = s.value("n", std::size_t{0});
    o.speedup = e;
  }
  return o;
}

DecisionOutcome judge_decision(const Decision& d, const json& evidence, int min_samples) {
  DecisionOutcome o{d.name, d.settings, "", "", "", std::nullopt, evidence.value("checks", json::object())};
  if (evidence.contains("skipped") && evidence["skipped"].is_string()) {
    o.status = "skipped";
    o.why = evidence["skipped"].get<std::string>();
    return o;
  }
  if (evidence.contains("refused") && evidence["refused"].is_string()) {
    return rejected(o, "decision", evidence["refused"].get<std::string>());
  }
  const verify::Verdict model = verify::model_gate(evidence);
  if (!model.passed) return rejected(o, "model", model.reason);
  if (o.checks.is_object() && o.checks.value("new_addresses_ok", true) == false) {
    return rejected(o, "decision", "inputs at new addresses gave other answers than the first call's");
  }
  const auto base = samples_of(evidence, "baseline");
  const auto cand = samples_of(evidence, "candidate");
  if (static_cast<int>(std::min(base.size(), cand.size())) < min_samples) {
    return rejected(o, "performance", "fewer than " + std::to_string(min_samples) + " timing samples per series");
  }
  try {
    o.speedup = verify::estimate_speedup(base, cand);
  } catch (const std::invalid_argument& e) {
    return rejected(o, "performance", std::string("bad timing samples: ") + e.what());
  }
  if (!o.speedup->faster_beyond_noise(1.0)) {
    return rejected(o, "performance", "not faster than torch.compile default beyond noise");
  }
  o.status = "passed";
  o.why = "passed every gate";
  return o;
}

std::string choose_decision(std::vector<DecisionOutcome>& outcomes) {
  DecisionOutcome* best = nullptr;
  for (auto& o : outcomes) {
    if (o.status == "passed" && (!best || o.speedup->speedup > best->speedup->speedup)) best = &o;
  }
  for (auto& o : outcomes) {
    if (best && &o != best && o.status == "passed") o.why = "passed, but " + best->name + " is faster";
  }
  if (best) {
    best->status = "kept";
    best->why = "the fastest decision that passed every gate";
    return best->name;
  }
  for (auto& o : outcomes) {
    if (o.name == "default") {
      o.status = "kept";
      o.why = "no other decision passed every gate";
    }
  }
  return "default";
}

json DecisionSearch::to_json() const {
  json tried = json::array();
  for (const auto& o : outcomes) tried.push_back(o.to_json());
  return {{"kept", kept.name}, {"settings", kept.settings}, {"tried", tried}};
}

namespace {

/// The outcome a resumed run's store already holds for the decision, if any.
std::optional<DecisionOutcome> recorded_outcome(Context& ctx, const std::string& name) {
  for (const auto& c : ctx.store.candidates(ctx.run_id)) {
    if (c.module != kDecisionModule || c.kernel != kDecisionKernel || c.source_hash != name) continue;
    for (const auto& v : ctx.store.verdicts(c.id)) {
      if (v.gate == "decision") return DecisionOutcome::from_json(v.evidence);
    }
  }
  return std::nullopt;
}

/// The decision's row (a candidate: passed, skipped, or rejected for any other outcome; "kept" is set later)
/// and its verdict; returns the row's id.
std::int64_t record_outcome(Context& ctx, const DecisionOutcome& o) {
  store::CandidateRecord c;
  c.run_id = ctx.run_id;
  c.module = kDecisionModule;
  c.kernel = kDecisionKernel;
  c.source_hash = o.name;
  c.origin = "decisions";
  c.meta = o.settings;
  c.status = o.status == "passed" || o.status == "skipped" ? o.status : "rejected";
  const auto [rec, inserted] = ctx.store.add_candidate(c);
  (void)inserted;
  store::VerdictRecord v;
  v.candidate_id = rec.id;
  v.gate = "decision";
  v.passed = o.status == "passed";
  v.reason = o.why;
  v.evidence = o.to_json();
  ctx.store.add_verdict(v);
  return rec.id;
}

/// A decision's outcome before anything is known of it.
DecisionOutcome untried(const Decision& d) { return {d.name, d.settings, "", "", "", std::nullopt, json::object()}; }

DecisionOutcome skipped(DecisionOutcome o, const std::string& why) {
  o.status = "skipped";
  o.why = why;
  return o;
}

/// One decide request, waiting up to left_s when the search's allowance leaves less than the run's --timeout
/// (left_s <= 0: no allowance): a decision the allowance stops is skipped, not rejected (the worker was
/// stopped mid-compile; the next request starts a fresh one).
DecisionOutcome try_decision(Context& ctx, const Decision& d, double left_s) {
  const DecisionOutcome o = untried(d);
  const verify::Verdict st = decision_static_gate(d.settings);
  if (!st.passed) return rejected(o, "static", st.reason);
  json args = ctx.base_args;
  args["decision"] = {{"name", d.name}, {"settings", d.settings}};
  args["tolerances"] = ctx.options.tolerances_json();
  args["trials"] = ctx.options.gate_trials;
  const bool allowance_first = left_s > 0 && left_s * 1000 < ctx.timeout_ms();
  const int wait_ms = allowance_first ? static_cast<int>(std::ceil(left_s * 1000)) : ctx.timeout_ms();
  const auto start = std::chrono::steady_clock::now();
  const worker::Reply r = ctx.ask("decide", args, wait_ms);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  DecisionOutcome judged;
  if (r.ok()) {
    judged = judge_decision(d, r.result);
  } else if (allowance_first && r.status == worker::Status::timeout) {
    judged = skipped(o, fmt::format("stopped: not done in the {:.0f} s left of the decision search's {} s "
                                    "(--decisions-seconds)", left_s, ctx.options.decisions_seconds));
  } else {
    judged = rejected(o, "worker", r.error);
  }
  judged.seconds = seconds;
  judged.phases = r.phases;
  return judged;
}

}  // namespace

DecisionSearch search_decisions(Context& ctx, const std::function<double()>& elapsed_s) {
  const int allowance = ctx.options.decisions_seconds;
  spdlog::info("[0/5] whole-model decisions: {} to try, then up to {} compositions of those that pass{}",
               decision_space().size() - 1, kMaxCompositions,
               allowance > 0 ? fmt::format(", within {} s (--decisions-seconds)", allowance) : "");
  const auto start = std::chrono::steady_clock::now();
  const std::function<double()> elapsed = elapsed_s ? elapsed_s : [start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  DecisionSearch search;
  std::map<std::string, std::int64_t> ids;  // decision -> its store row, for those judged in this invocation
  std::map<std::string, Decision> tried;    // every decision by name, compositions included
  // a decision judged now, or the outcome a resumed run's store already holds; progress line either way
  auto judge = [&](const Decision& d) {
    tried[d.name] = d;
    auto recorded = ctx.continuing ? recorded_outcome(ctx, d.name) : std::nullopt;
    // not started once the allowance is spent (max-autotune's compile took 122 s of a 159 s search on an
    // H200: bench/results/2026-12-07-decisions-h200)
    const double left = allowance > 0 ? allowance - elapsed() : 0.0;
    DecisionOutcome o;
    if (recorded) {
      o = *recorded;
    } else if (allowance > 0 && left <= 0.0) {
      o = skipped(untried(d), fmt::format("not tried: the decision search's {} s were spent (--decisions-seconds)",
                                          allowance));
    } else {
      o = try_decision(ctx, d, left);
    }
    if (!recorded) ids[d.name] = record_outcome(ctx, o);
    if (o.speedup) {
      // the decision's own compile, where the worker said (its phases): what the search's time is mostly made of
      const auto compile = o.phases.find("decide.compile_decision");
      const std::string compile_s =
          compile == o.phases.end() ? "" : fmt::format(", its compile {:.0f} s", compile->second);
      spdlog::info("  decision {}: {} {:.3f}x [{:.3f}, {:.3f}] ({:.0f} s{}){}", o.name, o.status, o.speedup->speedup,
                   o.speedup->ci_low, o.speedup->ci_high, o.seconds.value_or(0.0), compile_s,
                   recorded ? " (recorded)" : "");
    } else {
      spdlog::info("  decision {}: {}: {}{}", o.name, o.status, o.why, recorded ? " (recorded)" : "");
    }
    search.outcomes.push_back(o);
    return o;
  };
  for (const auto& d : decision_space()) {
    if (d.name == "default") {
      tried[d.name] = d;
      search.outcomes.push_back({d.name, d.settings, "baseline", "the baseline every decision is timed against",
                                 "", std::nullopt, json::object()});
      continue;
    }
    judge(d);
  }
  // compositions: the fastest passing decision with each next passing one (fastest first), kept as the one to
  // build on when it passes and beats it; each judged by the same gates against torch.compile default
  std::vector<std::pair<double, std::string>> passed;
  for (const auto& o : search.outcomes) {
    if (o.status == "passed") passed.emplace_back(o.speedup->speedup, o.name);
  }
  std::sort(passed.rbegin(), passed.rend());
  if (!passed.empty()) {
    Decision current = tried.at(passed[0].second);
    double best = passed[0].first;
    int composed = 0;
    // a composition that compiles as a decision already judged (b adds nothing to current, or cudagraphs +
    // max_autotune = cudagraphs_max_autotune) is not asked again
    std::set<json> judged;
    for (const auto& [name, d] : tried) judged.insert(compiled_as(d.settings));
    for (std::size_t i = 1; i < passed.size() && composed < kMaxCompositions; ++i) {
      const Decision c = compose(current, tried.at(passed[i].second));
      if (!judged.insert(compiled_as(c.settings)).second) continue;
      ++composed;
      const DecisionOutcome o = judge(c);
      if (o.status == "passed" && o.speedup->speedup > best) {
        current = c;
        best = o.speedup->speedup;
      }
    }
  }
  search.kept = tried.at(choose_decision(search.outcomes));
  if (ids.count(search.kept.name)) ctx.store.set_candidate_status(ids[search.kept.name], "kept");
  spdlog::info("  kept decision: {}", search.kept.name);
  return search;
}

json decisions_before_capture(Context& ctx, RunDir& run_dir) {
  if (!ctx.options.decisions) return nullptr;
  const DecisionSearch search = search_decisions(ctx);
  run_dir.set_decision({{"kept", search.kept.name}, {"settings", search.kept.settings}});
  // the kernel search runs on the kept decision's output modules; default adds nothing to any request
  if (search.kept.name != "default") ctx.base_args["compile_settings"] = search.kept.settings;
  return search.to_json();
}

std::string decision_unconfirmed_why(const json& decisions, bool passed, const verify::SpeedupEstimate& e2e) {
  if (report::kept_decision(decisions).empty()) return "";
  if (!passed) return "the end-to-end check did not pass";
  if (e2e.speedup < 1.0) {
    return fmt::format("end to end {:.3f}x [{:.3f}, {:.3f}] is not faster than torch.compile default", e2e.speedup,
                       e2e.ci_low, e2e.ci_high);
  }
  return "";
}

json drop_kept_decision(json decisions, const std::string& why) {
  const std::string name = decisions.value("kept", "default");
  for (auto& t : decisions["tried"]) {
    if (t.value("name", "") != name) continue;
    t["status"] = "dropped";
    t["why"] = "passed its gates, but " + why;
  }
  decisions["dropped"] = {{"name", name}, {"why", why}};
  decisions["kept"] = "default";
  decisions["settings"] = json::object();
  return decisions;
}

}  // namespace kernelopt::engine
