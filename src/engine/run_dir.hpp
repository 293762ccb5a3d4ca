/// \file
/// The run directory: what a finished run leaves for the user and for
/// `kernelopt.load`. Layout: problem.py, weights.pt, baseline/moduleN.py (as
/// Inductor wrote them), optimized/moduleN.py (byte-identical to the baseline
/// when nothing passed), candidates/, logs/, manifest.json, report.{json,md}.
/// A directory holding another problem's run, or anything else, is never
/// overwritten.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kernelopt::engine {

class RunDir {
 public:
  /// Creates `dir`, or reuses it if it holds a run of the same problem (same
  /// hash); throws UserError if it holds anything else.
  static RunDir prepare(const std::filesystem::path& dir, const std::filesystem::path& problem,
                        const std::string& problem_hash);

  const std::filesystem::path& path() const { return dir_; }
  /// Writes optimized/module<index>.py; `changed` says whether it differs from the baseline.
  void write_optimized(int index, const std::string& source, bool changed);
  void write_manifest() const;
  bool any_optimized() const;

 private:
  struct Entry { int index = 0; bool changed = false; };
  std::filesystem::path dir_;
  std::string problem_hash_;
  std::vector<Entry> modules_;
};

}  // namespace kernelopt::engine
