/// \file
/// bench.html: the bench.json of `kernelopt bench` as one self-contained page
/// (inline SVG and a few lines of inline JS; no external resources): speedup
/// per problem vs torch.compile as sorted bars with a 1.0 line and CI
/// whiskers, the per-level summary table and the per-problem table.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kernelopt::report {

/// HTML-escapes user text (& < > " ').
std::string html_escape(const std::string& text);

/// The page for `bench` ({"problems": [rows], "aggregate": {...}} as engine/bench.cpp
/// builds it). Tolerates missing or null fields (a row is drawn from what it has).
/// Element ids: "speedup-plot" (svg, data-bars = bars drawn), "ref-line" (the 1.0 line),
/// "level-table", "problem-table" (data-rows); the script sets body[data-ready="1"] last.
std::string bench_html(const nlohmann::json& bench);

}  // namespace kernelopt::report
