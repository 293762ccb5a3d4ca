/// \file
/// The Markdown pages of the harnesses: bench.md (a bench.json of `kernelopt bench` or `bench-merge`:
/// the aggregate per level, then one row per problem) and adversarial.md (which gate caught each
/// adversarial case). Both read the JSON their harness wrote (src/bench/) and tolerate missing fields.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kernelopt::report {

/// bench.md of a bench.json ({"problems": [rows], "aggregate": {...}}, optionally "merged_from").
std::string bench_markdown(const nlohmann::json& bench);

/// adversarial.md of an adversarial.json ({"cases": [rows], "summary": {...}}).
std::string adversarial_markdown(const nlohmann::json& result);

}  // namespace kernelopt::report
