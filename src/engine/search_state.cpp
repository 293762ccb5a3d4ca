// One kernel search's verdicts and tallies. See search_state.hpp.
#include "engine/search_state.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "util/hash.hpp"

namespace kernelopt::engine {

bool SearchState::record(Candidate& c, const verify::Verdict& v) {
  store::VerdictRecord vr;
  vr.candidate_id = c.record.id;
  vr.gate = v.gate;
  vr.passed = v.passed;
  vr.reason = v.reason;
  vr.evidence = v.evidence;
  target.ctx.store.add_verdict(vr);
  if (!v.passed) {
    target.ctx.store.set_candidate_status(c.record.id, "rejected");
    out.rejected_by[v.gate]++;
    spdlog::info("    {:<36} rejected by {} gate: {}", c.label(), v.gate, v.reason);
    failed(c, v);
  }
  return v.passed;
}

void SearchState::accept(const Candidate& c, const verify::SpeedupEstimate& est) {
  target.ctx.store.set_candidate_status(c.record.id, "passed");
  estimates[c.record.id] = est;
  spdlog::info("    {:<36} passed all four gates: kernel {:.3f}x [{:.3f}, {:.3f}]", c.label(), est.speedup, est.ci_low,
               est.ci_high);
  task.earlier.push_back({c.origin, c.label(), "performance", fmt::format("passed all gates, kernel {:.3f}x", est.speedup), true});
  out.attempts.push_back({{"origin", c.origin}, {"label", c.label()}, {"gate", "all"}, {"passed", true},
                          {"reason", fmt::format("kernel {:.3f}x", est.speedup)}});
  if (!c.family.empty()) out.attempts.back()["family"] = c.family;
  passed.push_back(c);
}

void SearchState::failed(const Candidate& c, const verify::Verdict& v) {
  task.earlier.push_back({c.origin, c.label(), v.gate, v.reason, false});
  out.attempts.push_back({{"origin", c.origin}, {"label", c.label()}, {"gate", v.gate}, {"passed", false},
                          {"reason", v.reason}});
  if (!c.family.empty()) out.attempts.back()["family"] = c.family;
  if ((c.origin == "coder" || c.origin == "repairer") && c.repair_round < target.ctx.options.repair_rounds) {
    repairs.push_back({c, v});
  }
}

void SearchState::reject_unbuildable(Candidate& c, const std::string& reason) {
  // The answer could not become a candidate: nothing of it ran; the Repairer sees why.
  c.kernel_source = c.code;
  c.hash = util::sha256_hex(c.code);
  if (!seen.insert(c.hash).second) return;
  auto [stored, inserted] = target.ctx.store.add_candidate(
      candidate_record(target, c, {{"config", c.config}, {"notes", c.notes}, {"unbuildable", true}}));
  c.record = stored;
  if (!inserted && stored.status == "rejected") {
    requeue(c);
    return;
  }
  ++used;
  record(c, verify::Verdict{"static", false, reason, {{"error", reason}}});
}

void SearchState::requeue(const Candidate& c) {
  for (const auto& v : target.ctx.store.verdicts(c.record.id)) {
    if (!v.passed) {
      out.rejected_by[v.gate]++;
      failed(c, verify::Verdict{v.gate, false, v.reason, v.evidence});
      return;
    }
  }
}

bool SearchState::reuse(Candidate& c) {
  std::vector<double> kbase, kcand;
  for (const auto& t : target.ctx.store.timings(target.ctx.run_id)) {
    if (t.candidate_id != c.record.id) continue;
    if (t.label == "kernel_baseline") kbase = t.samples;
    if (t.label == "kernel_candidate") kcand = t.samples;
  }
  if (kbase.empty() || kcand.empty()) return false;
  c.reused = true;
  auto est = verify::estimate_speedup(kbase, kcand);
  estimates[c.record.id] = est;
  spdlog::info("    {:<36} verified earlier in this run: kernel {:.3f}x (not re-run)", c.label(), est.speedup);
  passed.push_back(c);
  return true;
}

bool SearchState::passed_earlier(const Candidate& c, const std::string& gate) const {
  if (!c.continued) return false;
  for (const auto& v : target.ctx.store.verdicts(c.record.id)) {
    if (v.gate == gate && v.passed) return true;
  }
  return false;
}

}  // namespace kernelopt::engine
