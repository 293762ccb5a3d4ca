/// \file
/// How a run uses the kernel library (store/library.hpp): which entry a kernel
/// may try (exact fingerprint, same input kind), an entry's text under this
/// module's name for the kernel, and the entry a verified, kept winner becomes.
/// The fingerprint itself comes from the worker (python/kernelopt/library/
/// fingerprint.py); nothing here recomputes it.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "artifact/artifact.hpp"
#include "report/report.hpp"
#include "store/library.hpp"

namespace kernelopt::engine {

/// text with the identifier `from` replaced by `to` wherever it is a whole
/// word ([A-Za-z0-9_] on neither side). Mirrors fingerprint.rename_kernel.
std::string rename_kernel(const std::string& text, const std::string& from, const std::string& to);

/// What the run knows that goes into an entry besides the outcome.
struct EntryContext {
  std::string fingerprint, device, torch_version, triton_version, run_out_dir;
  std::string input_kind;     ///< the library's name for the run's kernels (InputKind::library_kind)
  std::int64_t run_id = 0;
  nlohmann::json end_to_end;  ///< the run's end-to-end verdict: {passed, speedup, ci_low, ci_high}
};

/// The library entry of a kernel whose winner passed all four gates and is in
/// the final module. Precondition: outcome.status == "improved".
store::LibraryEntry library_entry(const artifact::Kernel& kernel,
                                  const report::KernelOutcome& outcome, const EntryContext& ctx);

}  // namespace kernelopt::engine
