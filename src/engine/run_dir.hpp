/// \file
/// The run directory: what a finished run leaves for the user and for
/// `kernelopt.load`. Layout: problem.py, weights.pt, baseline/moduleN.py (as
/// Inductor wrote them), optimized/moduleN.py (byte-identical to the baseline
/// when nothing passed), candidates/, logs/, manifest.json, report.{json,md}.
/// A directory holding another problem's run, or anything else, is never
/// overwritten. One live run at a time: a run holds the directory's lock
/// (kernelopt-run.lock) while it lives. A run claims the directory for its
/// problem only once its input passed validation: until then another problem
/// may take it (a start that failed on a syntax error blocks nothing). Also
/// here: the workspace's store as a run opens it, and a run's report read back.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.hpp"
#include "util/lock_file.hpp"

namespace kernelopt::engine {

class RunDir {
 public:
  /// Looks at `dir` without writing anything: throws UserError when it is not a directory, holds
  /// something that is not a kernelopt run, a validated run of another problem, or a live run.
  static void check(const std::filesystem::path& dir, const std::string& problem_hash);
  /// Creates `dir`, or reuses it on check()'s terms, and takes its lock for the RunDir's lifetime;
  /// throws UserError as check() does, or when the directory cannot be written.
  static RunDir prepare(const std::filesystem::path& dir, const std::filesystem::path& problem,
                        const std::string& problem_hash);

  /// The run's input passed validation: the directory is this problem's from now on.
  void mark_validated();
  const std::filesystem::path& path() const { return dir_; }
  /// Writes optimized/module<index>.py; `changed` says whether it differs from the baseline.
  void write_optimized(int index, const std::string& source, bool changed);
  void write_manifest() const;
  /// The kept whole-model decision ({"kept", "settings"}), written into the manifest from now on
  /// (`--decisions` only: without it the manifest has no "decision" key).
  void set_decision(const nlohmann::json& decision) { decision_ = decision; }
  bool any_optimized() const;

 private:
  explicit RunDir(util::FileLock lock) : lock_(std::move(lock)) {}
  void write_marker() const;
  struct Entry { int index = 0; bool changed = false; };
  util::FileLock lock_;
  std::filesystem::path dir_;
  std::filesystem::path problem_;
  std::string problem_hash_;
  bool validated_ = false;
  std::vector<Entry> modules_;
  nlohmann::json decision_;
};

/// The workspace's store (WORKSPACE/store.db), the workspace created if absent. Throws UserError naming
/// the path when the workspace is not a directory or cannot be created or written, and when the store is
/// damaged or not a store (with how to recover: move it aside).
store::Store open_workspace_store(const std::filesystem::path& workspace);

/// A run's report.json. Throws UserError naming the file when it is not JSON (truncated) or not a report's
/// shape (an object with a "modules" array of objects holding "index", "module_ms" and "kernels").
nlohmann::json read_report(const std::filesystem::path& file);

}  // namespace kernelopt::engine
