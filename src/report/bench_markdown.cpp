// bench.md and adversarial.md. See bench_markdown.hpp.
#include "report/bench_markdown.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/json_fields.hpp"

namespace kernelopt::report {

using namespace fields;

namespace {

std::string percent_or_dash(const json& fraction) {
  return fraction.is_number() ? fmt::format("{:.0f}%", 100 * fraction.get<double>()) : "-";
}

/// "80% → 93%": a fraction (of the measured bandwidth, of the roofline) before → after; "-" where unknown.
std::string percent_before_after(const json& before, const json& after) {
  if (!before.is_number() && !after.is_number()) return "-";
  return percent_or_dash(before) + " → " + percent_or_dash(after);
}

/// Seconds: "12", "3.4" below 10; "-" where unknown.
std::string seconds_or_dash(const json& seconds) {
  if (!seconds.is_number()) return "-";
  const double s = seconds.get<double>();
  return s < 10 ? fmt::format("{:.1f}", s) : fmt::format("{:.0f}", s);
}

/// A speedup: "1.234"; "-" where unknown.
std::string ratio_or_dash(const json& ratio) {
  return ratio.is_number() ? fmt::format("{:.3f}", ratio.get<double>()) : "-";
}

/// "1.134 / 1.250": the ceiling end to end / with the GPU alone; "1.134" where only the first is known.
std::string ceiling_cell(const json& ceiling, const json& gpu_ceiling) {
  return gpu_ceiling.is_number() ? ratio_or_dash(ceiling) + " / " + ratio_or_dash(gpu_ceiling) : ratio_or_dash(ceiling);
}

/// "Merged from:" and its inputs, for a bench-merge; "" otherwise.
std::string merged_from_lines(const json& bench) {
  std::string md;
  if (bench.contains("merged_from")) {
    md += "Merged from:\n";
    for (const auto& src : bench["merged_from"]) {
      md += fmt::format("- `{}` (shard {}, {} problems)", src["dir"].get<std::string>(), src["shard"].get<std::string>(),
                        src["problems"].get<int>());
      if (src.contains("replaced")) {  // a re-run merged over an earlier run (bench-merge --later-wins)
        std::vector<std::string> names;
        for (const auto& r : src["replaced"]) names.push_back(r["problem"].get<std::string>());
        md += fmt::format("; its rows replace the earlier ones of {}", fmt::join(names, ", "));
      }
      md += "\n";
    }
    md += "\n";
  }
  return md;
}

/// The overall sentences: counts, bandwidth and roofline shares, the ceiling, host time and cost (each where known).
std::string overall_lines(const json& o) {
  std::string md;
  md += fmt::format("{} problems; geomean speedup vs torch.compile {:.3f} (baseline kept = 1.0); improved {}; "
                    "incorrect {}; failed {}; no Triton kernel {}.\n\n",
                    o["problems"].get<int>(), o["geomean_speedup"].get<double>(), o["improved"].get<int>(),
                    o["incorrect"].get<int>(), o["failed"].get<int>(), o["no_triton_kernel"].get<int>());
  const json& roof = member(o, "roofline");
  if (number_or(roof, "problems", 0) > 0) {
    md += fmt::format("Share of the measured memory bandwidth the Triton kernels reach (their bytes / their time; "
                      "median of {} problems with Triton kernels): {}.\n\n",
                      roof["problems"].get<int>(),
                      percent_before_after(roof["median_fraction_before"], roof["median_fraction_after"]));
  }
  if (number_or(roof, "e2e_problems", 0) > 0) {
    md += fmt::format("Share of the problem's roofline reached end to end (its roofline time: min bytes / measured "
                      "bandwidth or FLOPs / fp32 datasheet peak, whichever is longer, over its time per model call; "
                      "median of {} problems, {} compute-bound): {}. FLOPs are counted by FlopCounterMode: matmuls, "
                      "convolutions, attention; pointwise ops are not counted.\n\n",
                      roof["e2e_problems"].get<int>(), roof.value("compute_bound", 0),
                      percent_before_after(roof["median_e2e_fraction_before"], roof["median_e2e_fraction_after"]));
  }
  const json& limits = member(o, "limits");
  if (number_or(limits, "ceiling_problems", 0) > 0) {
    md += fmt::format("Ceiling (upper bound): if every Triton kernel ran at its limit (its bytes at the measured "
                      "bandwidth) and the rest of the model call (vendor calls, the host's time to issue it) stayed as "
                      "torch.compile has it, the geomean could reach {:.3f} ({} problems; per problem in the "
                      "\"ceiling\" column). kernelopt rewrites only the Triton kernels.\n\n",
                      limits["ceiling_geomean"].get<double>(), limits["ceiling_problems"].get<int>());
  }
  if (number_or(limits, "host_problems", 0) > 0) {
    md += fmt::format("Host time per call that the L2 flush does not hide (end-to-end median minus the same call timed "
                      "with the host's time hidden), torch.compile: median {:.4f} ms ({} problems); both the baseline "
                      "and the optimized model pay it. Speedup of the GPU time alone: geomean {}; its ceiling "
                      "(every Triton kernel at its limit, no host time at all): {}.\n\n",
                      limits["median_host_ms"].get<double>(), limits["host_problems"].get<int>(),
                      ratio_or_dash(limits["gpu_geomean_speedup"]), ratio_or_dash(limits["gpu_ceiling_geomean"]));
  }
  const json& cost = member(o, "cost");
  if (number_or(cost, "problems", 0) > 0) {
    md += fmt::format("Cost: GPU {} s in total, median {} s per problem ({} problems); compile {} s in total; wall {} s "
                      "in total; candidates screened {}, gated {}.\n\n",
                      seconds_or_dash(cost["total_gpu_s"]), seconds_or_dash(cost["median_gpu_s"]),
                      cost["problems"].get<int>(), seconds_or_dash(cost["total_compile_s"]),
                      seconds_or_dash(cost["total_wall_s"]), cost.value("candidates_screened", 0),
                      cost.value("candidates_gated", 0));
  }
  return md;
}

/// The per-level table.
std::string level_table(const json& levels) {
  std::string md;
  md += "| level | problems | geomean | ceiling (end to end / GPU alone) | improved | fast_1.0 | fast_1.1 | fast_1.5 | fast_2.0 | "
        "median % of bandwidth before → after | median % of roofline end to end before → after | "
        "GPU s median / total |\n";
  md += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [level, s] : levels.items()) {
    const auto& f = s["fast_p"];
    const json& lr = member(s, "roofline");
    const json& lc = member(s, "cost");
    md += fmt::format("| {} | {} | {:.3f} | {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {} | {} | {} / {} |\n", level,
                      s["problems"].get<int>(), s["geomean_speedup"].get<double>(),
                      ceiling_cell(number_or_null(member(s, "limits"), "ceiling_geomean"),
                                   number_or_null(member(s, "limits"), "gpu_ceiling_geomean")),
                      s["improved"].get<int>(),
                      f["fast_1.0"].get<double>(), f["fast_1.1"].get<double>(), f["fast_1.5"].get<double>(),
                      f["fast_2.0"].get<double>(),
                      percent_before_after(number_or_null(lr, "median_fraction_before"),
                                             number_or_null(lr, "median_fraction_after")),
                      percent_before_after(number_or_null(lr, "median_e2e_fraction_before"),
                                             number_or_null(lr, "median_e2e_fraction_after")),
                      seconds_or_dash(number_or_null(lc, "median_gpu_s")),
                      seconds_or_dash(number_or_null(lc, "total_gpu_s")));
  }
  return md;
}

/// One problem's row of the problem table.
std::string problem_row(const json& r) {
  if (r["status"] == "failed") {
    return fmt::format("| {} | **failed** ({}) | 1.000 | | | | | | | | | | | | | {} | {} | {} | |\n",
                       r["problem"].get<std::string>(), r["error"].get<std::string>(),
                       seconds_or_dash(number_or_null(r, "wall_s")), seconds_or_dash(number_or_null(r, "gpu_s")),
                       seconds_or_dash(number_or_null(r, "compile_s")));
  }
  const json& rr = member(r, "roofline");
  const json min_bytes = number_or_null(rr, "min_bytes"), flops = number_or_null(rr, "model_flops");
  const json host = number_or_null(r, "host_ms");
  return fmt::format("| {} | {}{} | {:.3f} | {:.4f} | {:.4f} | {:.4f} | {} | {} | {} | {} | {} | {} | {} | {} | {} | "
                     "{} | {} | {} | {} / {} |\n",
                     r["problem"].get<std::string>(), r["status"] == "incorrect" ? "**INCORRECT** " : "",
                     r["status"].get<std::string>(), r["speedup"].get<double>(), r["baseline_ms"].get<double>(),
                     r["optimized_ms"].get<double>(), r["eager_ms"].get<double>(),
                     host.is_number() ? fmt::format("{:.4f}", host.get<double>()) : "-",
                     ratio_or_dash(number_or_null(r, "gpu_speedup")),
                     ceiling_cell(number_or_null(r, "ceiling"), number_or_null(r, "gpu_ceiling")),
                     r["triton_kernels"].get<int>(),
                     percent_before_after(number_or_null(rr, "fraction_before"), number_or_null(rr, "fraction_after")),
                     min_bytes.is_number() ? fmt::format("{:.1f}", min_bytes.get<double>() / 1e6) : "-",
                     flops.is_number() ? fmt::format("{:.3g}", flops.get<double>() / 1e9) : "-",
                     string_or_empty(rr, "bound").empty() ? "-" : string_or_empty(rr, "bound"),
                     percent_before_after(number_or_null(rr, "e2e_fraction_before"),
                                            number_or_null(rr, "e2e_fraction_after")),
                     seconds_or_dash(number_or_null(r, "wall_s")), seconds_or_dash(number_or_null(r, "gpu_s")),
                     seconds_or_dash(number_or_null(r, "compile_s")), r.value("candidates_screened", 0),
                     r.value("candidates_gated", 0));
}

/// The per-problem table.
std::string problem_table(const json& problems) {
  std::string md;
  md += "\n| problem | status | speedup | torch.compile ms | optimized ms | eager ms | host ms | GPU-alone speedup | "
        "ceiling (end to end / GPU alone) | Triton kernels | % of bandwidth before → after | min MB | GFLOP | bound | "
        "% of roofline end to end before → after | wall s | GPU s | compile s | screened / gated |\n";
  md += "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|\n";
  for (const auto& r : problems) md += problem_row(r);
  return md;
}

/// --decisions: per problem, torch.compile default, the best torch.compile mode, kernelopt without and with
/// decisions (the speedup column above is kernelopt's with decisions over torch.compile default), and the
/// geomeans; "" when no row searched decisions.
std::string decisions_table(const json& problems, const json& overall) {
  std::string md;
  const auto num = [](const json& d, const char* key, const char* format) {
    const json v = number_or_null(d, key);
    return v.is_number() ? fmt::format(fmt::runtime(format), v.get<double>()) : std::string("-");
  };
  for (const auto& r : problems) {
    if (!r.contains("decisions") || !r["decisions"].is_object()) continue;
    const json& d = r["decisions"];
    const json& without = member(d, "without_decisions");
    const std::string dropped = string_or_empty(d, "dropped");
    const std::string kept = string_or_empty(d, "kept") + (dropped.empty() ? "" : " (" + dropped + " dropped end to end)");
    md += fmt::format("| {} | {} | {} | {} ({}) | {} | {} | {} | {} | {} |\n", r["problem"].get<std::string>(),
                      kept, num(d, "compile_default_ms", "{:.4f}"),
                      num(d, "best_mode_ms", "{:.4f}"), string_or_empty(d, "best_mode"),
                      num(without, "speedup", "{:.3f}x"), num(r, "speedup", "{:.3f}x"), num(d, "with_decisions_ms", "{:.4f}"),
                      num(d, "speedup_vs_best_mode", "{:.3f}x"), num(d, "search_s", "{:.0f}"));
  }
  if (md.empty()) return "";
  std::string head = "\n## Whole-model decisions\n\n";
  const json& agg = member(overall, "decisions");
  if (agg.is_object()) {
    head += fmt::format("{} problems searched decisions: geomean over torch.compile default {} with decisions, {} "
                        "without; over the best torch.compile mode per problem {}; decision search median {} s "
                        "(decide requests).\n\n",
                        agg.value("problems", 0), num(overall, "geomean_speedup", "{:.3f}"),
                        num(agg, "geomean_without_decisions", "{:.3f}"), num(agg, "geomean_vs_best_mode", "{:.3f}"),
                        num(agg, "median_search_s", "{:.0f}"));
  }
  return head +
         "| problem | kept decision | torch.compile default ms | best torch.compile mode ms | kernelopt without "
         "decisions | kernelopt with decisions | with decisions ms | vs best mode | search s |\n"
         "|---|---|---:|---:|---:|---:|---:|---:|---:|\n" + md;
}

/// A table cell of free text: no pipe, no line break, at most `most` bytes (cut between UTF-8 characters).
std::string cell(std::string s, std::size_t most = 160) {
  std::replace(s.begin(), s.end(), '|', '/');
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() <= most) return s;
  std::size_t cut = most - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return s.substr(0, cut) + "...";
}

/// The memory-bound kernels left under the bar after optimization, with their reasons (the aggregate's
/// "under_roofline").
std::string under_roofline_table(const json& under) {
  const json& list = member(under, "list");
  if (!list.is_array() || list.empty()) return "";
  std::string md = fmt::format(
      "\n## Kernels under {:.0f}% of the bandwidth after optimization\n\nMemory-bound Triton kernels that take at "
      "least {:.0f}% of their problem's Triton time, with the reason each stays there.\n\n"
      "| problem | kernel | share of Triton time | % of bandwidth before → after | status | reason |\n"
      "|---|---|---:|---|---|---|\n",
      100 * number_or(under, "fraction_under", 0.0), 100 * number_or(under, "share_at_least", 0.0));
  for (const auto& k : list) {
    md += fmt::format("| {} | {} | {:.0f}% | {} | {} | {} |\n", string_or_empty(k, "problem"),
                      string_or_empty(k, "kernel"), 100 * number_or(k, "share", 0.0),
                      percent_before_after(number_or_null(k, "fraction_before"), number_or_null(k, "fraction_after")),
                      string_or_empty(k, "status"), cell(string_or_empty(k, "reason"), 400));
  }
  return md;
}

}  // namespace

std::string bench_markdown(const json& bench) {
  std::string md = "# kernelopt bench\n\n";
  md += merged_from_lines(bench);
  md += overall_lines(bench["aggregate"]["overall"]);
  md += level_table(bench["aggregate"]["levels"]);
  md += problem_table(bench["problems"]);
  md += decisions_table(bench["problems"], bench["aggregate"]["overall"]);
  md += under_roofline_table(member(bench["aggregate"]["overall"], "under_roofline"));
  return md;
}

std::string adversarial_markdown(const json& result) {
  const json& s = result["summary"];
  std::string md = "# kernelopt adversarial suite\n\n";
  md += fmt::format("{} cases on {}: {} tried ({} adversarial, {} caught by the expected gate; {} control(s), {} "
                    "passed), {} skipped, {} failed, {} host-code marker(s) found, {} engine runs.\n\n",
                    s["cases"].get<int>(), s["device"].get<std::string>(), s["tried"].get<int>(),
                    s["adversarial_tried"].get<int>(), s["caught_as_expected"].get<int>(), s["controls"].get<int>(),
                    s["controls_passed"].get<int>(), s["skipped"].get<int>(), s["failed"].get<int>(),
                    s["host_code_markers"].get<int>(), s["runs"].get<int>());
  md += "| case | target | expected gate | caught by | result | reason |\n|---|---|---|---|---|---|\n";
  for (const auto& r : result["cases"]) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", r["case"].get<std::string>(), r["target"].get<std::string>(),
                      r["expected"].get<std::string>(),
                      r["caught_by"].is_string() ? r["caught_by"].get<std::string>() : std::string("-"),
                      r["result"].get<std::string>(), cell(r["reason"].get<std::string>()));
  }
  return md;
}

}  // namespace kernelopt::report
