/// \file
/// The one place the engine forks on what the user gave it. `optimize` (an nn.Module: the
/// kernels of Inductor's output modules), `optimize-kernel` (a standalone Triton file: the user's
/// kernels, their launcher and host code kept byte-identical) and `optimize-helion` (a Helion
/// kernel: its generated Triton code exported to a standalone file, then optimized as one).
/// An InputKind is chosen once per run from OptimizeOptions::input_kind (input_kind_named) and
/// held by the Context; the run's stages and a kernel's search ask it instead of comparing names.
/// The worker has the same seam (python/kernelopt/inputs/, `ops_for(kind)`).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/llm_agents.hpp"
#include "artifact/artifact.hpp"
#include "artifact/config.hpp"
#include "artifact/stitch.hpp"
#include "store/library.hpp"

namespace kernelopt::engine {

struct Context;
struct Candidate;

/// What gate 1 reads of a candidate.
struct StaticText {
  std::string text;         ///< the source the static checks judge
  std::string engine_line;  ///< the engine's own line above the user's kernel ("" = none): evidence only
};

class InputKind {
 public:
  virtual ~InputKind() = default;

  /// module | triton | helion: OptimizeOptions::input_kind and the worker's `input_kind` argument.
  virtual std::string name() const = 0;

  // --- the run ---

  /// The command line's name for the problem argument: model | kernel_file.
  virtual std::string problem_argument() const = 0;

  /// Before validation: makes ctx.base_args["problem"] the file the worker works on. Returns what the
  /// step found out for the report (Helion's export; null for the others).
  virtual nlohmann::json prepare_problem(Context& ctx, const std::filesystem::path& out) const;
  /// What stage 1 records, for its progress line: "torch.compile of" | "the launches of".
  virtual std::string capture_what() const = 0;
  /// After the end-to-end check: outputs beyond optimized/moduleN.py (a standalone run's drop-in file).
  virtual void write_outputs(const Context& ctx, const std::filesystem::path& out) const;

  // --- one kernel's search ---

  /// The kernel library's name for these kernels: inductor | triton (an entry is reused only by its own kind).
  virtual std::string library_kind() const = 0;
  /// The part of a launch config the engine sets (a standalone kernel's block sizes are its launcher's).
  virtual nlohmann::json own_config(const nlohmann::json& config) const = 0;
  /// The grid the kernel is launched with, in the agents' words.
  virtual std::string grid_rule(const artifact::Kernel& kernel) const = 0;
  /// An answer's launch config: its meta over `tunable`; null where the launcher keeps its own.
  virtual nlohmann::json answer_config(const nlohmann::json& tunable, const nlohmann::json& meta) const = 0;
  /// The original kernel's text as it would run under `cfg`.
  virtual std::string config_source(const artifact::Module& module, const artifact::Kernel& kernel,
                                    const artifact::LaunchConfig& cfg) const = 0;
  /// Rewritten code's text as it would run (`fn`: where the kernel function is in `code`).
  virtual std::string code_source(const artifact::Module& module, const artifact::Kernel& kernel,
                                  const std::string& code, const artifact::FunctionLines& fn,
                                  const nlohmann::json& config, const std::vector<std::string>& grid) const = 0;
  /// A library entry as a candidate for kernel `name`: its code, and its stitched text where that is used as is.
  virtual void from_library(const store::LibraryEntry& entry, const std::string& name, Candidate& c) const = 0;
  /// What gate 1 compares candidates with.
  virtual std::string original_text(const artifact::Module& module, const artifact::Kernel& kernel) const = 0;
  /// What gate 1 reads of `c` (composed); `original` is original_text.
  virtual StaticText static_text(const Candidate& c, const std::string& original) const = 0;
  /// Why the kernel's launch config is not tuned ("" = it is).
  virtual std::string untunable(const artifact::Kernel& kernel) const = 0;
  /// What the LLM Tuner is asked about (a standalone kernel: num_warps and num_stages only).
  virtual agents::KernelTask tuner_task(agents::KernelTask task) const = 0;
  /// Whether the rewrite families (structural rewrites of Inductor kernels) apply, and whether the best
  /// rewritten code gets its launch config tuned afterwards.
  virtual bool rewrites_and_tunes_code() const = 0;
  /// Why there is no candidate when the Tuner has no space and nothing else answered.
  virtual std::string no_tuning_space(const artifact::Kernel& kernel) const = 0;
};

/// The kind of that name (module | triton | helion); UserError for any other.
const InputKind& input_kind_named(const std::string& name);

}  // namespace kernelopt::engine
