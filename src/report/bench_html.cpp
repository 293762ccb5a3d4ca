// bench.html. See bench_html.hpp.
#include "report/bench_html.hpp"

#include <algorithm>
#include <cmath>
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
      "<table id=\"level-table\"><thead><tr><th>level</th><th>problems</th><th>geomean</th><th>improved</th>"
      "<th>incorrect</th><th>failed</th><th>fast_1.0</th><th>fast_1.1</th><th>fast_1.5</th><th>fast_2.0</th>"
      "</tr></thead><tbody>\n";
  auto row = [&](const std::string& name, const json& l, bool total) {
    const json fp = l.is_object() && l.contains("fast_p") ? l["fast_p"] : json::object();
    s += fmt::format("<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                     total ? " class=\"total\"" : "", html_escape(name), fmt_num(field(l, "problems"), "{:g}"),
                     fmt_num(field(l, "geomean_speedup"), "{:.3f}"), fmt_num(field(l, "improved"), "{:g}"),
                     fmt_num(field(l, "incorrect"), "{:g}"), fmt_num(field(l, "failed"), "{:g}"));
    for (const char* k : {"fast_1.0", "fast_1.1", "fast_1.5", "fast_2.0"}) s += "<td>" + fmt_num(field(fp, k), "{:.2f}") + "</td>";
    s += "</tr>\n";
  };
  if (agg.is_object() && agg.contains("levels") && agg["levels"].is_object())
    for (const auto& [name, l] : agg["levels"].items()) row(name, l, false);
  if (agg.is_object() && agg.contains("overall")) row("overall", agg["overall"], true);
  return s + "</tbody></table>\n";
}

std::string problem_table(const json& rows) {
  std::string s =
      "<table id=\"problem-table\" class=\"sortable\" data-rows=\"{}\"><thead><tr><th>problem</th><th>status</th>"
      "<th>speedup</th><th>torch.compile ms</th><th>optimized ms</th><th>eager ms</th><th>Triton kernels</th>"
      "</tr></thead><tbody>\n";
  size_t n = 0;
  std::string body;
  if (rows.is_array()) {
    for (const auto& r : rows) {
      ++n;
      const std::string status = text(r, "status"), error = text(r, "error");
      std::string st = fmt::format("<span class=\"dot\" style=\"background:{}\"></span>{}", colour(status), html_escape(status));
      if (!error.empty()) st += "<div class=\"err\">" + html_escape(error) + "</div>";
      body += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                          html_escape(text(r, "problem")), st, fmt_num(field(r, "speedup"), "{:.3f}"),
                          fmt_num(field(r, "baseline_ms"), "{:.4f}"), fmt_num(field(r, "optimized_ms"), "{:.4f}"),
                          fmt_num(field(r, "eager_ms"), "{:.4f}"), fmt_num(field(r, "triton_kernels"), "{:g}"));
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
.err{color:#a33;font-size:12px;max-width:420px;white-space:pre-wrap;word-break:break-word;text-align:left}
.summary{color:#444}svg text{font-family:inherit}
</style>
)";

// Sorts the per-problem table on a header click; sets body[data-ready] last (tests check it).
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
  document.body.dataset.ready="1";
})();
</script>
)";

}  // namespace

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
  h += "<h2>Speedup per problem vs torch.compile</h2>\n" + legend(rows) + speedup_plot(rows);
  h += "<h2>Per level</h2>\n" + level_table(agg);
  h += "<h2>Per problem</h2>\n" + problem_table(rows);
  if (!text(bench, "method").empty()) h += "<p class=\"summary\"><small>" + html_escape(text(bench, "method")) + "</small></p>\n";
  h += kScript;
  h += "</body></html>\n";
  return h;
}

}  // namespace kernelopt::report
