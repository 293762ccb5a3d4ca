/// \file
/// Whole-model decisions (`--decisions`): named, fixed sets of torch.compile settings, searched before
/// the kernel search and judged like kernels. The whitelist is here and nowhere else: a decision's
/// settings are never free-form and never come from an LLM; the worker's `decide` op only applies and
/// measures them (python/kernelopt/inputs/module/decisions.py), the engine decides.
///
/// Gates at model level: 1, static (`decision_static_gate`: every setting in the whitelist); 2-3, the
/// worker's correctness runs against torch.compile default and float64 eager (verify::model_gate, the
/// float64 fallback of gate 3); the decision's own checks (CUDA graphs: inputs at new addresses; a model
/// that writes its inputs is refused); 4, performance (bootstrap interval of default/decision above 1).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/stats.hpp"
#include "verify/verdict.hpp"

namespace kernelopt::engine {

struct Context;
class RunDir;

struct Decision {
  std::string name;
  nlohmann::json settings;  ///< {"mode"?, "options"?, "channels_last"?, "cudnn_benchmark"?}: protocol.json's
                            ///< compile_settings
  std::string what;         ///< one line for the report and README
};

/// The whitelist, `default` first (torch.compile with no settings: the baseline every other is timed
/// against, and the decision kept when none passes).
const std::vector<Decision>& decision_space();
/// A decision's settings as Inductor options alone: a mode as the options torch.compile turns it into
/// (torch._inductor.list_mode_options: reduce-overhead = triton.cudagraphs; max-autotune-no-cudagraphs =
/// max_autotune + coordinate_descent_tuning; max-autotune = all three), then its own options.
nlohmann::json options_of(const nlohmann::json& settings);
/// What a decision's settings compile and run as: [options_of, channels_last, cudnn_benchmark]; two decisions
/// with equal values are the same model (the search never judges one twice).
nlohmann::json compiled_as(const nlohmann::json& settings);
/// `a` and `b` together (named "a+b"): the union of their options (options_of), channels_last and
/// cudnn_benchmark if either has it. torch.compile takes a mode or options, so a composition is options.
Decision compose(const Decision& a, const Decision& b);

/// Gate 1 at model level: passes iff `settings` is an object whose every key and value the whitelist
/// allows: `mode` one of Inductor's modes below, `options` only coordinate_descent_tuning, combo_kernels,
/// freezing and the options the modes stand for (triton.cudagraphs, max_autotune; booleans), `channels_last` and
/// `cudnn_benchmark` booleans, and not a mode and options together (torch.compile refuses).
verify::Verdict decision_static_gate(const nlohmann::json& settings);

struct DecisionOutcome {
  std::string name;
  nlohmann::json settings;
  std::string status;  ///< "kept" | "passed" (not the fastest) | "rejected" | "skipped" | "baseline"
  std::string why;     ///< one line: why kept, rejected or skipped
  std::string gate;    ///< the failing gate when rejected
  std::optional<verify::SpeedupEstimate> speedup;  ///< default / decision, when timed
  nlohmann::json checks;                           ///< the decision's own checks (CUDA graphs)
  std::optional<double> seconds;                   ///< its `decide` request's wall time (where the search's time goes)
  std::map<std::string, double> phases;            ///< that request's phases (compile, correctness, timing), s

  nlohmann::json to_json() const;
  static DecisionOutcome from_json(const nlohmann::json& j);
};

/// One decision judged from the worker's `decide` evidence (its result, as protocol.json defines it):
/// skipped, refused, gates 3 and 4 and the decision's checks, in that order. Pure; never throws.
DecisionOutcome judge_decision(const Decision& d, const nlohmann::json& evidence, int min_samples = 10);

/// The fastest passing decision's outcome is marked "kept"; none passing keeps `default`. Returns the
/// kept decision's name.
std::string choose_decision(std::vector<DecisionOutcome>& outcomes);

struct DecisionSearch {
  Decision kept;
  std::vector<DecisionOutcome> outcomes;  ///< every decision tried: the whitelist's order, then compositions
  nlohmann::json to_json() const;         ///< {"kept", "settings", "tried": [...]}: report.json and the manifest
};

/// Every decision through the gates (one `decide` request each; progress lines), then up to two compositions
/// (compose) of the fastest passing one with the next passing ones, each verdict recorded in the store; the
/// fastest that passed is kept. A resumed run reuses the decisions its store already judged. With
/// options.decisions_seconds > 0, a decision not started within that allowance (elapsed_s: seconds since the
/// search began; default the steady clock) or not finished within what was left of it is skipped.
DecisionSearch search_decisions(Context& ctx, const std::function<double()>& elapsed_s = {});

/// `--decisions`: the search, the kept decision written into the run directory's manifest and its settings
/// into every later request on the problem (`compile_settings` in ctx.base_args, except for `default`);
/// returns the report's "decisions". Without `--decisions`: no request, nothing changed, null.
nlohmann::json decisions_before_capture(Context& ctx, RunDir& run_dir);

/// The end-to-end check's word on a kept decision (report.json's "decisions"; its check compares the model as
/// users load it with torch.compile default): "" when none is kept (default) or the check confirmed it
/// (passed, and not slower: the rule the optimized kernels meet), else why it is dropped.
std::string decision_unconfirmed_why(const nlohmann::json& decisions, bool passed, const verify::SpeedupEstimate& e2e);

/// The decisions' report with the kept one dropped: "kept" back to default (no settings), "dropped": {name,
/// why}, and its entry in "tried" marked "dropped" with why.
nlohmann::json drop_kept_decision(nlohmann::json decisions, const std::string& why);

}  // namespace kernelopt::engine
