/// \file
/// A kernel search's candidates: the kernel a search is about (SearchTarget), one
/// candidate (a launch config of the original kernel, or rewritten code with its
/// meta-parameters), and how candidates are built from the agents' answers, the
/// Tuner's space and their own text. Building never runs anything: code is only
/// read (the worker's `analyze`, Python's ast) and stitched into the module.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/llm_agents.hpp"
#include "agents/role.hpp"
#include "artifact/artifact.hpp"
#include "engine/context.hpp"
#include "store/store.hpp"

namespace kernelopt::engine {

/// The kernel one search is about, fixed for the search: where it is, the launch config it
/// starts from and the meta-parameters the Tuner may move.
struct SearchTarget {
  SearchTarget(Context& ctx, const artifact::Module& module, const artifact::Kernel& kernel,
               nlohmann::json baseline_config);

  Context& ctx;
  const artifact::Module& module;
  const artifact::Kernel& kernel;
  nlohmann::json baseline;     ///< the launcher's config; null when it reported none
  nlohmann::json tunable;      ///< num_warps, num_stages and the constexprs the baseline sets; {} without a baseline
  nlohmann::json kernel_json;  ///< the kernel as artifact::to_json has it (what the Tuner's space reads)

  const InputKind& input;      ///< what the kind of input decides (the context's)
  bool llm_on(agents::Role role) const { return ctx.llm != nullptr && ctx.llm->enabled(role); }
  /// The current launch config as a label; a standalone kernel's without its (fixed) block sizes.
  std::string baseline_label() const;
  /// The grid the kernel is launched with, in the agents' words.
  std::string grid_rule() const;
};

/// What the agents are told about the target (the Planner's strategy, the Profiler's numbers and diagnosis).
agents::KernelTask kernel_task(const SearchTarget& target, const agents::KernelProfile& profile,
                               const std::string& strategy);

/// The num_warps/num_stages of a config (a standalone kernel's block sizes are its launcher's).
nlohmann::json launch_only(const nlohmann::json& config);

/// A candidate under evaluation: a launch config of the original kernel (Tuner)
/// or an LLM-written kernel with its meta-parameters (Coder, Repairer).
struct Candidate {
  std::string origin;          ///< tuner | coder | repairer | llm-tuner | rewrite | rewrite-tuner | library
  nlohmann::json config;       ///< launch meta-parameters (constexprs, num_warps, num_stages)
  nlohmann::json pinned;       ///< meta-parameters the code needs as they are (a rewrite's R0_BLOCK)
  std::vector<std::string> grid;  ///< LLM grid expressions; empty = Inductor's / the launcher's
  std::string code;            ///< the LLM's code as answered ("" for configs of the original)
  std::string notes;           ///< the LLM's one-line notes
  std::string family;          ///< the rewrite family it comes from (rewrite, rewrite-tuner); "" otherwise
  nlohmann::json code_facts;   ///< `analyze`'s facts of `code` (composing asked): gate 1 reuses them where it reads `code`
  int repair_round = 0;        ///< 0 for first answers; n for the n-th repair of a lineage
  std::string kernel_source, hash, module_path;
  store::CandidateRecord record;
  double screen_ms = 0;
  double screen_base_ms = 0;   ///< the baseline's median in the same screen
  bool reused = false;         ///< passed every gate in an earlier attempt of this run: verdicts reused
  std::int64_t library_id = 0; ///< the library entry it came from (origin library)
  bool continued = false;      ///< recorded (still pending) by an interrupted attempt of this run
  std::string label() const;
};

/// The answers of the Coder or the Repairer as candidates: each answer's meta-parameters over the
/// current config (a standalone kernel keeps its launcher's).
std::vector<Candidate> answer_candidates(const SearchTarget& target, const std::vector<agents::KernelAnswer>& answers,
                                         const std::string& origin, int repair_round);

/// Up to max_configs launch configs of `code` ("" = the original kernel) from the Tuner's space around
/// `around`; configs that move a `pinned` meta-parameter are left out. None without a config to start from.
std::vector<Candidate> tuner_candidates(const SearchTarget& target, const std::string& code,
                                        const nlohmann::json& around, const std::string& origin, int max_configs,
                                        const nlohmann::json& pinned = nlohmann::json());

/// The worker's `analyze` request for `source` (with a candidate's grid: checked against the kernel's numel
/// parameters). Text is only read (Python's ast), never run.
nlohmann::json analyze_args(const SearchTarget& target, const std::string& source, const std::vector<std::string>& grid);

/// The store's record of candidate `c` (its hash set) of the target, with `meta`.
store::CandidateRecord candidate_record(const SearchTarget& target, const Candidate& c, nlohmann::json meta);

/// Sets c.kernel_source: the kernel's text as it would run (a library entry's is already set). Rewritten code
/// is located with the worker's `analyze` (read, never run). Throws artifact::ArtifactError when the candidate
/// cannot be built (the answer does not parse, lacks the kernel, cannot be stitched).
void compose_source(const SearchTarget& target, Candidate& c);

}  // namespace kernelopt::engine
