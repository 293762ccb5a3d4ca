/// \file
/// bench.html: the bench.json of `kernelopt bench` as one self-contained page
/// (inline SVG and a few lines of inline JS; no external resources): speedup
/// per problem vs torch.compile as sorted bars with a 1.0 line and CI
/// whiskers; per problem, the share of the measured memory bandwidth its
/// Triton kernels reach before and after (dumbbells, a 100% line); per
/// problem, each Triton kernel's time before and after (stacked bars, before =
/// 100%, one colour per kernel); the per-level and per-problem tables (these
/// with the problem end to end against its roofline and the run's cost).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kernelopt::report {

/// HTML-escapes user text (& < > " ').
std::string html_escape(const std::string& text);

/// The page for `bench` ({"problems": [rows], "aggregate": {...}} as src/bench/ (rows.cpp, aggregate.cpp)
/// builds it). Tolerates missing or null fields (a row is drawn from what it has).
/// Element ids: "speedup-plot" (svg, data-bars = bars drawn), "ref-line" (the 1.0 line),
/// "roofline-plot" (svg, data-problems = rows drawn: circles "roof-before", "roof-after"),
/// "bandwidth-line" (the 100% line), "time-plot" (svg, data-problems = rows drawn: groups "seg"
/// with data-phase before|after and data-kernel = launch-order index), "level-table",
/// "problem-table" (data-rows; per row cells "e2e-roofline" (% of the problem's roofline before → after)
/// and "gpu-s"), "e2e-roofline-summary" and "cost-summary" (overall, when any row has them),
/// "e2e-roofline-note" (what the end-to-end columns count); the script sets each plot's data-drawn (its rects and circles laid
/// out with a size) and body[data-ready="1"] last. Problem and kernel
/// names appear only escaped, in text and <title>, never in attributes.
std::string bench_html(const nlohmann::json& bench);

}  // namespace kernelopt::report
