// The run's side of the kernel library. See library_use.hpp.
#include "engine/library_use.hpp"

#include <cctype>

namespace kernelopt::engine {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string rename_kernel(const std::string& text, const std::string& from, const std::string& to) {
  if (from.empty() || from == to) return text;
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (true) {
    const size_t hit = text.find(from, pos);
    if (hit == std::string::npos) break;
    const bool left_ok = hit == 0 || !ident_char(text[hit - 1]);
    const bool right_ok = hit + from.size() >= text.size() || !ident_char(text[hit + from.size()]);
    out.append(text, pos, hit - pos);
    out += left_ok && right_ok ? to : from;
    pos = hit + from.size();
  }
  out.append(text, pos, std::string::npos);
  return out;
}

store::LibraryEntry library_entry(const artifact::Kernel& kernel,
                                  const report::KernelOutcome& outcome, const EntryContext& ctx) {
  store::LibraryEntry e;
  e.fingerprint = ctx.fingerprint;
  e.kernel_name = kernel.name;
  e.kind = kernel.kind;
  e.input_kind = ctx.input_kind;
  e.original_source_hash = kernel.source_hash;
  e.source = outcome.winner_source;
  e.code = outcome.winner_code;
  e.config = outcome.winner_config;
  e.grid = outcome.winner_grid;
  e.origin = outcome.winner_origin;
  e.speedup = outcome.kernel_speedup.speedup;
  e.ci_low = outcome.kernel_speedup.ci_low;
  e.ci_high = outcome.kernel_speedup.ci_high;
  e.device = ctx.device;
  e.torch_version = ctx.torch_version;
  e.triton_version = ctx.triton_version;
  e.run_id = ctx.run_id;
  e.run_out_dir = ctx.run_out_dir;
  e.evidence = {{"gates", {"static", "correctness", "model", "performance"}},
                {"kernel_speedup",
                 {{"speedup", e.speedup}, {"ci_low", e.ci_low}, {"ci_high", e.ci_high},
                  {"baseline_median_ms", outcome.kernel_speedup.baseline_median},
                  {"candidate_median_ms", outcome.kernel_speedup.candidate_median}}},
                {"end_to_end", ctx.end_to_end},
                {"why", outcome.why}};
  if (outcome.library_entry != 0) e.evidence["from_library_entry"] = outcome.library_entry;
  return e;
}

}  // namespace kernelopt::engine
