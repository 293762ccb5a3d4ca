/// \file
/// The optimize run: capture -> profile -> plan -> tune each targeted kernel
/// through the four gates -> stitch winners -> verify end to end -> write
/// outputs. The engine decides; the worker measures. If nothing passes every
/// gate, the run's output is Inductor's baseline, byte-identical.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/options.hpp"

namespace kernelopt::engine {

/// A failure the user can act on: printed as one line, exit status 2.
class UserError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The run stopped because the relay provider is waiting for answers; it is
/// resumable (`kernelopt resume`). Exit status 3.
class WaitingForAnswers : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Runs one optimization; returns the report JSON (also written to out_dir).
/// Throws UserError for bad input (missing file, no GPU, foreign out_dir, ...).
/// With options.resume, or when out_dir's latest run of the same problem did not
/// finish, the recorded run continues: verdicts stand, nothing verified is
/// re-measured, LLM exchanges replay from the store.
nlohmann::json optimize(const OptimizeOptions& options);

/// Everything `kernelopt resume` needs to continue the run as it was started (a run's options.json).
nlohmann::json saved_options(const OptimizeOptions& options);

/// A JSON file of a run directory (options.json, report.json), parsed; a UserError naming the file when it
/// cannot be read or is not valid JSON (truncated, say).
nlohmann::json read_json_file(const std::filesystem::path& file);

/// The options a run in run_dir was started with (its options.json), set to resume.
OptimizeOptions load_run_options(const std::filesystem::path& run_dir);

/// The repo's python/ directory, found next to the running binary or from
/// KERNELOPT_PYTHONPATH / KERNELOPT_ROOT; "" if not found.
std::string find_python_path();

}  // namespace kernelopt::engine
