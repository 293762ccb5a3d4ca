/// \file
/// `kernelopt bench --adversarial DIR`: candidates written to be wrong in one
/// particular way (a boundary, NaN inputs, stale outputs, host code, a hang, a
/// fault, lower precision, a slowdown) run through the real engine, each
/// answered as the Coder's answer by a relay provider, and the table of which
/// gate caught each one against the gate meant to.
///
/// DIR holds cases.json (targets, groups and cases: name, target, expected,
/// why, optional group, gpu_only, marker), cases/<name>.txt (an answer in the
/// Coder's format) and the targets' standalone Triton files. The cases of one
/// target and group go to one `optimize-kernel` run as the candidates of one
/// Coder answer (at most kMaxCandidates per run); each case's verdicts are
/// read back from the workspace store through its notes ("[case NAME] ...").
///
/// Caught-by names: the verdict's gate ("static", "correctness", "model",
/// "performance"), except "compile" for gate 1's compile step, "timeout" and
/// "worker-crash" when the worker was killed or died on the candidate, and
/// "passed" when every gate passed (what a control case expects).
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/options.hpp"

namespace kernelopt::bench {

struct AdversarialOptions {
  std::filesystem::path dir;      ///< cases.json, cases/, targets/
  std::filesystem::path out_dir;  ///< runs/, relay/, workspace/, adversarial.json, adversarial.md
  std::string filter;             ///< only cases whose name contains this; "" = all
  engine::OptimizeOptions optimize;  ///< python, device, seeds, trials, timeout (a group's timeout_s wins)
};

/// What gate a recorded verdict stands for in the table (see the file comment).
std::string caught_by(const std::string& gate, const std::string& reason);

/// Runs the cases; writes adversarial.json and adversarial.md (report::adversarial_markdown); returns adversarial.json.
/// Throws UserError (one line) for a malformed manifest or a missing case or target file.
nlohmann::json run_adversarial(const AdversarialOptions& options);

}  // namespace kernelopt::bench
