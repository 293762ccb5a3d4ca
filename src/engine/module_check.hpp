/// \file
/// After the kernel searches: a module's winners stitched in together (and
/// re-verified together when there are several), and the finished run's
/// end-to-end check as users load it.
#pragma once

#include <map>
#include <string>

#include "artifact/artifact.hpp"
#include "engine/context.hpp"
#include "engine/run_dir.hpp"
#include "report/report.hpp"

namespace kernelopt::engine {

/// The module with all winners stitched in, re-verified together (gate 3 and
/// the model-level timing); falls back to the single best winner, then to the
/// baseline. Records the decision in `report`.
std::string stitch_module(Context& ctx, const artifact::Module& module,
                          const std::map<std::string, std::string>& winners, report::ModuleReport& report);

/// The finished run loaded as users load it, on fresh seeds: outputs vs
/// float64 eager and vs torch.compile, and timing of eager, baseline, optimized.
report::EndToEnd final_check(Context& ctx, const RunDir& run_dir);

}  // namespace kernelopt::engine
