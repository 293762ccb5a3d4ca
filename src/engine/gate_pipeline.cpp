// The four gates for one kernel's candidates. See gate_pipeline.hpp.
#include "engine/gate_pipeline.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "artifact/stitch.hpp"
#include "engine/optimize.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"
#include "verify/correctness_gate.hpp"
#include "verify/model_gate.hpp"
#include "verify/performance_gate.hpp"
#include "verify/static_gate.hpp"

using nlohmann::json;

namespace kernelopt::engine {

namespace {

std::vector<double> samples(const json& j) { return j.get<std::vector<double>>(); }

}  // namespace

verify::Verdict worker_failure(const std::string& gate, const worker::Reply& r) {
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

GatePipeline::GatePipeline(SearchState& state) : state_(state), original_text_(state.target.input.original_text(state.target.module, state.target.kernel)) {
  worker::Reply orig = state_.target.ctx.ask("analyze", {{"source", original_text_}});
  if (!orig.ok()) throw UserError("cannot analyze the original kernel: " + orig.error);
  original_facts_ = orig.result;
}

bool GatePipeline::prepare(Candidate& c) {
  try {
    compose_source(state_.target, c);
  } catch (const artifact::ArtifactError& e) {
    if (c.code.empty()) {
      spdlog::warn("    {}: {}", c.label(), e.what());
      return false;
    }
    state_.reject_unbuildable(c, std::string("cannot build a candidate: ") + e.what());
    return false;
  }
  c.hash = util::sha256_hex(c.kernel_source);
  if (!state_.seen.insert(c.hash).second) return false;  // the same source twice in one search: once is enough
  if (!admit(c)) return false;
  if (state_.passed_earlier(c, "static")) {  // interrupted after gate 1: not checked (or compiled) twice
    spdlog::info("    {:<36} passed gate 1 earlier in this run", c.label());
    return true;
  }
  return static_gate(c);
}

bool GatePipeline::admit(Candidate& c) {
  const SearchTarget& t = state_.target;
  c.module_path = (t.ctx.out / "candidates" / fmt::format("m{}_{}_{}.py", t.module.index, t.kernel.name, c.hash.substr(0, 12)))
                      .string();
  util::write_file_atomic(c.module_path, artifact::stitch_kernels(t.module, {{t.kernel.name, c.kernel_source}}));
  auto [stored, inserted] =
      t.ctx.store.add_candidate(candidate_record(t, c, {{"config", c.config}, {"grid", c.grid}, {"notes", c.notes}}));
  c.record = stored;
  if (!inserted && stored.status == "rejected") {  // a failed candidate is never re-evaluated
    spdlog::info("    {:<36} rejected earlier in this run (not re-run)", c.label());
    state_.requeue(c);
    return false;
  }
  if (!inserted && (stored.status == "passed" || stored.status == "kept") && state_.reuse(c)) return false;
  ++state_.used;
  c.continued = !inserted;
  return true;
}

bool GatePipeline::static_gate(Candidate& c) {
  // Gate 1: static validation of the source, then (only then) compilation.
  const SearchTarget& t = state_.target;
  const StaticText read = t.input.static_text(c, original_text_);
  // one analyze per text: a standalone candidate's code was read when it was composed
  worker::Reply facts;
  if (read.text == c.code && c.code_facts.is_object()) {
    facts.result = c.code_facts;
  } else {
    facts = t.ctx.ask("analyze", analyze_args(t, read.text, c.grid));
  }
  if (!facts.ok()) return state_.record(c, worker_failure("static", facts));
  verify::Verdict v = verify::static_gate(facts.result, original_facts_);
  if (!read.engine_line.empty()) v.evidence["engine_decorator"] = read.engine_line;
  if (v.passed) {
    json compile_args = t.ctx.base_args;
    compile_args["module_path"] = c.module_path;
    worker::Reply comp = t.ctx.ask("compile", compile_args);
    if (comp.status == worker::Status::timeout || comp.status == worker::Status::crashed) {
      v = worker_failure("static", comp);  // a hang or a fault while compiling (or, interpreted, first running) it
    } else if (!comp.ok()) {
      v.passed = false;
      v.reason = "compile error: " + comp.error;
      v.evidence["compile_error"] = comp.error;
    }
  }
  return state_.record(c, v);
}

json GatePipeline::bench_args(const std::vector<Candidate>& ready) const {
  const SearchTarget& t = state_.target;
  json args = t.ctx.base_args;
  args["module"] = t.module.index;
  args["kernel"] = t.kernel.name;
  args["mode"] = "kernel";
  args["trials"] = t.ctx.options.screen_trials;
  args["candidates"] = json::array();
  for (const auto& c : ready) args["candidates"].push_back(c.module_path);
  return args;
}

std::vector<Candidate> GatePipeline::screen(std::vector<Candidate>& ready, const json& bench_args) {
  Context& ctx = state_.target.ctx;
  // A failed screen (one candidate raising, hanging or faulting) must not sink the others: each is then screened alone.
  std::vector<std::vector<Candidate*>> groups(1);
  for (auto& c : ready) groups[0].push_back(&c);
  worker::Reply all = ctx.ask("bench", bench_args);
  if (!all.ok() && ready.size() > 1) {
    spdlog::warn("    screen of {} candidates failed ({}); screening each alone", ready.size(), all.error);
    groups.clear();
    for (auto& c : ready) groups.push_back({&c});
  }
  std::vector<Candidate> screened;
  for (const auto& group : groups) {
    json args = bench_args;
    args["candidates"] = json::array();
    for (const Candidate* c : group) args["candidates"].push_back(c->module_path);
    worker::Reply r = groups.size() == 1 ? all : ctx.ask("bench", args);
    if (!r.ok()) {
      for (Candidate* c : group) state_.record(*c, worker_failure("performance", r));
      continue;
    }
    const double base_ms = verify::median(samples(r.result["samples_ms"]["baseline"]));
    for (Candidate* c : group) {
      c->screen_ms = verify::median(samples(r.result["samples_ms"][c->module_path]));
      c->screen_base_ms = base_ms;
      ctx.store.add_timing(ctx.run_id, c->record.id, "screen", "ms", samples(r.result["samples_ms"][c->module_path]));
      screened.push_back(std::move(*c));
    }
  }
  return screened;
}

std::vector<Candidate*> GatePipeline::finalists(std::vector<Candidate>& screened) {
  const auto& o = state_.target.ctx.options;
  std::vector<Candidate*> out;
  int tuner_finalists = 0;
  for (auto& c : screened) {
    if (c.screen_ms >= c.screen_base_ms && (o.screen_rejects_slower || c.code.empty())) {
      if ((!c.code.empty() && c.origin != "llm-tuner" && c.origin != "rewrite-tuner") || c.origin == "library") {  // the Repairer and the report get the figures
        verify::Verdict v{"performance", false,
                          fmt::format("slower than the baseline in the screen: {:.4f} ms vs {:.4f} ms", c.screen_ms,
                                      c.screen_base_ms),
                          {{"candidate_ms", c.screen_ms}, {"baseline_ms", c.screen_base_ms}, {"stage", "screen"}}};
        state_.record(c, v);
      }
      continue;
    }
    const bool is_tuner = c.origin == "tuner" || c.origin == "llm-tuner" || c.origin == "rewrite-tuner";
    if (is_tuner && tuner_finalists >= o.gate_top_k) continue;
    tuner_finalists += is_tuner ? 1 : 0;
    out.push_back(&c);
  }
  return out;
}

void GatePipeline::gate_finalist(Candidate& c, const json& bench_args) {
  const SearchTarget& t = state_.target;
  Context& ctx = t.ctx;
  const auto& o = ctx.options;
  state_.out.gated++;
  json args = ctx.base_args;
  args["module"] = t.module.index;
  args["kernel"] = t.kernel.name;
  args["candidate_module"] = c.module_path;
  args["tolerances"] = o.tolerances_json();
  args["repeats"] = o.check_repeats;
  // Gate 2: the kernel alone on every launch site's real arguments, for each seed.
  // (a continued run keeps the verdicts a candidate earned before it was interrupted)
  if (!state_.passed_earlier(c, "correctness")) {
    worker::Reply chk = ctx.ask("check", args);
    if (!state_.record(c, chk.ok() ? verify::correctness_gate(chk.result) : worker_failure("correctness", chk))) return;
  }
  // Gate 3: the stitched module vs the baseline, float64 eager where they differ.
  if (!state_.passed_earlier(c, "model")) {
    worker::Reply mc = ctx.ask("model_check", args);
    if (!state_.record(c, mc.ok() ? verify::model_gate(mc.result) : worker_failure("model", mc))) return;
  }
  // Gate 4: kernel and whole module, interleaved with the baseline, L2 flushed.
  json kb = bench_args;
  kb["trials"] = o.gate_trials;
  kb["candidates"] = json::array({c.module_path});
  json mb = kb;
  mb["mode"] = "model";
  worker::Reply kr = ctx.ask("bench", kb);
  worker::Reply mr = kr.ok() ? ctx.ask("bench", mb) : kr;
  if (!kr.ok() || !mr.ok()) {
    state_.record(c, worker_failure("performance", kr.ok() ? mr : kr));
    return;
  }
  auto kbase = samples(kr.result["samples_ms"]["baseline"]), kcand = samples(kr.result["samples_ms"][c.module_path]);
  auto mbase = samples(mr.result["samples_ms"]["baseline"]), mcand = samples(mr.result["samples_ms"][c.module_path]);
  ctx.store.add_timing(ctx.run_id, c.record.id, "kernel_baseline", "ms", kbase);
  ctx.store.add_timing(ctx.run_id, c.record.id, "kernel_candidate", "ms", kcand);
  ctx.store.add_timing(ctx.run_id, c.record.id, "model_baseline", "ms", mbase);
  ctx.store.add_timing(ctx.run_id, c.record.id, "model_candidate", "ms", mcand);
  verify::Verdict perf = verify::performance_gate(kbase, kcand, mbase, mcand);
  if (!state_.record(c, perf)) return;
  state_.accept(c, verify::estimate_speedup(kbase, kcand));
}

bool GatePipeline::out_of_time(std::size_t left) {
  if (!state_.target.ctx.search_time_spent()) return false;
  if (left > 0) {
    spdlog::info("    {} candidate(s) not gated: the kernel search's {} s were spent (--search-seconds)", left,
                 state_.target.ctx.options.search_seconds);
  }
  state_.out_of_time = true;
  return true;
}

void GatePipeline::evaluate(std::vector<Candidate> batch) {
  if (out_of_time(batch.size())) return;
  std::vector<Candidate> ready;
  for (auto& c : batch) {
    if (prepare(c)) ready.push_back(std::move(c));
  }
  if (ready.empty()) return;
  // Screen: a short interleaved timing of all survivors against the baseline (its arguments, taken once,
  // are also gate 4's).
  const json args = bench_args(ready);
  std::vector<Candidate> screened = screen(ready, args);
  if (screened.empty()) return;
  state_.out.screened += static_cast<int>(screened.size());
  std::sort(screened.begin(), screened.end(),
            [](const Candidate& a, const Candidate& b) { return a.screen_ms < b.screen_ms; });
  const std::vector<Candidate*> chosen = finalists(screened);
  spdlog::info("    screen: baseline {:.4f} ms, best {:.4f} ms ({}), {} finalist(s)", screened.front().screen_base_ms,
               screened.front().screen_ms, screened.front().label(), chosen.size());
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    if (out_of_time(chosen.size() - i)) return;  // a finalist's gates already started run to their end
    gate_finalist(*chosen[i], args);
  }
}

}  // namespace kernelopt::engine
