/// \file
/// Options of one `kernelopt optimize` run, with the defaults a user gets.
/// Tolerances and sample counts follow how the field measures (shared/GPU.md):
/// fp32 atol = rtol = 1e-4, fp16/bf16 1e-2, 100 timed trials, L2 flushed before each.
/// The tolerances' defaults are stated here and nowhere else: the engine sends them with every
/// comparison (tolerances_json); the worker and the prompts only use what they are given.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/llm_session.hpp"

namespace kernelopt::engine {

struct OptimizeOptions {
  std::filesystem::path problem;             ///< KernelBench-format model file
  std::filesystem::path out_dir;             ///< run directory (created; must be empty or this problem's)
  std::filesystem::path workspace = ".kernelopt";  ///< holds store.db, shared by runs
  std::filesystem::path library;             ///< kernel library file; "" = <workspace>/library.kolib
  std::string python = "python3";            ///< interpreter with torch and triton
  std::string python_path;                   ///< the repo's python/ dir; found from the binary if empty
  std::string device = "cuda";
  std::vector<int> seeds = {0, 1, 2};        ///< input seeds the gates check on (>= 3)
  std::vector<int> final_seeds = {1000, 1001, 1002};  ///< fresh seeds for the end-to-end check
  double atol = 1e-4, rtol = 1e-4;           ///< fp32 tolerances (any floating dtype but the half types)
  double half_atol = 1e-2, half_rtol = 1e-2; ///< fp16 and bf16 tolerances
  int check_repeats = 3;                     ///< gate 2 launches each launch this often; 1 = no determinism check
  int budget = 48;                           ///< tuner configs screened, over all kernels
  int gate_top_k = 3;                        ///< best screened configs per kernel sent through gates 2-4
  bool screen_rejects_slower = true;         ///< false: a written candidate slower in the screen still meets gates 2-4
                                             ///< (the adversarial suite: each case must reach the gate meant for it)
  int screen_trials = 20;                    ///< timed trials per config when screening
  int gate_trials = 100;                     ///< timed trials per series in the performance gate
  int request_timeout_s = 900;               ///< one worker request; a hang is killed after this
  double final_error_ratio = 1.0;            ///< end to end: optimized error vs float64 may be this times the baseline's
  std::string input_kind = "module";         ///< module (nn.Module problem) | triton (standalone kernel file) | helion
                                             ///< (engine/input_kind.hpp: what each decides)
  std::string helion_kernel;                 ///< helion: which @helion.kernel of the file ("" = its only one)
  bool helion_autotune = false;              ///< helion: let Helion's autotuner choose the config whose code is optimized
  agents::LlmConfig llm;                     ///< which LLM each agent asks; none configured = offline agents
  int coder_candidates = 3;                  ///< candidates asked of the Coder per kernel
  int repair_rounds = 2;                     ///< Repairer rounds per failed LLM candidate lineage
  bool decisions = false;                    ///< search whole-model decisions before the kernels (engine/decisions.hpp)
  int decisions_seconds = 60;                ///< the decision search's time allowance, s (0 = none): a decision
                                             ///< not started or not finished within it is skipped
  int search_seconds = 0;                    ///< the kernel search's time allowance over all kernels, s (0 = none):
                                             ///< once spent, no further candidate is gated; what passed is kept
  bool resume = false;                       ///< continue the run recorded in out_dir (kernelopt resume)
  std::string gpus = "1";                    ///< workers searching kernels at once, one per GPU: N or "all"

  /// The worker's `tolerances` argument: {"float32"|"float16"|"bfloat16": {"atol", "rtol"}} (protocol.json).
  nlohmann::json tolerances_json() const {
    const nlohmann::json half = {{"atol", half_atol}, {"rtol", half_rtol}};
    return {{"float32", {{"atol", atol}, {"rtol", rtol}}}, {"float16", half}, {"bfloat16", half}};
  }

  /// The kernel library this run reads and writes.
  std::filesystem::path library_path() const { return library.empty() ? workspace / "library.kolib" : library; }
};

}  // namespace kernelopt::engine
