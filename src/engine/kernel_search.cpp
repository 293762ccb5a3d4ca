// One kernel through the agents and the four gates; module stitching; the
// end-to-end check. See kernel_search.hpp.
#include "engine/kernel_search.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agents/tuner.hpp"
#include "artifact/config.hpp"
#include "artifact/stitch.hpp"
#include "engine/agent_calls.hpp"
#include "engine/library_use.hpp"
#include "engine/optimize.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"
#include "verify/correctness_gate.hpp"
#include "verify/model_gate.hpp"
#include "verify/performance_gate.hpp"
#include "verify/static_gate.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kernelopt::engine {

json Context::request(const std::string& op, const json& args) {
  json full = args;
  if (!base_args.is_null() && base_args.contains("input_kind")) full["input_kind"] = base_args["input_kind"];
  worker::Reply r = worker.request(op, full, timeout_ms());
  if (!r.ok()) {
    if (r.kind == "problem" || r.kind == "capture" || r.kind == "no_gpu") throw UserError(r.error);
    throw UserError(fmt::format("worker {} failed ({}): {}", op, worker::to_string(r.status), r.error));
  }
  return r.result;
}

worker::Reply Context::ask(const std::string& op, const json& args) {
  json full = args;
  if (!base_args.is_null() && base_args.contains("input_kind")) full["input_kind"] = base_args["input_kind"];
  worker::Reply r = worker.request(op, full, timeout_ms());
  const json seeds = full.value("seeds", json());
  if (r.ok() || r.kind != "out_of_memory" || !seeds.is_array() || seeds.size() < 2) return r;
  // Fewer inputs alive at once: one seed's evidence is still evidence. The run's later ops on the captured
  // session keep to that seed too; a problem that does not fit once fails with the device's own error.
  spdlog::warn("    {} ran out of the device's memory on {} seeds; retrying on seed {} alone", op, seeds.size(),
               seeds.front().dump());
  if (base_args.is_object() && base_args.value("seeds", json()) == seeds) base_args["seeds"] = json::array({seeds.front()});
  full["seeds"] = json::array({seeds.front()});
  return worker.request(op, full, timeout_ms());
}

namespace {

std::vector<double> samples(const json& j) { return j.get<std::vector<double>>(); }

/// Who wrote a kept kernel, in the report's words.
std::string origin_words(const std::string& origin) {
  if (origin == "llm-tuner") return "Coder, then tuned";
  if (origin == "rewrite") return "rewrite library";
  if (origin == "rewrite-tuner") return "rewrite library, then tuned";
  return origin;
}

/// Evidence trimmed for a prompt: the Repairer needs the first facts, not megabytes.
json trimmed(const json& evidence) {
  std::string text = evidence.dump();
  if (text.size() <= 4000) return evidence;
  return json(text.substr(0, 4000) + " ...(truncated)");
}

/// The num_warps/num_stages of a config (a standalone kernel's block sizes are its launcher's).
json launch_only(const json& config) {
  json out = json::object();
  if (!config.is_object()) return out;
  for (const char* k : {"num_warps", "num_stages"}) {
    if (config.contains(k)) out[k] = config[k];
  }
  return out;
}

/// A candidate under evaluation: a launch config of the original kernel (Tuner)
/// or an LLM-written kernel with its meta-parameters (Coder, Repairer).
struct Candidate {
  std::string origin;          ///< tuner | coder | repairer | llm-tuner | rewrite | rewrite-tuner | library
  json config;                 ///< launch meta-parameters (constexprs, num_warps, num_stages)
  json pinned;                 ///< meta-parameters the code needs as they are (a rewrite's R0_BLOCK)
  std::vector<std::string> grid;  ///< LLM grid expressions; empty = Inductor's / the launcher's
  std::string code;            ///< the LLM's code as answered ("" for configs of the original)
  std::string notes;           ///< the LLM's one-line notes
  int repair_round = 0;        ///< 0 for first answers; n for the n-th repair of a lineage
  std::string kernel_source, hash, module_path;
  store::CandidateRecord record;
  double screen_ms = 0;
  double screen_base_ms = 0;   ///< the baseline's median in the same screen
  bool reused = false;         ///< passed every gate in an earlier attempt of this run: verdicts reused
  std::int64_t library_id = 0; ///< the library entry it came from (origin library)
  bool continued = false;      ///< recorded (still pending) by an interrupted attempt of this run
  std::string label() const {
    std::string cfg = config.is_null() ? "" : artifact::LaunchConfig::from_json(config).label();
    return origin == "tuner" ? cfg : fmt::format("{}#{} {}", origin, hash.substr(0, 8), cfg);
  }
};

class KernelSearch {
 public:
  KernelSearch(Context& ctx, const artifact::Module& module, const artifact::Kernel& kernel, json baseline_config,
               int budget, const agents::KernelProfile& profile, const std::string& strategy)
      : ctx_(ctx), module_(module), kernel_(kernel), baseline_(std::move(baseline_config)), budget_(budget) {
    const json module_json = artifact::to_json(module);  // named: a temporary would dangle in the range-for
    for (const auto& k : module_json["kernels"]) {
      if (k["name"] == kernel.name) kernel_json_ = k;
    }
    tunable_ = json::object();
    if (!baseline_.is_null()) {
      tunable_ = {{"num_warps", baseline_.value("num_warps", 4)}, {"num_stages", baseline_.value("num_stages", 1)}};
      for (const auto& c : kernel.constexprs) {
        if (baseline_.contains(c)) tunable_[c] = baseline_[c];
      }
    }
    task_.kernel_name = kernel.name;
    task_.kind = kernel.kind;
    task_.source = module.kernel_source(kernel);
    task_.params = kernel.params;
    task_.constexprs = kernel.constexprs;
    task_.signature = kernel.signature;
    task_.aten_ops = kernel.aten_ops;
    task_.graph_fragment = kernel.graph_fragment;
    task_.size_hints = kernel.size_hints;
    task_.current_config = tunable_;
    for (const auto* l : module.launches_of(kernel.name)) {
      task_.launch_numels.emplace_back(l->numels.begin(), l->numels.end());
    }
    task_.grid_rule = grid_rule();
    task_.profile = profile;
    task_.diagnosis = profile.diagnosis;
    task_.strategy = strategy;
  }

  report::KernelOutcome run();

 private:
  std::string grid_rule() const {
    if (module_.input_kind == "triton") return "the user's launcher's grid (unchanged; meta is not used)";
    if (kernel_.grid_type == "Grid2D") return "(cdiv(xnumel, XBLOCK), cdiv(ynumel, YBLOCK), 1)";
    return "(cdiv(xnumel, XBLOCK), 1, 1)";
  }
  bool llm_on(agents::Role role) const { return ctx_.llm != nullptr && ctx_.llm->enabled(role); }
  /// The current launch config as a label; a standalone kernel's without its (fixed) block sizes.
  std::string baseline_label() const {
    return artifact::LaunchConfig::from_json(module_.input_kind == "triton" ? launch_only(tunable_) : tunable_).label();
  }
  int left() const { return budget_ - used_; }

  /// Composes the candidate's source, records it, and runs gate 1 (and compilation).
  /// Returns false when the candidate is out (rejected now or earlier, or a duplicate).
  bool prepare(Candidate& c);
  /// Screens, then sends finalists through gates 2-4; LLM candidates that fail
  /// are queued for the Repairer.
  void evaluate(std::vector<Candidate> batch);
  bool record(Candidate& c, const verify::Verdict& v);
  void failed(const Candidate& c, const verify::Verdict& v);
  verify::Verdict worker_failure(const std::string& gate, const worker::Reply& r) const;
  std::vector<Candidate> from_answers(const std::vector<agents::KernelAnswer>& answers, const std::string& origin,
                                      int repair_round);
  std::vector<Candidate> tuner_candidates(const std::string& code, const json& around, const std::string& origin,
                                          int max_configs, const json& pinned = json());
  /// The offline Coder: the rewrite library's candidates for this kernel (worker op `rewrite`).
  std::vector<Candidate> rewrite_candidates();
  bool reuse(Candidate& c);
  bool search_rounds();
  /// The library's entry for this kernel's fingerprint, if any (a library that cannot be read is skipped).
  std::optional<store::LibraryEntry> library_entry() const;
  /// Evaluates the entry through all four gates; true if it passed.
  bool try_library(const store::LibraryEntry& entry);
  /// A continued run: the candidate passed `gate` before the run was interrupted (that verdict stands).
  bool passed_earlier(const Candidate& c, const std::string& gate) const;
  verify::SpeedupEstimate estimate_of(const Candidate& c) const { return estimates_.at(c.record.id); }
  double speedup_of(const Candidate& c) const { return estimate_of(c).speedup; }
  /// The answers of one LLM exchange as candidates; an answer that cannot be
  /// read is a failed attempt the Repairer may still fix.
  std::vector<Candidate> answers_to_candidates(const AnswerBatch& batch, const std::string& origin, int round);
  void reject_unbuildable(Candidate& c, const std::string& reason);
  void requeue(const Candidate& c);

  Context& ctx_;
  const artifact::Module& module_;
  const artifact::Kernel& kernel_;
  json baseline_, tunable_, kernel_json_, orig_facts_;
  std::string original_text_;  ///< what the candidate is compared with in gate 1 (see run())
  int budget_ = 0, used_ = 0;
  agents::KernelTask task_;
  report::KernelOutcome out_;
  std::set<std::string> seen_;  ///< source hashes prepared in this search
  struct Repair {
    Candidate candidate;
    verify::Verdict verdict;
  };
  std::vector<Repair> repairs_;
  std::vector<Candidate> passed_;  ///< passed all four gates
  std::map<std::int64_t, verify::SpeedupEstimate> estimates_;  ///< kernel speedup of each passed candidate
};

verify::Verdict KernelSearch::worker_failure(const std::string& gate, const worker::Reply& r) const {
  verify::Verdict v;
  v.gate = gate;
  v.passed = false;
  if (r.kind == "out_of_memory") {
    // the device ran out, not the candidate: never a verdict on its correctness or speed
    v.gate = "resource";
    v.reason = "resource: " + r.error;
  } else {
    v.reason = fmt::format("worker {}: {}", worker::to_string(r.status), r.error);
  }
  v.evidence = {{"status", worker::to_string(r.status)}, {"error", r.error}, {"traceback", r.traceback}};
  return v;
}

bool KernelSearch::record(Candidate& c, const verify::Verdict& v) {
  store::VerdictRecord vr;
  vr.candidate_id = c.record.id;
  vr.gate = v.gate;
  vr.passed = v.passed;
  vr.reason = v.reason;
  vr.evidence = v.evidence;
  ctx_.store.add_verdict(vr);
  if (!v.passed) {
    ctx_.store.set_candidate_status(c.record.id, "rejected");
    out_.rejected_by[v.gate]++;
    spdlog::info("    {:<36} rejected by {} gate: {}", c.label(), v.gate, v.reason);
    failed(c, v);
  }
  return v.passed;
}

void KernelSearch::failed(const Candidate& c, const verify::Verdict& v) {
  task_.earlier.push_back({c.origin, c.label(), v.gate, v.reason, false});
  out_.attempts.push_back({{"origin", c.origin}, {"label", c.label()}, {"gate", v.gate}, {"passed", false},
                           {"reason", v.reason}});
  if ((c.origin == "coder" || c.origin == "repairer") && c.repair_round < ctx_.options.repair_rounds) {
    repairs_.push_back({c, v});
  }
}

void KernelSearch::reject_unbuildable(Candidate& c, const std::string& reason) {
  // The answer could not become a candidate: nothing of it ran; the Repairer sees why.
  c.kernel_source = c.code;
  c.hash = util::sha256_hex(c.code);
  if (!seen_.insert(c.hash).second) return;
  store::CandidateRecord rec;
  rec.run_id = ctx_.run_id;
  rec.module = module_.index;
  rec.kernel = kernel_.name;
  rec.source_hash = c.hash;
  rec.origin = c.origin;
  rec.meta = {{"config", c.config}, {"notes", c.notes}, {"unbuildable", true}};
  auto [stored, inserted] = ctx_.store.add_candidate(rec);
  c.record = stored;
  if (!inserted && stored.status == "rejected") {
    requeue(c);
    return;
  }
  ++used_;
  record(c, verify::Verdict{"static", false, reason, {{"error", reason}}});
}

std::vector<Candidate> KernelSearch::answers_to_candidates(const AnswerBatch& batch, const std::string& origin,
                                                           int round) {
  std::vector<Candidate> out = from_answers(batch.answers, origin, round);
  if (!batch.unreadable.empty()) {
    Candidate c;
    c.origin = origin;
    c.code = batch.raw;
    c.repair_round = round;
    reject_unbuildable(c, "unreadable answer: " + batch.unreadable);
  }
  return out;
}

void KernelSearch::requeue(const Candidate& c) {
  // A continued run: the stored failing verdict stands, and its Repairer round may still be due.
  for (const auto& v : ctx_.store.verdicts(c.record.id)) {
    if (!v.passed) {
      out_.rejected_by[v.gate]++;
      failed(c, verify::Verdict{v.gate, false, v.reason, v.evidence});
      return;
    }
  }
}

bool KernelSearch::reuse(Candidate& c) {
  // Passed every gate before this run was interrupted: its verdicts and timings stand.
  std::vector<double> kbase, kcand;
  for (const auto& t : ctx_.store.timings(ctx_.run_id)) {
    if (t.candidate_id != c.record.id) continue;
    if (t.label == "kernel_baseline") kbase = t.samples;
    if (t.label == "kernel_candidate") kcand = t.samples;
  }
  if (kbase.empty() || kcand.empty()) return false;
  c.reused = true;
  auto est = verify::estimate_speedup(kbase, kcand);
  estimates_[c.record.id] = est;
  spdlog::info("    {:<36} verified earlier in this run: kernel {:.3f}x (not re-run)", c.label(), est.speedup);
  passed_.push_back(c);
  return true;
}

bool KernelSearch::passed_earlier(const Candidate& c, const std::string& gate) const {
  if (!c.continued) return false;
  for (const auto& v : ctx_.store.verdicts(c.record.id)) {
    if (v.gate == gate && v.passed) return true;
  }
  return false;
}

bool KernelSearch::prepare(Candidate& c) {
  try {
    if (c.origin == "library" && module_.input_kind != "triton") {
      // the entry's kernel text as it was stitched and verified (renamed to this module's kernel): used as is
    } else if (c.code.empty()) {
      const auto cfg = artifact::LaunchConfig::from_json(c.config);
      c.kernel_source = module_.input_kind == "triton" ? artifact::standalone_with_config(module_, kernel_, cfg)
                                                       : artifact::kernel_source_with_config(module_, kernel_, cfg);
    } else {
      // where the answer's functions are: ast facts of the answer alone (it is never run here)
      worker::Reply facts = ctx_.ask("analyze", {{"source", c.code}});
      if (!facts.ok()) throw artifact::ArtifactError("cannot analyze the answer: " + facts.error);
      if (facts.result.value("parse_error", json()).is_string()) {
        throw artifact::ArtifactError("the answer's code does not parse: " + facts.result["parse_error"].get<std::string>());
      }
      artifact::FunctionLines fn;
      for (const auto& f : facts.result["functions"]) {
        if (f["name"] == kernel_.name) fn = {f.value("first_line", 0), f.value("line", 0), f.value("end_line", 0)};
      }
      if (fn.def_line == 0) throw artifact::ArtifactError("the answer defines no function named " + kernel_.name);
      c.kernel_source = module_.input_kind == "triton"
                            ? artifact::standalone_candidate(module_, kernel_, c.code, fn)
                            : artifact::inductor_candidate(module_, kernel_, c.code, fn,
                                                           artifact::LaunchConfig::from_json(c.config), c.grid);
    }
  } catch (const artifact::ArtifactError& e) {
    if (c.code.empty()) {
      spdlog::warn("    {}: {}", c.label(), e.what());
      return false;
    }
    reject_unbuildable(c, std::string("cannot build a candidate: ") + e.what());
    return false;
  }
  c.hash = util::sha256_hex(c.kernel_source);
  if (!seen_.insert(c.hash).second) return false;  // the same source twice in one search: once is enough
  c.module_path = (ctx_.out / "candidates" / fmt::format("m{}_{}_{}.py", module_.index, kernel_.name, c.hash.substr(0, 12)))
                      .string();
  util::write_file_atomic(c.module_path, artifact::stitch_kernels(module_, {{kernel_.name, c.kernel_source}}));
  store::CandidateRecord rec;
  rec.run_id = ctx_.run_id;
  rec.module = module_.index;
  rec.kernel = kernel_.name;
  rec.source_hash = c.hash;
  rec.origin = c.origin;
  rec.meta = {{"config", c.config}, {"grid", c.grid}, {"notes", c.notes}};
  auto [stored, inserted] = ctx_.store.add_candidate(rec);
  c.record = stored;
  if (!inserted && stored.status == "rejected") {  // a failed candidate is never re-evaluated
    spdlog::info("    {:<36} rejected earlier in this run (not re-run)", c.label());
    requeue(c);
    return false;
  }
  if (!inserted && (stored.status == "passed" || stored.status == "kept") && reuse(c)) return false;
  ++used_;
  c.continued = !inserted;
  if (passed_earlier(c, "static")) {  // interrupted after gate 1: not checked (or compiled) twice
    spdlog::info("    {:<36} passed gate 1 earlier in this run", c.label());
    return true;
  }
  // Gate 1: static validation of the source, then (only then) compilation.
  // A standalone kernel keeps the user's own decorators (autotune, heuristics): the gate judges what the model
  // wrote, or for a launch config the user's kernel itself under the engine's one-line decorator, which holds
  // two integers standalone_with_config checked (never model-written text).
  const bool standalone_config = module_.input_kind == "triton" && c.code.empty();
  json analyze_args = {{"source", module_.input_kind != "triton" ? c.kernel_source
                                  : standalone_config            ? original_text_
                                                                 : c.code}};
  if (!c.grid.empty()) {
    analyze_args["grid"] = c.grid;
    json names = json::array();
    for (const auto& p : kernel_.params) {
      if (p.size() >= 5 && p.ends_with("numel")) names.push_back(p);
    }
    analyze_args["grid_names"] = names;
  }
  worker::Reply facts = ctx_.ask("analyze", analyze_args);
  if (!facts.ok()) return record(c, worker_failure("static", facts));
  verify::Verdict v = verify::static_gate(facts.result, orig_facts_);
  if (standalone_config) v.evidence["engine_decorator"] = c.kernel_source.substr(0, c.kernel_source.find('\n'));
  if (v.passed) {
    json compile_args = ctx_.base_args;
    compile_args["module_path"] = c.module_path;
    worker::Reply comp = ctx_.ask("compile", compile_args);
    if (comp.status == worker::Status::timeout || comp.status == worker::Status::crashed) {
      v = worker_failure("static", comp);  // a hang or a fault while compiling (or, interpreted, first running) it
    } else if (!comp.ok()) {
      v.passed = false;
      v.reason = "compile error: " + comp.error;
      v.evidence["compile_error"] = comp.error;
    }
  }
  return record(c, v);
}

void KernelSearch::evaluate(std::vector<Candidate> batch) {
  const auto& o = ctx_.options;
  std::vector<Candidate> ready;
  for (auto& c : batch) {
    if (prepare(c)) ready.push_back(std::move(c));
  }
  if (ready.empty()) return;
  // Screen: a short interleaved timing of all survivors against the baseline.
  json bench_args = ctx_.base_args;
  bench_args["module"] = module_.index;
  bench_args["kernel"] = kernel_.name;
  bench_args["mode"] = "kernel";
  bench_args["trials"] = o.screen_trials;
  bench_args["candidates"] = json::array();
  for (const auto& c : ready) bench_args["candidates"].push_back(c.module_path);
  // A failed screen (one candidate raising, hanging or faulting) must not sink the others: each is then screened alone.
  std::vector<std::vector<Candidate*>> groups(1);
  for (auto& c : ready) groups[0].push_back(&c);
  worker::Reply screen = ctx_.ask("bench", bench_args);
  if (!screen.ok() && ready.size() > 1) {
    spdlog::warn("    screen of {} candidates failed ({}); screening each alone", ready.size(), screen.error);
    groups.clear();
    for (auto& c : ready) groups.push_back({&c});
  }
  std::vector<Candidate> screened;
  for (const auto& group : groups) {
    json args = bench_args;
    args["candidates"] = json::array();
    for (const Candidate* c : group) args["candidates"].push_back(c->module_path);
    worker::Reply r = groups.size() == 1 ? screen : ctx_.ask("bench", args);
    if (!r.ok()) {
      for (Candidate* c : group) record(*c, worker_failure("performance", r));
      continue;
    }
    const double base_ms = verify::median(samples(r.result["samples_ms"]["baseline"]));
    for (Candidate* c : group) {
      c->screen_ms = verify::median(samples(r.result["samples_ms"][c->module_path]));
      c->screen_base_ms = base_ms;
      ctx_.store.add_timing(ctx_.run_id, c->record.id, "screen", "ms", samples(r.result["samples_ms"][c->module_path]));
      screened.push_back(std::move(*c));
    }
  }
  ready = std::move(screened);
  if (ready.empty()) return;
  out_.screened += static_cast<int>(ready.size());
  std::sort(ready.begin(), ready.end(), [](const Candidate& a, const Candidate& b) { return a.screen_ms < b.screen_ms; });
  std::vector<Candidate*> finalists;
  int tuner_finalists = 0;
  for (auto& c : ready) {
    if (c.screen_ms >= c.screen_base_ms && (o.screen_rejects_slower || c.code.empty())) {
      if ((!c.code.empty() && c.origin != "llm-tuner" && c.origin != "rewrite-tuner") || c.origin == "library") {  // the Repairer and the report get the figures
        verify::Verdict v{"performance", false,
                          fmt::format("slower than the baseline in the screen: {:.4f} ms vs {:.4f} ms", c.screen_ms,
                                      c.screen_base_ms),
                          {{"candidate_ms", c.screen_ms}, {"baseline_ms", c.screen_base_ms}, {"stage", "screen"}}};
        record(c, v);
      }
      continue;
    }
    const bool is_tuner = c.origin == "tuner" || c.origin == "llm-tuner" || c.origin == "rewrite-tuner";
    if (is_tuner && tuner_finalists >= o.gate_top_k) continue;
    tuner_finalists += is_tuner ? 1 : 0;
    finalists.push_back(&c);
  }
  spdlog::info("    screen: baseline {:.4f} ms, best {:.4f} ms ({}), {} finalist(s)", ready.front().screen_base_ms, ready.front().screen_ms,
               ready.front().label(), finalists.size());
  for (Candidate* c : finalists) {
    out_.gated++;
    json args = ctx_.base_args;
    args["module"] = module_.index;
    args["kernel"] = kernel_.name;
    args["candidate_module"] = c->module_path;
    args["atol"] = o.atol;
    args["rtol"] = o.rtol;
    args["repeats"] = o.check_repeats;
    // Gate 2: the kernel alone on every launch site's real arguments, for each seed.
    // (a continued run keeps the verdicts a candidate earned before it was interrupted)
    if (!passed_earlier(*c, "correctness")) {
      worker::Reply chk = ctx_.ask("check", args);
      if (!record(*c, chk.ok() ? verify::correctness_gate(chk.result) : worker_failure("correctness", chk))) continue;
    }
    // Gate 3: the stitched module vs the baseline, float64 eager where they differ.
    if (!passed_earlier(*c, "model")) {
      worker::Reply mc = ctx_.ask("model_check", args);
      if (!record(*c, mc.ok() ? verify::model_gate(mc.result) : worker_failure("model", mc))) continue;
    }
    // Gate 4: kernel and whole module, interleaved with the baseline, L2 flushed.
    json kb = bench_args;
    kb["trials"] = o.gate_trials;
    kb["candidates"] = json::array({c->module_path});
    json mb = kb;
    mb["mode"] = "model";
    worker::Reply kr = ctx_.ask("bench", kb);
    worker::Reply mr = kr.ok() ? ctx_.ask("bench", mb) : kr;
    if (!kr.ok() || !mr.ok()) {
      record(*c, worker_failure("performance", kr.ok() ? mr : kr));
      continue;
    }
    auto kbase = samples(kr.result["samples_ms"]["baseline"]), kcand = samples(kr.result["samples_ms"][c->module_path]);
    auto mbase = samples(mr.result["samples_ms"]["baseline"]), mcand = samples(mr.result["samples_ms"][c->module_path]);
    ctx_.store.add_timing(ctx_.run_id, c->record.id, "kernel_baseline", "ms", kbase);
    ctx_.store.add_timing(ctx_.run_id, c->record.id, "kernel_candidate", "ms", kcand);
    ctx_.store.add_timing(ctx_.run_id, c->record.id, "model_baseline", "ms", mbase);
    ctx_.store.add_timing(ctx_.run_id, c->record.id, "model_candidate", "ms", mcand);
    verify::Verdict perf = verify::performance_gate(kbase, kcand, mbase, mcand);
    if (!record(*c, perf)) continue;
    ctx_.store.set_candidate_status(c->record.id, "passed");
    auto est = verify::estimate_speedup(kbase, kcand);
    estimates_[c->record.id] = est;
    spdlog::info("    {:<36} passed all four gates: kernel {:.3f}x [{:.3f}, {:.3f}]", c->label(), est.speedup,
                 est.ci_low, est.ci_high);
    task_.earlier.push_back({c->origin, c->label(), "performance", fmt::format("passed all gates, kernel {:.3f}x", est.speedup), true});
    out_.attempts.push_back({{"origin", c->origin}, {"label", c->label()}, {"gate", "all"}, {"passed", true},
                             {"reason", fmt::format("kernel {:.3f}x", est.speedup)}});
    passed_.push_back(*c);
  }
}

std::vector<Candidate> KernelSearch::from_answers(const std::vector<agents::KernelAnswer>& answers,
                                                  const std::string& origin, int repair_round) {
  std::vector<Candidate> out;
  for (const auto& a : answers) {
    Candidate c;
    c.origin = origin;
    c.code = a.code;
    c.grid = a.grid;
    c.notes = a.notes;
    c.repair_round = repair_round;
    // meta: the answer's values over the current config's (a standalone kernel keeps its launcher's)
    c.config = module_.input_kind == "triton" ? json(nullptr) : tunable_;
    if (module_.input_kind != "triton" && a.meta.is_object()) {
      for (const auto& [k, v] : a.meta.items()) c.config[k] = v;
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Candidate> KernelSearch::tuner_candidates(const std::string& code, const json& around,
                                                      const std::string& origin, int max_configs, const json& pinned) {
  std::vector<Candidate> out;
  if (around.is_null() || max_configs <= 0) return out;
  // pinned keys stay as they are: ask for more configs, then drop those that move them
  const int ask = pinned.is_object() && !pinned.empty() ? max_configs * 4 : max_configs;
  for (const auto& cfg : agents::tuner_space(kernel_json_, around, ask)) {
    bool moves_pinned = false;
    if (pinned.is_object()) {
      for (const auto& [k, v] : pinned.items()) moves_pinned = moves_pinned || cfg.value(k, json()) != v;
    }
    if (moves_pinned) continue;
    if (static_cast<int>(out.size()) >= max_configs) break;
    Candidate c;
    c.origin = origin;
    c.config = cfg;
    c.code = code;
    c.pinned = pinned;
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Candidate> KernelSearch::rewrite_candidates() {
  std::vector<Candidate> out;
  worker::Reply r = ctx_.ask("rewrite", {{"source", task_.source}, {"reduction_hint", kernel_.reduction_hint}});
  if (!r.ok()) {
    spdlog::warn("  {}: the rewrite library failed: {}", kernel_.name, r.error);
    return out;
  }
  for (const auto& s : r.result["skipped"]) {
    spdlog::debug("  {}: rewrite {} does not apply: {}", kernel_.name, s["family"].get<std::string>(),
                  s["why"].get<std::string>());
  }
  for (const auto& a : r.result["candidates"]) {
    Candidate c;
    c.origin = "rewrite";
    c.code = a["code"];
    c.notes = a["notes"].get<std::string>();  // names the family
    c.config = tunable_;
    for (const auto& [k, v] : a["meta"].items()) c.config[k] = v;
    // the rewrite is written for these block sizes (the other meta-parameters may be tuned)
    c.pinned = json::object();
    for (const auto& [k, v] : a["meta"].items()) {
      if (k != "num_warps" && k != "num_stages" && k != "XBLOCK") c.pinned[k] = v;
    }
    spdlog::info("  {}: rewrite {}", kernel_.name, c.notes);
    out.push_back(std::move(c));
  }
  return out;
}

std::optional<store::LibraryEntry> KernelSearch::library_entry() const {
  if (ctx_.library == nullptr) return std::nullopt;
  auto m = ctx_.fingerprints.find(module_.index);
  if (m == ctx_.fingerprints.end()) return std::nullopt;
  auto fp = m->second.find(kernel_.name);
  if (fp == m->second.end()) return std::nullopt;
  try {
    auto entry = ctx_.library->find(fp->second);
    if (entry && entry->input_kind == library_input_kind(module_)) return entry;
  } catch (const store::StoreError& e) {
    spdlog::warn("  {}: the kernel library cannot be read ({}); searching without it", kernel_.name, e.what());
  }
  return std::nullopt;
}

bool KernelSearch::try_library(const store::LibraryEntry& entry) {
  Candidate c;
  c.origin = "library";
  c.library_id = entry.id;
  // a standalone entry is either code (the user's launcher's config) or a launch config of the user's kernel
  c.config = module_.input_kind == "triton" && !entry.code.empty() ? json(nullptr) : entry.config;
  if (entry.grid.is_array()) c.grid = entry.grid.get<std::vector<std::string>>();
  c.notes = fmt::format("library entry {}, verified before at {:.3f}x on {} (run {})", entry.id, entry.speedup,
                        entry.device, entry.run_out_dir);
  if (module_.input_kind == "triton") {
    c.code = rename_kernel(entry.code, entry.kernel_name, kernel_.name);
  } else {
    c.kernel_source = rename_kernel(entry.source, entry.kernel_name, kernel_.name);
    c.code = rename_kernel(entry.code, entry.kernel_name, kernel_.name);  // kept for the next entry; not rebuilt
  }
  spdlog::info("  {}: the kernel library has a winner for this fingerprint (entry {}, {:.3f}x): verifying it again",
               kernel_.name, entry.id, entry.speedup);
  const size_t before = passed_.size();
  try {
    evaluate({c});
  } catch (const artifact::ArtifactError& e) {  // an entry whose text cannot be stitched: not used
    spdlog::warn("    library entry {} cannot be stitched: {}", entry.id, e.what());
    out_.attempts.push_back({{"origin", "library"}, {"label", fmt::format("library entry {}", entry.id)},
                             {"gate", "static"}, {"passed", false}, {"reason", e.what()}});
    return false;
  }
  if (passed_.size() > before) return true;
  spdlog::info("  {}: the library's winner did not pass this run's gates; searching as usual", kernel_.name);
  return false;
}

/// Round 1 (Coder, rewrite library, Tuner), the Repairer's rounds, then the best rewritten
/// kernel's launch config. False (out_.why set) when there was no candidate at all.
bool KernelSearch::search_rounds() {
  const auto& o = ctx_.options;
  const bool standalone = module_.input_kind == "triton";
  // Round 1: the Coder (LLM) and the offline Tuner's configs around the baseline.
  std::vector<Candidate> first;
  if (llm_on(agents::Role::coder)) {
    const int n = std::min(o.coder_candidates, std::max(1, left()));
    spdlog::info("  {}: asking the Coder for {} candidate(s)", kernel_.name, n);
    for (auto& c : answers_to_candidates(ask_coder(ctx_, task_, n), "coder", 0)) first.push_back(std::move(c));
  }
  if (!standalone && !tunable_.empty()) {
    for (auto& c : rewrite_candidates()) first.push_back(std::move(c));
  }
  // A standalone kernel's launch config is tuned only where the user's code does not choose it (autotune,
  // heuristics); its block sizes stay the launcher's, so only num_warps/num_stages change.
  const std::string untunable = standalone ? artifact::standalone_untunable(kernel_) : std::string();
  if (!untunable.empty()) {
    spdlog::info("  {}: no launch configs to try: {}", kernel_.name, untunable);
  } else {
    std::vector<json> configs;
    const int room = left() - static_cast<int>(first.size());
    if (llm_on(agents::Role::tuner) && room > 0) {
      agents::KernelTask task = task_;
      if (standalone) {  // the LLM Tuner is asked for num_warps/num_stages only
        task.constexprs.clear();
        task.current_config = launch_only(tunable_);
      }
      configs = ask_tuner(ctx_, task, std::max(1, room));
    }
    std::vector<Candidate> tuned;
    if (configs.empty()) {
      // rewritten code in round 1: half of the room stays for tuning the best of it afterwards
      const bool code_first = std::any_of(first.begin(), first.end(), [](const Candidate& c) { return !c.code.empty(); });
      tuned = tuner_candidates("", tunable_, "tuner", code_first ? room - room / 2 : room);
    } else {
      for (const auto& cfg : configs) {
        Candidate c;
        c.origin = "tuner";
        c.config = standalone ? launch_only(cfg) : cfg;
        tuned.push_back(std::move(c));
      }
    }
    if (baseline_.is_null()) spdlog::info("  {}: the launcher reported no configuration to tune from", kernel_.name);
    spdlog::info("  {}: {} config(s) to screen (baseline {})", kernel_.name, tuned.size(),
                 tunable_.empty() ? std::string("?") : baseline_label());
    for (auto& c : tuned) first.push_back(std::move(c));
  }
  if (first.empty()) {
    if (!untunable.empty()) {
      out_.why = fmt::format("no candidate: the Tuner leaves {} alone ({}){}", kernel_.name, untunable,
                             llm_on(agents::Role::coder) ? "" : "; configure an LLM (--llm) to rewrite it");
    } else if (standalone) {
      out_.why = "no candidate: no launch config to try besides the launcher's";
    } else {
      out_.why = fmt::format("no tuning space for a {} kernel with constexprs [{}]", kernel_.kind,
                             fmt::join(kernel_.constexprs, ", "));
    }
    return false;
  }
  evaluate(std::move(first));

  // Repair rounds: each failed LLM candidate goes back to the Repairer with its gate failure.
  for (int round = 1; round <= o.repair_rounds && !repairs_.empty() && left() > 0; ++round) {
    if (!llm_on(agents::Role::repairer)) break;
    std::vector<Candidate> fixed;
    auto pending = std::move(repairs_);
    repairs_.clear();
    for (const auto& r : pending) {
      if (left() - static_cast<int>(fixed.size()) <= 0) break;
      agents::KernelAnswer failed{r.candidate.code, r.candidate.config, r.candidate.grid, r.candidate.notes};
      agents::GateFailure why{r.verdict.gate, r.verdict.reason, trimmed(r.verdict.evidence)};
      spdlog::info("  {}: asking the Repairer to fix {} ({} gate)", kernel_.name, r.candidate.label(), r.verdict.gate);
      if (auto batch = ask_repairer(ctx_, task_, failed, why)) {
        for (auto& c : answers_to_candidates(*batch, "repairer", r.candidate.repair_round + 1)) fixed.push_back(std::move(c));
      }
    }
    if (fixed.empty()) break;
    evaluate(std::move(fixed));
  }

  // The best rewritten kernel (LLM or rewrite library) gets its launch config tuned too (the same code, other meta).
  auto best_it = std::max_element(passed_.begin(), passed_.end(), [&](const Candidate& a, const Candidate& b) {
    return speedup_of(a) < speedup_of(b);
  });
  // (not for a standalone kernel: its candidates keep the user's decorators, and pinning a config on an
  // LLM-written function is not done yet)
  if (best_it != passed_.end() && !best_it->code.empty() && module_.input_kind != "triton" && left() > 0) {
    Candidate best = *best_it;
    spdlog::info("  {}: tuning the launch config of {}", kernel_.name, best.label());
    const bool offline = best.origin == "rewrite" || best.origin == "rewrite-tuner";
    evaluate(tuner_candidates(best.code, best.config, offline ? "rewrite-tuner" : "llm-tuner", left(), best.pinned));
  }
  return true;
}

report::KernelOutcome KernelSearch::run() {
  out_.status = "kept baseline";
  // what the candidate is compared with: for a standalone kernel, its function under a plain @triton.jit
  const bool standalone = module_.input_kind == "triton";
  original_text_ = standalone ? "@triton.jit\n" + module_.source.substr(kernel_.function.begin, kernel_.function.size())
                              : module_.kernel_source(kernel_);
  worker::Reply orig = ctx_.ask("analyze", {{"source", original_text_}});
  if (!orig.ok()) throw UserError("cannot analyze the original kernel: " + orig.error);
  orig_facts_ = orig.result;

  // The library first: a winner verified for this exact kernel before, verified again here.
  // When it passes, the search ends with it (it already was the best of a search of this kernel).
  bool from_library = false;
  if (auto entry = library_entry()) from_library = try_library(*entry);

  if (!from_library && !search_rounds()) return out_;

  const Candidate* best = nullptr;
  for (const auto& c : passed_) {
    if (best == nullptr || speedup_of(c) > speedup_of(*best)) best = &c;
  }
  if (best == nullptr) {
    std::string tally;
    for (const auto& [gate, n] : out_.rejected_by) tally += fmt::format("{}{} by {}", tally.empty() ? "" : ", ", n, gate);
    out_.why = out_.screened == 0 && out_.rejected_by.empty()
                   ? "no candidate could be evaluated"
                   : fmt::format("no candidate passed all four gates ({} evaluated{}{})", used_,
                                 tally.empty() ? "" : "; rejected ", tally);
    return out_;
  }
  ctx_.store.set_candidate_status(best->record.id, "kept");
  out_.status = "improved";
  out_.winner_config = best->config;
  out_.winner_source = best->kernel_source;
  out_.winner_origin = best->origin;
  out_.winner_code = best->code;
  out_.winner_grid = best->grid.empty() ? json(nullptr) : json(best->grid);
  out_.library_entry = best->library_id;
  out_.kernel_speedup = estimate_of(*best);
  out_.after_ms = out_.kernel_speedup.candidate_median;
  out_.why = best->origin == "library"
                 ? fmt::format("from the library (verified again): {}", best->notes)
             : best->code.empty()
                 ? fmt::format("launch config {} (was {})", best->label(), baseline_label())
                 : fmt::format("rewritten by the {} ({}){}", origin_words(best->origin),
                               best->label(), best->notes.empty() ? "" : ": " + best->notes);
  return out_;
}

}  // namespace

report::KernelOutcome search_kernel(Context& ctx, const artifact::Module& module, const artifact::Kernel& kernel,
                                    const json& baseline_config, int budget, const agents::KernelProfile& profile,
                                    const std::string& strategy) {
  KernelSearch search(ctx, module, kernel, baseline_config, budget, profile, strategy);
  return search.run();
}

std::string stitch_module(Context& ctx, const artifact::Module& module,
                          const std::map<std::string, std::string>& winners, report::ModuleReport& report) {
  if (winners.empty()) {
    report.stitch_decision = "no kernel improved: the baseline module is kept byte-identical";
    return module.source;
  }
  std::string stitched = artifact::stitch_kernels(module, winners);
  if (winners.size() == 1) {
    report.stitch_decision = "stitched 1 verified kernel";
    return stitched;
  }
  // Several winners were verified one at a time; check them together once more.
  fs::path path = ctx.out / "candidates" / fmt::format("m{}_combined.py", module.index);
  util::write_file_atomic(path, stitched);
  json args = ctx.base_args;
  args["module"] = module.index;
  args["candidate_module"] = path.string();
  args["atol"] = ctx.options.atol;
  args["rtol"] = ctx.options.rtol;
  worker::Reply mc = ctx.ask("model_check", args);
  if (mc.ok() && verify::model_gate(mc.result).passed) {
    report.stitch_decision = fmt::format("stitched {} verified kernels, re-verified together", winners.size());
    return stitched;
  }
  // Keep only the winner with the largest kernel speedup.
  const report::KernelReport* top = nullptr;
  for (const auto& k : report.kernels) {
    if (k.outcome.status == "improved" && (!top || k.outcome.kernel_speedup.speedup > top->outcome.kernel_speedup.speedup)) {
      top = &k;
    }
  }
  report.stitch_decision = "winners failed together; kept only " + top->profile.name;
  return artifact::stitch_kernels(module, {{top->profile.name, winners.at(top->profile.name)}});
}

report::EndToEnd final_check(Context& ctx, const RunDir& run_dir) {
  report::EndToEnd e;
  json args = {{"run_dir", run_dir.path().string()}, {"device", ctx.options.device},
               {"seeds", ctx.options.final_seeds}, {"atol", ctx.options.atol}, {"rtol", ctx.options.rtol},
               {"trials", ctx.options.gate_trials}};
  worker::Reply r = ctx.ask("final_check", args);
  if (!r.ok()) {
    e.failure = r.kind == "out_of_memory" ? "out of memory: final_check" : r.error;
    e.why = "end-to-end check failed to run: " + r.error;
    return e;
  }
  e.ran = true;
  const json& res = r.result;
  e.substituted = res["substituted"];
  auto manifest = json::parse(util::read_file(run_dir.path() / "manifest.json"));
  for (const auto& m : manifest["modules"]) e.expected_substitutions += m["optimized"].is_null() ? 0 : 1;
  for (const auto& run : res["runs"]) {
    for (const auto& out : run["outputs"]) {
      double eo = out["err_optimized"], eb = out["err_baseline"];
      e.max_err_optimized = std::max(e.max_err_optimized, eo);
      e.max_err_baseline = std::max(e.max_err_baseline, eb);
      // beyond tolerance vs float64 counts only where it is also worse than the compiler's own error
      if (out["mismatches_vs_eager"].get<int>() > 0 && eo > eb * ctx.options.final_error_ratio + 1e-7) {
        e.mismatches += out["mismatches_vs_eager"].get<int>();
      }
    }
  }
  auto eager = samples(res["samples_ms"]["eager"]), base = samples(res["samples_ms"]["baseline"]),
       opt = samples(res["samples_ms"]["optimized"]);
  e.trials = static_cast<int>(opt.size());
  e.eager_ms = verify::median(eager);
  e.baseline_ms = verify::median(base);
  e.optimized_ms = verify::median(opt);
  e.eager_mean_ms = verify::mean(eager);
  e.baseline_mean_ms = verify::mean(base);
  e.optimized_mean_ms = verify::mean(opt);
  e.speedup = verify::estimate_speedup(base, opt);
  if (const json& g = res.value("gpu_samples_ms", json()); g.is_object()) {
    auto median_of = [&](const char* name) { return g.contains(name) ? verify::median(samples(g[name])) : 0.0; };
    e.gpu_eager_ms = median_of("eager");
    e.gpu_baseline_ms = median_of("baseline");
    e.gpu_optimized_ms = median_of("optimized");
  }
  if (e.substituted < e.expected_substitutions) {
    e.why = fmt::format("only {} of {} optimized modules were substituted when Inductor recompiled", e.substituted,
                        e.expected_substitutions);
  } else if (e.mismatches > 0) {
    e.why = fmt::format("{} output elements beyond tolerance vs float64 eager and less accurate than the baseline",
                        e.mismatches);
  } else {
    e.passed = true;
    e.why = "outputs within tolerance of float64 eager (or no less accurate than torch.compile)";
  }
  return e;
}

}  // namespace kernelopt::engine
