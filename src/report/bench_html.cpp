// bench.html. See bench_html.hpp.
#include "report/bench_html.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <vector>

#include <fmt/format.h>

using nlohmann::json;

namespace kernelopt::report {

namespace {

std::optional<double> number(const json& j) {
  if (!j.is_number()) return std::nullopt;
  double v = j.get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<double> field(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return std::nullopt;
  return number(obj[key]);
}

std::string text(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return "";
  const auto& v = obj[key];
  return v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump();
}

std::string fmt_num(std::optional<double> v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : "";
}

const char* colour(const std::string& status) {
  if (status == "improved") return "#2e7d32";
  if (status == "baseline kept") return "#9e9e9e";
  if (status == "incorrect") return "#c62828";
  return "#ef6c00";  // failed (or unknown)
}

// At most ~max bytes: the head and the tail (which name the problem) around an ellipsis; never splits UTF-8.
std::string shorten(const std::string& t, size_t max) {
  if (t.size() <= max) return t;
  auto cont = [&](size_t i) { return i < t.size() && (static_cast<unsigned char>(t[i]) & 0xC0) == 0x80; };
  size_t head = max / 2 - 2, tail = t.size() - (max - head - 1);
  while (head > 0 && cont(head)) --head;
  while (cont(tail)) ++tail;
  return t.substr(0, head) + "\xe2\x80\xa6" + t.substr(tail);
}

struct Bar {
  std::string problem, status, error;
  double speedup;
  std::optional<double> lo, hi;
};

std::string speedup_plot(const json& rows) {
  std::vector<Bar> bars;
  if (rows.is_array()) {
    for (const auto& r : rows) {
      auto s = field(r, "speedup");
      if (!s || *s < 0) continue;
      Bar b{text(r, "problem"), text(r, "status"), text(r, "error"), *s, std::nullopt, std::nullopt};
      if (r.is_object() && r.contains("speedup_ci") && r["speedup_ci"].is_array() && r["speedup_ci"].size() == 2) {
        b.lo = number(r["speedup_ci"][0]);
        b.hi = number(r["speedup_ci"][1]);
        if (!b.lo || !b.hi || *b.lo < 0 || *b.hi < *b.lo) b.lo = b.hi = std::nullopt;
      }
      bars.push_back(std::move(b));
    }
  }
  std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) { return a.speedup > b.speedup; });
  double xmax = 2.0;
  for (const auto& b : bars) xmax = std::max({xmax, b.speedup, b.hi.value_or(0.0)});
  xmax = std::ceil(xmax * 1.05 * 4) / 4;  // a little room, on a quarter
  const double label_w = 300, plot_w = 560, right = 70, top = 24, row_h = 20, bar_h = 14;
  const double width = label_w + plot_w + right;
  const double height = top + row_h * std::max<size_t>(bars.size(), 1) + 30;
  auto x = [&](double v) { return label_w + plot_w * std::clamp(v, 0.0, xmax) / xmax; };

  std::string s = fmt::format(
      "<svg id=\"speedup-plot\" data-bars=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"speedup per problem vs torch.compile\">\n",
      bars.size(), width, height, width, height);
  // axis ticks and grid
  double step = xmax <= 3 ? 0.25 : xmax <= 6 ? 0.5 : xmax <= 15 ? 1.0 : std::ceil(xmax / 10);
  const double axis_y = top + row_h * std::max<size_t>(bars.size(), 1);
  for (double t = 0; t <= xmax + 1e-9; t += step) {
    s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#eee\"/>"
                     "<text x=\"{0:.1f}\" y=\"{3}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#555\">{4:g}</text>\n",
                     x(t), top - 4, axis_y, axis_y + 14, t);
  }
  s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333\">"
                   "speedup vs torch.compile (x)</text>\n", label_w + plot_w / 2, axis_y + 28);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y = top + row_h * i + (row_h - bar_h) / 2, cy = y + bar_h / 2;
    const std::string label = shorten(b.problem, 40);
    std::string tip = fmt::format("{}: {} {:.3f}x", b.problem, b.status, b.speedup);
    if (b.lo) tip += fmt::format(" (CI {:.3f}-{:.3f})", *b.lo, *b.hi);
    if (!b.error.empty()) tip += "\n" + b.error;
    s += fmt::format("<g class=\"bar-row\"><title>{}</title>"
                     "<text x=\"{}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>"
                     "<rect class=\"bar\" data-status=\"{}\" x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>",
                     html_escape(tip), label_w - 6, cy, html_escape(label), html_escape(b.status), label_w, y,
                     x(b.speedup) - label_w, bar_h, colour(b.status));
    double end = x(b.speedup);
    if (b.lo) {
      s += fmt::format("<path class=\"ci\" d=\"M{0:.1f} {2:.1f}H{1:.1f}M{0:.1f} {3:.1f}V{4:.1f}M{1:.1f} {3:.1f}V{4:.1f}\" "
                       "stroke=\"#222\" stroke-width=\"1.2\" fill=\"none\"/>",
                       x(*b.lo), x(*b.hi), cy, cy - 4, cy + 4);
      end = std::max(end, x(*b.hi));
    }
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" dominant-baseline=\"middle\" fill=\"#333\">{:.2f}</text></g>\n",
                     end + 4, cy, b.speedup);
  }
  s += fmt::format("<line id=\"ref-line\" data-x=\"1.0\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" "
                   "stroke=\"#000\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>"
                   "<text x=\"{0:.1f}\" y=\"{3}\" font-size=\"11\" text-anchor=\"middle\">1.0 = torch.compile</text>\n",
                   x(1.0), top - 4, axis_y, top - 8);
  s += "</svg>\n";
  return s;
}

// Tableau 10: a kernel's colour is its launch-order index in the problem, the same before and after.
constexpr const char* kKernelColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                          "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

const json& member(const json& obj, const char* key) {
  static const json null_json;
  return obj.is_object() && obj.contains(key) ? obj[key] : null_json;
}

std::string percent(double fraction) { return fmt::format("{:.0f}%", 100 * fraction); }

// "80% → 93%"; "" where neither is known.
std::string before_after(std::optional<double> before, std::optional<double> after) {
  if (!before && !after) return "";
  return (before ? percent(*before) : "-") + " \xe2\x86\x92 " + (after ? percent(*after) : "-");
}

// Seconds: "12", "3.4" below 10; "-" where unknown.
std::string seconds(std::optional<double> s) {
  if (!s) return "-";
  return *s < 10 ? fmt::format("{:.1f}", *s) : fmt::format("{:.0f}", *s);
}

// A tick step of about `ticks` ticks over [0, max], on 1, 2 or 5 times a power of ten.
double tick_step(double max, int ticks) {
  const double raw = max / ticks, p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10 * p;
}

struct RoofRow {
  std::string problem, status;
  double before;
  std::optional<double> after, bandwidth, bytes, before_ms, after_ms;
  size_t kernels;
};

// % of the measured bandwidth the problem's Triton kernels reach, before (grey) and after (status colour).
std::string roofline_plot(const json& rows) {
  std::vector<RoofRow> dots;
  if (rows.is_array()) {
    for (const auto& r : rows) {
      const json& roof = member(r, "roofline");
      auto before = field(roof, "fraction_before");
      if (!before || *before < 0) continue;
      auto after = field(roof, "fraction_after");
      if (after && *after < 0) after.reset();
      const json& ks = member(r, "kernels");
      dots.push_back({text(r, "problem"), text(r, "status"), *before, after, field(roof, "bandwidth_gbps"),
                      field(roof, "bytes"), field(roof, "before_ms"), field(roof, "after_ms"),
                      ks.is_array() ? ks.size() : 0});
    }
  }
  std::stable_sort(dots.begin(), dots.end(), [](const RoofRow& a, const RoofRow& b) { return a.before > b.before; });
  double xmax = 1.0;
  for (const auto& d : dots) xmax = std::max({xmax, d.before, d.after.value_or(0.0)});
  xmax = std::ceil(xmax * 1.05 * 10) / 10;
  const double label_w = 300, plot_w = 560, right = 90, top = 24, row_h = 20;
  const double width = label_w + plot_w + right;
  const double axis_y = top + row_h * std::max<size_t>(dots.size(), 1);
  auto x = [&](double v) { return label_w + plot_w * std::clamp(v, 0.0, xmax) / xmax; };

  std::string s = fmt::format(
      "<svg id=\"roofline-plot\" data-problems=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"share of the measured memory bandwidth per problem, before "
      "and after\">\n",
      dots.size(), width, axis_y + 30, width, axis_y + 30);
  const double step = tick_step(xmax, 8);
  for (double t = 0; t <= xmax + 1e-9; t += step) {
    s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#eee\"/>"
                     "<text x=\"{0:.1f}\" y=\"{3}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#555\">{4}</text>\n",
                     x(t), top - 4, axis_y, axis_y + 14, percent(t));
  }
  s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333\">"
                   "Triton kernels' bytes / time, % of the measured memory bandwidth</text>\n",
                   label_w + plot_w / 2, axis_y + 28);
  for (size_t i = 0; i < dots.size(); ++i) {
    const RoofRow& d = dots[i];
    const double cy = top + row_h * i + row_h / 2;
    std::string tip = fmt::format("{}: {} of the measured bandwidth before", d.problem, percent(d.before));
    if (d.after) tip += fmt::format(", {} after ({})", percent(*d.after), d.status);
    if (d.bandwidth) tip += fmt::format("\n{:.0f} GB/s measured", *d.bandwidth);
    if (d.bytes) tip += fmt::format("; {} Triton kernel(s) moving {:.1f} MB", d.kernels, *d.bytes / 1e6);
    if (d.before_ms && d.after_ms) tip += fmt::format(" in {:.4f} -> {:.4f} ms", *d.before_ms, *d.after_ms);
    s += fmt::format("<g class=\"roof-row\"><title>{}</title>"
                     "<text x=\"{}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>",
                     html_escape(tip), label_w - 6, cy, html_escape(shorten(d.problem, 40)));
    double end = x(d.before);
    if (d.after) {
      s += fmt::format("<line class=\"roof-change\" x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" "
                       "stroke=\"#bbb\" stroke-width=\"3\"/>",
                       x(d.before), x(*d.after), cy);
    }
    s += fmt::format("<circle class=\"roof-before\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"#fff\" stroke=\"#666\" "
                     "stroke-width=\"1.5\"/>", x(d.before), cy);
    if (d.after) {
      s += fmt::format("<circle class=\"roof-after\" data-status=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"{}\"/>",
                       html_escape(d.status), x(*d.after), cy, colour(d.status));
      end = std::max(end, x(*d.after));
    }
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" dominant-baseline=\"middle\" fill=\"#333\">{}</text></g>\n",
                     end + 8, cy, d.after ? percent(d.before) + " \xe2\x86\x92 " + percent(*d.after) : percent(d.before));
  }
  s += fmt::format("<line id=\"bandwidth-line\" data-x=\"1.0\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" "
                   "stroke=\"#000\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>"
                   "<text x=\"{0:.1f}\" y=\"{3}\" font-size=\"11\" text-anchor=\"middle\">100% = measured bandwidth</text>\n",
                   x(1.0), top - 4, axis_y, top - 8);
  return s + "</svg>\n";
}

struct KernelTime {
  std::string name, kind, bound, status;
  double before, after;
  std::optional<double> roof_before, roof_after;
};

struct TimeRow {
  std::string problem, status;
  std::vector<KernelTime> kernels;
  double before = 0, after = 0;  // sums, ms per model call
};

// One row of segments (a problem's before or after bar); widths are shares of the problem's before time.
std::string segments(const TimeRow& row, bool after, double x0, double y, double h, double scale) {
  std::string s;
  double x = x0;
  for (size_t k = 0; k < row.kernels.size(); ++k) {
    const KernelTime& kt = row.kernels[k];
    const double ms = after ? kt.after : kt.before;
    const double w = ms * scale;
    if (w <= 0) continue;
    const auto roof = after ? kt.roof_after : kt.roof_before;
    std::string tip = fmt::format("{} ({}, {}-bound, {})\n{}: {:.4f} ms ({} of the problem's Triton time before)",
                                  kt.name, kt.kind, kt.bound, kt.status, after ? "after" : "before", ms,
                                  percent(ms / row.before));
    if (roof) tip += fmt::format("; {} of bandwidth", percent(*roof));
    const char* fill = kKernelColours[k % std::size(kKernelColours)];
    s += fmt::format("<g class=\"seg\" data-phase=\"{}\" data-kernel=\"{}\"><title>{}</title>"
                     "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\" stroke=\"#fff\" "
                     "stroke-width=\"0.7\"/>",
                     after ? "after" : "before", k, html_escape(tip), x, y, w, h, fill);
    if (w >= 70) {  // room for the kernel's name
      std::string name = kt.name.rfind("triton_", 0) == 0 ? kt.name.substr(7) : kt.name;
      s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"9\" fill=\"#fff\" dominant-baseline=\"middle\">{}</text>",
                       x + 3, y + h / 2, html_escape(shorten(name, static_cast<size_t>(w / 5.5))));
    }
    s += "</g>";
    x += w;
  }
  return s;
}

// Per problem, the Triton kernels' time per model call before and after as stacked bars, before = 100%.
std::string time_plot(const json& rows) {
  std::vector<TimeRow> bars;
  if (rows.is_array()) {
    for (const auto& r : rows) {
      const json& ks = member(r, "kernels");
      if (!ks.is_array() || ks.empty()) continue;
      TimeRow row{text(r, "problem"), text(r, "status"), {}, 0, 0};
      for (const auto& k : ks) {
        const double before = field(k, "before_ms").value_or(0.0);
        const double after = field(k, "after_ms").value_or(before);
        if (before < 0 || after < 0) continue;
        row.kernels.push_back({text(k, "name"), text(k, "kind"), text(k, "bound"), text(k, "status"), before, after,
                               field(k, "roofline_before"), field(k, "roofline_after")});
        row.before += before;
        row.after += after;
      }
      if (row.before > 0) bars.push_back(std::move(row));
    }
  }
  // the largest cut in Triton time first
  std::stable_sort(bars.begin(), bars.end(),
                   [](const TimeRow& a, const TimeRow& b) { return a.after / a.before < b.after / b.before; });
  double xmax = 1.0;
  for (const auto& b : bars) xmax = std::max(xmax, b.after / b.before);
  const double label_w = 300, plot_w = 560, right = 130, top = 10, row_h = 32, bar_h = 12;
  const double width = label_w + plot_w + right;
  const double axis_y = top + row_h * std::max<size_t>(bars.size(), 1);
  std::string s = fmt::format(
      "<svg id=\"time-plot\" data-problems=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"Triton kernel time per problem, before and after\">\n",
      bars.size(), width, axis_y + 30, width, axis_y + 30);
  const double step = xmax <= 1.5 ? 0.25 : tick_step(xmax, 6);
  for (double t = 0; t <= xmax + 1e-9; t += step) {
    const double tx = label_w + plot_w * t / xmax;
    s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\"/>"
                     "<text x=\"{0:.1f}\" y=\"{4}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#555\">{5}</text>\n",
                     tx, top, axis_y, t == 1.0 ? "#999" : "#eee", axis_y + 14, percent(t));
  }
  s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333\">"
                   "Triton kernels' time per model call, % of torch.compile's</text>\n",
                   label_w + plot_w / 2, axis_y + 28);
  for (size_t i = 0; i < bars.size(); ++i) {
    const TimeRow& b = bars[i];
    const double y = top + row_h * i + 3, scale = plot_w / xmax / b.before;
    std::string tip = fmt::format("{}: {} Triton kernel(s), {:.4f} -> {:.4f} ms per model call ({})", b.problem,
                                  b.kernels.size(), b.before, b.after, b.status);
    for (const auto& k : b.kernels) tip += fmt::format("\n{}: {:.4f} -> {:.4f} ms", k.name, k.before, k.after);
    s += fmt::format("<g class=\"time-row\"><title>{}</title>"
                     "<text x=\"{}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>"
                     "<text x=\"{}\" y=\"{:.1f}\" font-size=\"9\" text-anchor=\"end\" dominant-baseline=\"middle\" "
                     "fill=\"#777\">before</text>"
                     "<text x=\"{}\" y=\"{:.1f}\" font-size=\"9\" text-anchor=\"end\" dominant-baseline=\"middle\" "
                     "fill=\"#777\">after</text></g>",
                     html_escape(tip), label_w - 42, y + bar_h, html_escape(shorten(b.problem, 34)), label_w - 4,
                     y + bar_h / 2, label_w - 4, y + bar_h + 2 + bar_h / 2);
    s += segments(b, false, label_w, y, bar_h, scale);
    s += segments(b, true, label_w, y + bar_h + 2, bar_h, scale);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" dominant-baseline=\"middle\" fill=\"#333\">"
                     "{:.4f} \xe2\x86\x92 {:.4f} ms</text>\n",
                     label_w + plot_w * std::max(1.0, b.after / b.before) / xmax + 6, y + bar_h + 1, b.before, b.after);
  }
  return s + "</svg>\n";
}

std::string legend(const json& rows) {
  std::string s = "<p class=\"legend\">";
  for (const char* st : {"improved", "baseline kept", "incorrect", "failed"}) {
    int n = 0;
    if (rows.is_array())
      for (const auto& r : rows) n += text(r, "status") == st;
    s += fmt::format("<span><i style=\"background:{}\"></i>{} ({})</span> ", colour(st), st, n);
  }
  return s + "</p>\n";
}

std::string level_table(const json& agg) {
  std::string s =
      "<table id=\"level-table\"><thead><tr><th>level</th><th>problems</th><th>geomean</th><th>ceiling</th><th>improved</th>"
      "<th>incorrect</th><th>failed</th><th>fast_1.0</th><th>fast_1.1</th><th>fast_1.5</th><th>fast_2.0</th>"
      "<th>median % of bandwidth before → after</th><th>median % of roofline end to end before → after</th>"
      "<th>GPU s median / total</th></tr></thead><tbody>\n";
  auto row = [&](const std::string& name, const json& l, bool total) {
    const json fp = l.is_object() && l.contains("fast_p") ? l["fast_p"] : json::object();
    s += fmt::format("<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                     total ? " class=\"total\"" : "", html_escape(name), fmt_num(field(l, "problems"), "{:g}"),
                     fmt_num(field(l, "geomean_speedup"), "{:.3f}"),
                     fmt_num(field(member(l, "limits"), "ceiling_geomean"), "{:.3f}"), fmt_num(field(l, "improved"), "{:g}"),
                     fmt_num(field(l, "incorrect"), "{:g}"), fmt_num(field(l, "failed"), "{:g}"));
    for (const char* k : {"fast_1.0", "fast_1.1", "fast_1.5", "fast_2.0"}) s += "<td>" + fmt_num(field(fp, k), "{:.2f}") + "</td>";
    const json& roof = member(l, "roofline");
    const json& cost = member(l, "cost");
    s += "<td>" + before_after(field(roof, "median_fraction_before"), field(roof, "median_fraction_after")) + "</td>";
    s += "<td>" + before_after(field(roof, "median_e2e_fraction_before"), field(roof, "median_e2e_fraction_after")) +
         "</td>";
    const auto gpu_median = field(cost, "median_gpu_s"), gpu_total = field(cost, "total_gpu_s");
    s += "<td>" + (gpu_median || gpu_total ? seconds(gpu_median) + " / " + seconds(gpu_total) : std::string()) +
         "</td></tr>\n";
  };
  if (agg.is_object() && agg.contains("levels") && agg["levels"].is_object())
    for (const auto& [name, l] : agg["levels"].items()) row(name, l, false);
  if (agg.is_object() && agg.contains("overall")) row("overall", agg["overall"], true);
  return s + "</tbody></table>\n";
}

std::string problem_table(const json& rows) {
  std::string s =
      "<table id=\"problem-table\" class=\"sortable\" data-rows=\"{}\"><thead><tr><th>problem</th><th>status</th>"
      "<th>speedup</th><th>torch.compile ms</th><th>optimized ms</th><th>eager ms</th><th>host ms</th>"
      "<th>GPU-alone speedup</th><th>ceiling</th><th>Triton kernels</th>"
      "<th>% of bandwidth before → after</th><th>min MB</th><th>GFLOP</th><th>bound</th>"
      "<th>% of roofline end to end before → after</th><th>wall s</th><th>GPU s</th><th>compile s</th>"
      "<th>screened / gated</th></tr></thead><tbody>\n";
  size_t n = 0;
  std::string body;
  if (rows.is_array()) {
    for (const auto& r : rows) {
      ++n;
      const std::string status = text(r, "status"), error = text(r, "error");
      std::string st = fmt::format("<span class=\"dot\" style=\"background:{}\"></span>{}", colour(status), html_escape(status));
      if (!error.empty()) st += "<div class=\"err\">" + html_escape(error) + "</div>";
      const json& roof = member(r, "roofline");
      const auto min_bytes = field(roof, "min_bytes"), flops = field(roof, "model_flops");
      const auto screened = field(r, "candidates_screened"), gated = field(r, "candidates_gated");
      body += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                          "<td>{}</td><td>{}</td><td>{}</td>"
                          "<td>{}</td><td>{}</td><td>{}</td><td class=\"e2e-roofline\">{}</td><td>{}</td>"
                          "<td class=\"gpu-s\">{}</td><td>{}</td><td>{}</td></tr>\n",
                          html_escape(text(r, "problem")), st, fmt_num(field(r, "speedup"), "{:.3f}"),
                          fmt_num(field(r, "baseline_ms"), "{:.4f}"), fmt_num(field(r, "optimized_ms"), "{:.4f}"),
                          fmt_num(field(r, "eager_ms"), "{:.4f}"), fmt_num(field(r, "host_ms"), "{:.4f}"),
                          fmt_num(field(r, "gpu_speedup"), "{:.3f}"), fmt_num(field(r, "ceiling"), "{:.3f}"),
                          fmt_num(field(r, "triton_kernels"), "{:g}"),
                          before_after(field(roof, "fraction_before"), field(roof, "fraction_after")),
                          min_bytes ? fmt::format("{:.1f}", *min_bytes / 1e6) : "",
                          flops ? fmt::format("{:.3g}", *flops / 1e9) : "", html_escape(text(roof, "bound")),
                          before_after(field(roof, "e2e_fraction_before"), field(roof, "e2e_fraction_after")),
                          seconds(field(r, "wall_s")), seconds(field(r, "gpu_s")), seconds(field(r, "compile_s")),
                          screened || gated ? fmt_num(screened, "{:g}") + " / " + fmt_num(gated, "{:g}") : "");
    }
  }
  return fmt::format(fmt::runtime(s), n) + body + "</tbody></table>\n";
}

constexpr const char* kStyle = R"(<style>
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px;margin:0 0 6px}h2{font-size:17px;margin:24px 0 8px}
table{border-collapse:collapse;font-size:13px}th,td{border-bottom:1px solid #ddd;padding:3px 10px;text-align:right}
th:first-child,td:first-child,#problem-table td:nth-child(2),#problem-table th:nth-child(2){text-align:left}
th{background:#f4f4f4;cursor:default}.sortable th{cursor:pointer}tr.total td{font-weight:600;border-top:2px solid #999}
.legend span{margin-right:14px}.legend i,.dot{display:inline-block;width:11px;height:11px;margin-right:5px;vertical-align:-1px}
.legend i.ring{border:1.5px solid #666;border-radius:50%;width:8px;height:8px;background:#fff}
.err{color:#a33;font-size:12px;max-width:420px;white-space:pre-wrap;word-break:break-word;text-align:left}
.summary{color:#444}svg text{font-family:inherit}
</style>
)";

// Sorts the per-problem table on a header click; counts each plot's shapes the browser laid out with a
// size (svg[data-drawn]); sets body[data-ready] last (tests check both).
constexpr const char* kScript = R"(<script>
(function(){
  var t=document.getElementById("problem-table");
  if(t){t.querySelectorAll("th").forEach(function(th,i){
    var asc=false;
    th.addEventListener("click",function(){
      var tb=t.tBodies[0],rs=Array.prototype.slice.call(tb.rows);asc=!asc;
      rs.sort(function(a,b){
        var x=a.cells[i].textContent,y=b.cells[i].textContent,nx=parseFloat(x),ny=parseFloat(y);
        var c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:x.localeCompare(y);return asc?c:-c;});
      rs.forEach(function(r){tb.appendChild(r);});
    });});}
  document.querySelectorAll("svg[id$='-plot']").forEach(function(svg){
    var n=0;svg.querySelectorAll("rect,circle").forEach(function(e){var b=e.getBoundingClientRect();if(b.width>0&&b.height>0)n++;});
    svg.dataset.drawn=String(n);});
  document.body.dataset.ready="1";
})();
</script>
)";

}  // namespace

std::string html_escape(const std::string& in);

/// --decisions: per problem, the kept decision, torch.compile default, the best torch.compile mode, kernelopt
/// without and with decisions, over the best mode, the search's seconds; "" when no row searched decisions.
std::string decisions_table(const json& rows) {
  std::string body;
  for (const auto& r : rows) {
    if (!r.is_object() || !r.contains("decisions") || !r["decisions"].is_object()) continue;
    const json& d = r["decisions"];
    const json& without = d.contains("without_decisions") ? d["without_decisions"] : json();
    body += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{} ({})</td><td>{}</td><td>{}</td><td>{}</td>"
                        "<td>{}</td><td>{}</td></tr>\n",
                        html_escape(text(r, "problem")), html_escape(text(d, "kept")),
                        fmt_num(field(d, "compile_default_ms"), "{:.4f}"), fmt_num(field(d, "best_mode_ms"), "{:.4f}"),
                        html_escape(text(d, "best_mode")), fmt_num(field(without, "speedup"), "{:.3f}x"),
                        fmt_num(field(r, "speedup"), "{:.3f}x"), fmt_num(field(d, "with_decisions_ms"), "{:.4f}"),
                        fmt_num(field(d, "speedup_vs_best_mode"), "{:.3f}x"), fmt_num(field(d, "search_s"), "{:.0f}"));
  }
  if (body.empty()) return "";
  return "<h2>Whole-model decisions</h2>\n<table id=\"decisions-table\"><thead><tr><th>problem</th><th>kept "
         "decision</th><th>torch.compile default ms</th><th>best torch.compile mode ms</th><th>kernelopt without "
         "decisions</th><th>kernelopt with decisions</th><th>with decisions ms</th><th>vs best mode</th><th>search "
         "s</th></tr></thead><tbody>\n" + body + "</tbody></table>\n";
}

/// The memory-bound kernels left under the bar after optimization, with their reasons (the aggregate's
/// "under_roofline"); "" when there are none.
std::string under_roofline_table(const json& under) {
  const json& list = member(under, "list");
  if (!list.is_array() || list.empty()) return "";
  std::string body;
  for (const auto& k : list) {
    body += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                        html_escape(text(k, "problem")), html_escape(text(k, "kernel")),
                        percent(field(k, "share").value_or(0)),
                        before_after(field(k, "fraction_before"), field(k, "fraction_after")),
                        html_escape(text(k, "status")), html_escape(text(k, "reason")));
  }
  return fmt::format("<h2>Kernels under {:.0f}% of the bandwidth after optimization</h2>\n<p class=\"legend\">"
                     "Memory-bound Triton kernels that take at least {:.0f}% of their problem's Triton time, with the "
                     "reason each stays there.</p>\n<table id=\"under-roofline-table\"><thead><tr><th>problem</th>"
                     "<th>kernel</th><th>share of Triton time</th><th>% of bandwidth before → after</th><th>status"
                     "</th><th>reason</th></tr></thead><tbody>\n",
                     100 * field(under, "fraction_under").value_or(0), 100 * field(under, "share_at_least").value_or(0)) +
         body + "</tbody></table>\n";
}

std::string html_escape(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string bench_html(const json& bench) {
  const json empty = json::object();
  const json& rows = bench.is_object() && bench.contains("problems") ? bench["problems"] : empty;
  const json& agg = bench.is_object() && bench.contains("aggregate") ? bench["aggregate"] : empty;
  const json& overall = agg.is_object() && agg.contains("overall") ? agg["overall"] : empty;

  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<meta name=\"viewport\" content=\"width=device-width\"><title>kernelopt bench</title>\n";
  h += kStyle;
  h += "</head><body>\n<h1>kernelopt bench</h1>\n";
  h += fmt::format("<p class=\"summary\">{} problems; geomean speedup vs torch.compile <b>{}</b> (baseline kept = 1.0); "
                   "improved {}; incorrect {}; failed {}; no Triton kernel {}.{}</p>\n",
                   fmt_num(field(overall, "problems"), "{:g}"), fmt_num(field(overall, "geomean_speedup"), "{:.3f}"),
                   fmt_num(field(overall, "improved"), "{:g}"), fmt_num(field(overall, "incorrect"), "{:g}"),
                   fmt_num(field(overall, "failed"), "{:g}"), fmt_num(field(overall, "no_triton_kernel"), "{:g}"),
                   text(bench, "shard").empty() ? "" : " Shard " + html_escape(text(bench, "shard")) + ".");
  const json& roof = member(overall, "roofline");
  if (field(roof, "problems").value_or(0) > 0) {
    h += fmt::format("<p class=\"summary\" id=\"roofline-summary\">Triton kernels reach a median <b>{}</b> of the "
                     "measured memory bandwidth ({} problems with Triton kernels).</p>\n",
                     before_after(field(roof, "median_fraction_before"), field(roof, "median_fraction_after")),
                     fmt_num(field(roof, "problems"), "{:g}"));
  }
  if (field(roof, "e2e_problems").value_or(0) > 0) {
    h += fmt::format("<p class=\"summary\" id=\"e2e-roofline-summary\">End to end, problems reach a median <b>{}</b> of "
                     "their roofline ({} problems, {} compute-bound).</p>\n",
                     before_after(field(roof, "median_e2e_fraction_before"), field(roof, "median_e2e_fraction_after")),
                     fmt_num(field(roof, "e2e_problems"), "{:g}"), fmt_num(field(roof, "compute_bound"), "{:g}"));
  }
  const json& cost = member(overall, "cost");
  if (field(cost, "problems").value_or(0) > 0) {
    h += fmt::format("<p class=\"summary\" id=\"cost-summary\">Cost: GPU {} s in total, median {} s per problem; "
                     "compile {} s; wall {} s; candidates screened {}, gated {}.</p>\n",
                     seconds(field(cost, "total_gpu_s")), seconds(field(cost, "median_gpu_s")),
                     seconds(field(cost, "total_compile_s")), seconds(field(cost, "total_wall_s")),
                     fmt_num(field(cost, "candidates_screened"), "{:g}"), fmt_num(field(cost, "candidates_gated"), "{:g}"));
  }
  h += "<h2>Speedup per problem vs torch.compile</h2>\n" + legend(rows) + speedup_plot(rows);
  h += "<h2>Share of the memory bandwidth reached, before and after</h2>\n"
       "<p class=\"legend\">Per problem with Triton kernels: their bytes (the distinct tensor storages their launches "
       "take; vendor calls not counted) over their time per model call, as a share of the device's measured copy "
       "bandwidth. <span><i class=\"ring\"></i>before (torch.compile)</span> <span><i style=\"background:" +
       std::string(colour("improved")) + "\"></i>after, improved</span> <span><i style=\"background:" +
       colour("baseline kept") + "\"></i>after, baseline kept</span></p>\n" + roofline_plot(rows);
  h += "<h2>Triton kernel time, before and after</h2>\n"
       "<p class=\"legend\">Per problem with Triton kernels: each kernel's time per model call, torch.compile's "
       "total = 100%. One colour per kernel in launch order, the same before and after; hover a segment for the "
       "kernel's name and numbers. Vendor calls (cuBLAS, cuDNN) are not drawn.</p>\n" + time_plot(rows);
  h += "<h2>Per level</h2>\n" + level_table(agg);
  h += "<h2>Per problem</h2>\n"
       "<p class=\"legend\" id=\"e2e-roofline-note\">End to end against the problem's roofline: min MB = the model's "
       "inputs, parameters, buffers and outputs, each storage once; GFLOP = FLOPs of one eager forward counted by "
       "torch's FlopCounterMode (matmuls, convolutions, attention; pointwise ops are not counted); bound = memory or "
       "compute, their intensity against the ridge of the measured bandwidth and the datasheet fp32 peak; % = the "
       "roofline time over the model call's time, torch.compile → optimized. GPU s = the run's profiling, "
       "correctness checks and timing; compile s = torch.compile and candidate compilation.</p>\n" +
       problem_table(rows);
  h += decisions_table(rows);
  h += under_roofline_table(member(overall, "under_roofline"));
  if (!text(bench, "method").empty()) h += "<p class=\"summary\"><small>" + html_escape(text(bench, "method")) + "</small></p>\n";
  h += kScript;
  h += "</body></html>\n";
  return h;
}

}  // namespace kernelopt::report
