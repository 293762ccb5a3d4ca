// Prompt variables from the engine's facts, and the five agents' requests.
#include "agents/llm_agents.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "agents/prompt.hpp"

namespace kernelopt::agents {
namespace {

using nlohmann::json;

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// Blank lines at either end removed (the kernel literal starts with a newline).
std::string strip_blank_ends(const std::string& s) {
  std::size_t b = 0;
  while (true) {
    const std::size_t nl = s.find('\n', b);
    if (nl == std::string::npos || s.find_first_not_of(" \t\r", b) < nl) break;
    b = nl + 1;
  }
  std::size_t e = s.size();
  while (e > b && (s[e - 1] == '\n' || s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return s.substr(b, e - b);
}

// Compact JSON that never throws on bad UTF-8.
std::string compact(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string cut(std::string s, std::size_t max, const char* mark) {
  if (s.size() <= max) return s;
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  return s + mark;
}

std::string percent(double fraction) { return fmt::format("{:.0f}%", fraction * 100.0); }

// The device limit the roofline fraction was measured against, GB/s (0 = unknown).
double bandwidth_limit(const KernelProfile& p, double measured) {
  if (measured > 0) return measured;
  if (p.bound != "compute" && p.roofline_fraction > 0) return p.achieved_gbps / p.roofline_fraction;
  return 0;
}

std::vector<std::string> numel_params(const std::vector<std::string>& params) {
  std::vector<std::string> out;
  for (const auto& p : params) {
    if (p.size() >= 5 && p.ends_with("numel")) out.push_back(p);
  }
  return out;
}

std::string signature_text(const KernelTask& t) {
  std::vector<std::string> parts;
  std::set<std::string> done;
  auto add = [&](const std::string& name) {
    auto it = t.signature.find(name);
    if (it == t.signature.end() || !done.insert(name).second) return;
    parts.push_back(name + ": " + it->second);
  };
  for (const auto& p : t.params) add(p);
  for (const auto& c : t.constexprs) add(c);
  for (const auto& [name, type] : t.signature) add(name);
  return parts.empty() ? "not recorded" : join(parts);
}

std::string def_params(const KernelTask& t) {
  std::vector<std::string> parts = t.params;
  for (const auto& c : t.constexprs) parts.push_back(c + " : tl.constexpr");
  return join(parts);
}

std::string launch_sites(const KernelTask& t) {
  if (t.launch_numels.empty()) return "none recorded";
  const auto names = numel_params(t.params);
  std::vector<std::string> sites;
  for (const auto& numels : t.launch_numels) {
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < numels.size(); ++i) {
      parts.push_back(numels.size() == names.size() ? fmt::format("{}={}", names[i], numels[i])
                                                     : std::to_string(numels[i]));
    }
    sites.push_back(parts.empty() ? "no numel arguments" : join(parts));
  }
  if (sites.size() == 1) return sites[0] + " (1 site)";
  std::string out;
  for (std::size_t i = 0; i < sites.size(); ++i) out += fmt::format("{}site {}: {}", i ? "; " : "", i + 1, sites[i]);
  return out;
}

// "XBLOCK=1, R0_BLOCK=2048, num_warps=16, num_stages=1": constexprs in order, then warps, stages, the rest.
std::string config_text(const json& cfg, const std::vector<std::string>& constexprs) {
  if (!cfg.is_object() || cfg.empty()) return "unknown (the launcher reported none)";
  std::vector<std::string> parts;
  std::set<std::string> done;
  auto add = [&](const std::string& k) {
    if (!cfg.contains(k) || !done.insert(k).second) return;
    parts.push_back(k + "=" + (cfg[k].is_string() ? cfg[k].get<std::string>() : compact(cfg[k])));
  };
  for (const auto& c : constexprs) add(c);
  add("num_warps");
  add("num_stages");
  for (const auto& [k, v] : cfg.items()) add(k);
  return join(parts);
}

std::string profile_text(const KernelProfile& p, double measured_gbps) {
  std::string out = fmt::format("- Time: {:.4f} ms per model call, {:.1f}% of the module's time.\n", p.time_ms,
                                p.share * 100.0);
  out += fmt::format("- Bytes moved: {:.1f} MB (reads and writes).\n", p.bytes / 1e6);
  const double limit = bandwidth_limit(p, measured_gbps);
  if (p.bound == "compute") {
    out += fmt::format("- Achieved bandwidth: {:.0f} GB/s{}.\n", p.achieved_gbps,
                       limit > 0 ? fmt::format(" of the measured {:.0f} GB/s", limit) : std::string());
    out += fmt::format("- Bound: compute, at {} of the measured fp32 peak.", percent(p.roofline_fraction));
  } else if (limit > 0) {
    out += fmt::format("- Achieved bandwidth: {:.0f} GB/s, {} of the measured {:.0f} GB/s limit.\n", p.achieved_gbps,
                       percent(p.achieved_gbps / limit), limit);
    out += p.bound == "latency" ? "- Bound: latency (10 us per launch or less: launch overhead dominates)."
                                : "- Bound: " + p.bound + ".";
  } else {
    out += fmt::format("- Achieved bandwidth: {:.0f} GB/s; the device's limit was not measured.\n", p.achieved_gbps);
    out += "- Bound: " + (p.bound.empty() ? std::string("unknown") : p.bound) + ".";
  }
  return out;
}

std::string earlier_text(const std::vector<Attempt>& earlier) {
  if (earlier.empty()) return "None yet.";
  std::string out;
  const std::size_t from = earlier.size() > kMaxEarlierAttempts ? earlier.size() - kMaxEarlierAttempts : 0;
  if (from > 0) out += fmt::format("({} older attempts not shown.)\n", from);
  for (std::size_t i = from; i < earlier.size(); ++i) {
    const Attempt& a = earlier[i];
    out += fmt::format("- {} `{}`: {}{}\n", a.origin, a.label,
                       a.passed ? "passed all four gates: " : "rejected by the " + a.gate + " gate: ", a.reason);
  }
  out.pop_back();
  return out;
}

std::string outputs_text(const KernelTask& t) {
  const auto outs = t.outputs.empty() ? stored_pointers(t.source, t.params) : t.outputs;
  return outs.empty() ? "none found by a scan of the source; see tl.store calls" : join(outs);
}

std::string size_hints_text(const json& hints) {
  if (!hints.is_object() || hints.empty()) return "not recorded";
  // Inductor's order: the pointwise dimensions (x, y, z), then the reduction ones (r0_, r1_)
  std::vector<std::string> parts, reduction;
  for (const auto& [k, v] : hints.items()) (k.rfind("r", 0) == 0 ? reduction : parts).push_back(k + "=" + compact(v));
  parts.insert(parts.end(), reduction.begin(), reduction.end());
  return join(parts);
}

// prompts/kernel.md for task.
std::string kernel_context(const KernelTask& t) {
  const std::string diagnosis = !t.diagnosis.empty() ? t.diagnosis : (!t.profile.diagnosis.empty() ? t.profile.diagnosis : "none");
  return render_prompt("kernel", {
      {"kernel_name", t.kernel_name},
      {"kind", t.kind.empty() ? std::string("unknown") : t.kind},
      {"source", strip_blank_ends(t.source)},
      {"params", t.params.empty() ? std::string("none") : join(t.params)},
      {"constexprs", t.constexprs.empty() ? std::string("none") : join(t.constexprs)},
      {"signature", signature_text(t)},
      {"outputs", outputs_text(t)},
      {"aten_ops", t.aten_ops.empty() ? std::string("not recorded") : join(t.aten_ops)},
      {"size_hints", size_hints_text(t.size_hints)},
      {"launch_sites", launch_sites(t)},
      {"current_config", config_text(t.current_config, t.constexprs)},
      {"grid_rule", t.grid_rule.empty() ? std::string("Inductor's default") : t.grid_rule},
      {"graph_fragment", t.graph_fragment.empty() ? std::string("(not recorded)") : strip_blank_ends(t.graph_fragment)},
      {"profile", profile_text(t.profile, t.bandwidth_gbps)},
      {"diagnosis", diagnosis},
  });
}

// prompts/kernel_answer.md for task, asking for `candidates` candidates (0 = one fix).
std::string answer_rules(const KernelTask& t, int candidates) {
  std::vector<std::string> meta;
  for (const auto& c : t.constexprs) meta.push_back(fmt::format("\"{}\": <int>", c));
  meta.push_back("\"num_warps\": <int>");
  meta.push_back("\"num_stages\": <int>");
  const auto numels = numel_params(t.params);
  std::string count_rule, multi_rule;
  if (candidates <= 0) {
    count_rule = "Answer with one fixed candidate.";
    multi_rule = "Text outside the two blocks is ignored.";
  } else if (candidates == 1) {
    count_rule = "Answer with one candidate.";
    multi_rule = "Text outside the two blocks is ignored.";
  } else {
    count_rule = fmt::format("Answer with {} candidates.", candidates);
    multi_rule = fmt::format(
        "Put a heading line before each candidate's two blocks: \"### Candidate 1\" for the first, up to "
        "\"### Candidate {}\" for the last. Text outside the blocks is ignored.",
        candidates);
  }
  return render_prompt("kernel_answer", {
      {"kernel_name", t.kernel_name},
      {"def_params", def_params(t)},
      {"outputs", outputs_text(t)},
      {"count_rule", count_rule},
      {"atol", fmt::format("{:g}", t.atol)},
      {"rtol", fmt::format("{:g}", t.rtol)},
      {"half_atol", fmt::format("{:g}", t.half_atol)},
      {"half_rtol", fmt::format("{:g}", t.half_rtol)},
      {"meta_example", "{" + join(meta) + "}"},
      {"constexprs", t.constexprs.empty() ? std::string("none") : join(t.constexprs)},
      {"grid_rule", t.grid_rule.empty() ? std::string("Inductor's default") : t.grid_rule},
      {"numel_params", numels.empty() ? std::string("the numel parameters") : join(numels)},
      {"multi_rule", multi_rule},
  });
}

std::string strategy_text(const KernelTask& t) {
  return t.strategy.empty() ? "None given: choose the approach from the profile and the diagnosis." : t.strategy;
}

llm::ChatRequest make_request(const std::string& user, const std::string& tag, int max_tokens) {
  llm::ChatRequest r;
  r.system = render_prompt("system", json::object());
  r.messages = {{"user", user}};
  r.temperature = 0;
  r.max_tokens = max_tokens;
  r.tag = tag;
  return r;
}

// The measured table both the Profiler and the Planner read.
std::string kernel_table(const std::vector<KernelProfile>& profiles, double measured_gbps, bool with_diagnosis) {
  std::string out = with_diagnosis
                        ? "| kernel | kind | ms per call | share | MB moved | GB/s | roofline | bound | diagnosis |\n"
                          "|---|---|---:|---:|---:|---:|---:|---|---|\n"
                        : "| kernel | kind | ms per call | share | MB moved | GB/s | roofline | bound |\n"
                          "|---|---|---:|---:|---:|---:|---:|---|\n";
  for (const auto& p : profiles) {
    const double limit = bandwidth_limit(p, measured_gbps);
    const std::string roof = p.bound == "compute" ? percent(p.roofline_fraction) + " of fp32 peak"
                             : limit > 0          ? percent(p.achieved_gbps / limit)
                                                  : "unknown";
    out += fmt::format("| {} | {} | {:.4f} | {:.1f}% | {:.1f} | {:.0f} | {} | {} |", p.name, p.kind, p.time_ms,
                       p.share * 100.0, p.bytes / 1e6, p.achieved_gbps, roof, p.bound);
    if (with_diagnosis) out += " " + (p.diagnosis.empty() ? std::string("-") : p.diagnosis) + " |";
    out += "\n";
  }
  out.pop_back();
  return out;
}

}  // namespace

std::vector<std::string> stored_pointers(const std::string& source, const std::vector<std::string>& params) {
  std::set<std::string> stored;
  for (const char* call : {"tl.store(", "tl.atomic_"}) {
    for (std::size_t at = source.find(call); at != std::string::npos; at = source.find(call, at + 1)) {
      std::size_t i = source.find('(', at);
      if (i == std::string::npos) break;
      ++i;
      while (i < source.size() && (source[i] == ' ' || source[i] == '(' || source[i] == '\n')) ++i;
      std::size_t e = i;
      while (e < source.size() && (std::isalnum(static_cast<unsigned char>(source[e])) || source[e] == '_')) ++e;
      stored.insert(source.substr(i, e - i));
    }
  }
  std::vector<std::string> out;
  for (const auto& p : params) {
    if (stored.count(p)) out.push_back(p);
  }
  return out;
}

llm::ChatRequest profiler_request(const std::vector<KernelProfile>& profiles, double bandwidth_gbps) {
  std::string example = "{";
  for (std::size_t i = 0; i < profiles.size(); ++i)
    example += fmt::format("{}\"{}\": \"...\"", i ? ", " : "", profiles[i].name);
  example += "}";
  const std::string user = render_prompt(
      "profiler", {{"bandwidth", bandwidth_gbps > 0 ? fmt::format("{:.0f} GB/s", bandwidth_gbps) : std::string("not measured")},
                   {"kernel_table", kernel_table(profiles, bandwidth_gbps, false)},
                   {"answer_example", example}});
  return make_request(user, "profiler", kSmallMaxTokens);
}

llm::ChatRequest planner_request(const std::vector<KernelProfile>& profiles, int total_budget, int min_budget) {
  const std::string example =
      R"([{"kernel": "<kernel name>", "budget": <int>, "strategy": "<what to change and why it is faster>"}, ...])";
  const std::string user = render_prompt("planner", {{"total_budget", total_budget},
                                                     {"min_budget", min_budget},
                                                     {"kernel_table", kernel_table(profiles, 0, true)},
                                                     {"answer_example", example}});
  return make_request(user, "planner", kSmallMaxTokens);
}

llm::ChatRequest coder_request(const KernelTask& task, int candidates) {
  candidates = std::max(1, candidates);
  const std::string count_sentence =
      candidates == 1 ? "Give one candidate."
                      : fmt::format("Give {} candidates, each a genuinely different approach: all are measured and "
                                    "the fastest correct one is kept.",
                                    candidates);
  const std::string user = render_prompt("coder", {{"kernel_name", task.kernel_name},
                                                   {"count_sentence", count_sentence},
                                                   {"kernel", kernel_context(task)},
                                                   {"strategy", strategy_text(task)},
                                                   {"earlier", earlier_text(task.earlier)},
                                                   {"answer_rules", answer_rules(task, candidates)}});
  return make_request(user, "coder." + task.kernel_name, kKernelMaxTokens);
}

llm::ChatRequest repairer_request(const KernelTask& task, const KernelAnswer& failed, const GateFailure& failure) {
  static const std::map<std::string, std::string> kMeaning = {
      {"static",
       "The static gate reads the candidate's source without running it, then compiles it with Triton. The source "
       "breaks one of the rules below, or Triton could not compile it (the compiler's message is in the evidence). "
       "Nothing of the candidate ran."},
      {"correctness",
       "The correctness gate ran the candidate alone on the model's real arguments at every launch site, for several "
       "input seeds, and compared every output with the original's. The evidence lists the first mismatching "
       "elements with the values the candidate wrote (got) and the original's (expected): look for wrong indexing, "
       "masks or strides, a missed tail, a reduction over the wrong axis, or an accumulator in the wrong dtype."},
      {"model",
       "The model gate ran the whole model with the candidate stitched in: its outputs differ from the original's "
       "beyond the tolerance and are less accurate against a float64 reference."},
      {"performance",
       "The candidate computes the right results but is not faster than the original: the evidence has the timings "
       "(ms) of both. Change what limits it (bytes moved, passes over the data, parallelism) rather than retuning a "
       "little."},
  };
  auto it = kMeaning.find(failure.gate);
  const std::string meaning = it != kMeaning.end() ? it->second : "See the reason and the evidence.";
  std::string evidence = failure.evidence.is_null() ? "null" : compact(failure.evidence);
  evidence = cut(std::move(evidence), kMaxEvidenceChars, " ...(truncated)");
  const std::string failed_meta =
      failed.meta.is_object() && !failed.meta.empty() ? compact(failed.meta) : std::string("(none given)");
  std::string failed_grid = "null (Inductor's own)";
  if (!failed.grid.empty()) failed_grid = compact(json(failed.grid));
  const std::string user = render_prompt(
      "repairer", {{"kernel_name", task.kernel_name},
                   {"gate", failure.gate.empty() ? std::string("unknown") : failure.gate},
                   {"gate_meaning", meaning},
                   {"reason", failure.reason.empty() ? std::string("(none given)") : failure.reason},
                   {"evidence", evidence},
                   {"code", strip_blank_ends(failed.code)},
                   {"failed_meta", failed_meta},
                   {"failed_grid", failed_grid},
                   {"kernel", kernel_context(task)},
                   {"strategy", strategy_text(task)},
                   {"earlier", earlier_text(task.earlier)},
                   {"answer_rules", answer_rules(task, 0)}});
  return make_request(user, "repairer." + task.kernel_name, kKernelMaxTokens);
}

llm::ChatRequest tuner_request(const KernelTask& task, int max_configs) {
  max_configs = std::max(1, max_configs);
  std::vector<std::string> keys;
  for (const auto& c : task.constexprs) keys.push_back(fmt::format("\"{}\": <int>", c));
  keys.push_back("\"num_warps\": <int>");
  keys.push_back("\"num_stages\": <int>");
  const std::string example = "[{" + join(keys) + "}, ...]";
  const std::string user = render_prompt(
      "tuner", {{"kernel_name", task.kernel_name},
                {"constexprs", task.constexprs.empty() ? std::string("none") : join(task.constexprs)},
                {"kernel", kernel_context(task)},
                {"earlier", earlier_text(task.earlier)},
                {"max_configs", max_configs},
                {"answer_example", example},
                {"current_config", config_text(task.current_config, task.constexprs)}});
  return make_request(user, "tuner." + task.kernel_name, kSmallMaxTokens);
}

std::vector<KernelAnswer> parse_kernel_answers(const std::string& text, const KernelTask& task) {
  return parse_kernel_answers(text, task.constexprs);
}

}  // namespace kernelopt::agents
