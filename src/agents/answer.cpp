// Fenced-block extraction and the strict readers of each agent's answer.
#include "agents/answer.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "util/text.hpp"

namespace kernelopt::agents {
namespace {

using nlohmann::json;

// Block sizes, warps and stages beyond this are nonsense (and would overflow ints downstream).
constexpr long long kMaxLaunchValue = 1LL << 24;
constexpr std::size_t kMaxAnswerJsonBytes = 256 * 1024;
constexpr std::size_t kMaxGridExprChars = 200;

using util::trim;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// s cut to at most max bytes without splitting a UTF-8 sequence.
std::string utf8_cut(std::string s, std::size_t max) {
  if (s.size() <= max) return s;
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  return s;
}

// Whitespace runs collapsed to one space, trimmed, at most max bytes ("..." marks a cut).
std::string one_line(std::string_view s, std::size_t max) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  if (out.size() > max) out = utf8_cut(std::move(out), max > 3 ? max - 3 : max) + "...";
  return out;
}

enum class BlockKind { python, json, other };

BlockKind kind_of(const FencedBlock& b) {
  if (b.info == "python" || b.info == "py" || b.info == "python3" || b.info == "triton") return BlockKind::python;
  if (b.info == "json") return BlockKind::json;
  if (!b.info.empty()) return BlockKind::other;
  const std::string t = trim(b.text);
  return !t.empty() && (t[0] == '{' || t[0] == '[') ? BlockKind::json : BlockKind::python;
}

const char* kind_name(BlockKind k) { return k == BlockKind::python ? "python" : "json"; }

// "the json block of candidate 2 (line 14)" style prefix.
std::string where(int candidate, const FencedBlock& b, BlockKind k) {
  return fmt::format("candidate {}: the {} block at line {}", candidate, kind_name(k), b.line);
}

void require_closed(int candidate, const FencedBlock& b, BlockKind k) {
  if (!b.closed)
    throw AnswerError(fmt::format("{} is never closed (the answer looks truncated)", where(candidate, b, k)));
}

json parse_json_text(const std::string& text, const std::string& what) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw AnswerError(fmt::format("{} does not parse as JSON: {}", what, one_line(e.what(), 300)));
  }
}

bool power_of_two(long long v) { return v > 0 && (v & (v - 1)) == 0; }

// Validates one launch parameter set (meta or a tuner config) in place.
void check_launch_params(const json& obj, const std::vector<std::string>& constexprs, const std::string& what,
                         bool require_all) {
  if (!obj.is_object()) throw AnswerError(fmt::format("{} is not a JSON object", what));
  const std::set<std::string> allowed_blocks(constexprs.begin(), constexprs.end());
  for (const auto& [key, value] : obj.items()) {
    if (!allowed_blocks.count(key) && key != "num_warps" && key != "num_stages") {
      std::string known;
      for (const auto& c : constexprs) known += c + ", ";
      throw AnswerError(fmt::format("{}: unknown key '{}' (allowed: {}num_warps, num_stages)", what, key, known));
    }
    if (!value.is_number_integer() || value.get<long long>() <= 0 ||
        (value.is_number_unsigned() && value.get<unsigned long long>() > static_cast<unsigned long long>(kMaxLaunchValue)) ||
        value.get<long long>() > kMaxLaunchValue)
      throw AnswerError(fmt::format("{}: {} must be a positive integer (at most {}), got {}", what, key,
                                    kMaxLaunchValue, one_line(value.dump(), 40)));
    if (key == "num_warps" && (!power_of_two(value.get<long long>()) || value.get<long long>() > 32))
      throw AnswerError(fmt::format("{}: num_warps must be a power of two no larger than 32, got {}", what,
                                    value.get<long long>()));
  }
  if (require_all) {
    for (const auto& c : constexprs) {
      if (!obj.contains(c)) throw AnswerError(fmt::format("{}: missing {}", what, c));
    }
    for (const char* k : {"num_warps", "num_stages"}) {
      if (!obj.contains(k)) throw AnswerError(fmt::format("{}: missing {}", what, k));
    }
  }
}

KernelAnswer read_candidate(int n, const FencedBlock& py, const FencedBlock& js,
                            const std::vector<std::string>& constexprs) {
  require_closed(n, py, BlockKind::python);
  require_closed(n, js, BlockKind::json);
  KernelAnswer a;
  if (trim(py.text).empty()) throw AnswerError(fmt::format("{} is empty", where(n, py, BlockKind::python)));
  if (py.text.size() > kMaxCodeBytes)
    throw AnswerError(fmt::format("{} holds {} bytes, more than the {} allowed", where(n, py, BlockKind::python),
                                  py.text.size(), kMaxCodeBytes));
  a.code = py.text;
  if (js.text.size() > kMaxJsonBytes)
    throw AnswerError(fmt::format("{} holds {} bytes, more than the {} allowed", where(n, js, BlockKind::json),
                                  js.text.size(), kMaxJsonBytes));
  const std::string what = where(n, js, BlockKind::json);
  const json j = parse_json_text(js.text, what);
  if (!j.is_object())
    throw AnswerError(fmt::format("{} is not an object {{\"meta\": ..., \"grid\": ..., \"notes\": ...}}", what));
  for (const auto& [key, value] : j.items()) {
    if (key != "meta" && key != "grid" && key != "notes")
      throw AnswerError(fmt::format("{}: unknown key '{}' (expected meta, grid, notes)", what, key));
  }
  if (!j.contains("meta")) throw AnswerError(fmt::format("{} has no \"meta\"", what));
  check_launch_params(j["meta"], constexprs, fmt::format("candidate {}: meta", n), false);
  a.meta = j["meta"];
  if (j.contains("grid") && !j["grid"].is_null()) {
    const json& g = j["grid"];
    if (!g.is_array() || g.empty() || g.size() > 3)
      throw AnswerError(fmt::format("candidate {}: grid must be null or a list of 1 to 3 strings, got {}", n,
                                    one_line(g.dump(), 80)));
    for (const auto& e : g) {
      if (!e.is_string() || trim(e.get<std::string>()).empty() || e.get<std::string>().size() > kMaxGridExprChars)
        throw AnswerError(fmt::format("candidate {}: grid entries must be non-empty strings of at most {} "
                                      "characters, got {}",
                                      n, kMaxGridExprChars, one_line(e.dump(), 80)));
      a.grid.push_back(e.get<std::string>());
    }
  }
  if (j.contains("notes") && !j["notes"].is_null()) {
    if (!j["notes"].is_string()) throw AnswerError(fmt::format("candidate {}: notes must be a string", n));
    a.notes = one_line(j["notes"].get<std::string>(), kMaxNoteChars);
  }
  return a;
}

}  // namespace

std::vector<FencedBlock> fenced_blocks(std::string_view text) {
  std::vector<FencedBlock> out;
  std::optional<FencedBlock> open;
  std::size_t fence_len = 0, indent = 0;
  int line_no = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t nl = text.find('\n', at);
    std::string_view line = text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    at = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::size_t lead = std::min(line.find_first_not_of(" \t"), line.size());
    const std::string_view rest = line.substr(lead);
    std::size_t ticks = 0;
    while (ticks < rest.size() && rest[ticks] == '`') ++ticks;
    if (open) {
      if (ticks >= fence_len && trim(rest.substr(ticks)).empty()) {
        out.push_back(std::move(*open));
        open.reset();
        continue;
      }
      // drop up to the opening fence's indentation (a block inside a list item)
      std::size_t strip = 0;
      while (strip < indent && strip < line.size() && line[strip] == ' ') ++strip;
      open->text.append(line.substr(strip));
      open->text += '\n';
      continue;
    }
    if (ticks >= 3 && rest.substr(ticks).find('`') == std::string_view::npos) {
      std::string info = lower(trim(rest.substr(ticks)));
      info = info.substr(0, info.find_first_of(" \t{"));  // the language is the first word ("python title=x")
      open = FencedBlock{info, "", line_no, true};
      fence_len = ticks;
      indent = lead;
    }
  }
  if (open) {
    open->closed = false;
    out.push_back(std::move(*open));
  }
  return out;
}

std::vector<KernelAnswer> parse_kernel_answers(const std::string& text, const std::vector<std::string>& constexprs) {
  std::vector<KernelAnswer> out;
  const FencedBlock* python = nullptr;
  bool any_python = false;
  const std::vector<FencedBlock> blocks = fenced_blocks(text);  // named: `python` points into it after the loop
  for (const FencedBlock& b : blocks) {
    const BlockKind k = kind_of(b);
    if (k == BlockKind::other) continue;
    const int n = static_cast<int>(out.size()) + 1;
    if (k == BlockKind::python) {
      if (python != nullptr) {
        require_closed(n, *python, BlockKind::python);
        throw AnswerError(fmt::format("{} has no ```json block after it (another python block follows at line {})",
                                      where(n, *python, BlockKind::python), b.line));
      }
      python = &b;
      any_python = true;
      continue;
    }
    if (python == nullptr) {
      if (!any_python) throw AnswerError(fmt::format("no ```python block before the json block at line {}", b.line));
      throw AnswerError(fmt::format("candidate {}: the json block at line {} has no python block before it", n, b.line));
    }
    if (n > kMaxCandidates) throw AnswerError(fmt::format("more than {} candidates in one answer", kMaxCandidates));
    out.push_back(read_candidate(n, *python, b, constexprs));
    python = nullptr;
  }
  if (python != nullptr) {
    const int n = static_cast<int>(out.size()) + 1;
    require_closed(n, *python, BlockKind::python);
    throw AnswerError(fmt::format("{} has no ```json block after it", where(n, *python, BlockKind::python)));
  }
  if (out.empty()) throw AnswerError("no ```python block in the answer");
  return out;
}

json answer_json(const std::string& text) {
  const auto blocks = fenced_blocks(text);
  for (const FencedBlock& b : blocks) {
    if (b.info != "json") continue;
    if (!b.closed) throw AnswerError(fmt::format("the json block at line {} is never closed (the answer looks truncated)", b.line));
    if (b.text.size() > kMaxAnswerJsonBytes) throw AnswerError("the json block is too large");
    return parse_json_text(b.text, fmt::format("the json block at line {}", b.line));
  }
  for (const FencedBlock& b : blocks) {
    if (!b.info.empty() || !b.closed || b.text.size() > kMaxAnswerJsonBytes) continue;
    json j = json::parse(b.text, nullptr, false);
    if (!j.is_discarded()) return j;
  }
  const std::string t = trim(text);
  if (!t.empty() && (t[0] == '{' || t[0] == '[') && t.size() <= kMaxAnswerJsonBytes)
    return parse_json_text(t, "the answer");
  throw AnswerError("no ```json block in the answer");
}

std::map<std::string, std::string> parse_profiler_answer(const std::string& text,
                                                         const std::vector<std::string>& kernels) {
  const json j = answer_json(text);
  if (!j.is_object()) throw AnswerError("the answer is not a JSON object {\"<kernel>\": \"<diagnosis>\"}");
  const std::set<std::string> known(kernels.begin(), kernels.end());
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : j.items()) {
    if (!known.count(name)) throw AnswerError(fmt::format("unknown kernel '{}' in the answer", one_line(name, 120)));
    if (!value.is_string()) throw AnswerError(fmt::format("the diagnosis of {} is not a string", name));
    std::string d = one_line(value.get<std::string>(), kMaxDiagnosisChars);
    if (!d.empty()) out[name] = std::move(d);
  }
  return out;
}

std::vector<PlanItem> parse_planner_answer(const std::string& text, const std::vector<KernelProfile>& profiles,
                                           int total_budget) {
  const json j = answer_json(text);
  if (!j.is_array()) throw AnswerError("the answer is not a JSON list [{\"kernel\", \"budget\", \"strategy\"}, ...]");
  if (j.empty()) throw AnswerError("the plan lists no kernel");
  std::map<std::string, const KernelProfile*> by_name;
  for (const auto& p : profiles) by_name[p.name] = &p;
  std::vector<PlanItem> planned;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const json& item = j[i];
    const std::string what = fmt::format("plan item {}", i + 1);
    if (!item.is_object()) throw AnswerError(what + " is not an object");
    if (!item.contains("kernel") || !item["kernel"].is_string()) throw AnswerError(what + " has no string \"kernel\"");
    const std::string name = item["kernel"].get<std::string>();
    auto it = by_name.find(name);
    if (it == by_name.end()) throw AnswerError(fmt::format("{}: unknown kernel '{}'", what, one_line(name, 120)));
    if (!seen.insert(name).second) throw AnswerError(fmt::format("{}: kernel {} is planned twice", what, name));
    if (!item.contains("budget") || !item["budget"].is_number_integer() || item["budget"].get<long long>() < 0 ||
        item["budget"].get<long long>() > 1000000)
      throw AnswerError(fmt::format("{} ({}): budget must be an integer >= 0", what, name));
    std::string strategy;
    if (item.contains("strategy") && !item["strategy"].is_null()) {
      if (!item["strategy"].is_string()) throw AnswerError(fmt::format("{} ({}): strategy must be a string", what, name));
      strategy = one_line(item["strategy"].get<std::string>(), kMaxDiagnosisChars);
    }
    const KernelProfile& p = *it->second;
    PlanItem pi;
    pi.kernel = name;
    pi.score = p.share * (1.0 - std::clamp(p.roofline_fraction, 0.0, 1.0));
    pi.budget = static_cast<int>(item["budget"].get<long long>());
    pi.strategy = strategy;
    planned.push_back(std::move(pi));
  }

  // Rescale budgets that overspend: proportional, floors, then largest remainders.
  const long long total = std::max(total_budget, 0);
  long long sum = 0;
  for (const auto& pi : planned) sum += pi.budget;
  if (sum > total) {
    std::vector<double> frac(planned.size());
    long long given = 0;
    for (std::size_t i = 0; i < planned.size(); ++i) {
      const double ideal = static_cast<double>(planned[i].budget) * static_cast<double>(total) / static_cast<double>(sum);
      const int floor_v = static_cast<int>(std::floor(ideal + 1e-9));
      frac[i] = ideal - floor_v;
      planned[i].budget = floor_v;
      given += floor_v;
    }
    std::vector<std::size_t> order(planned.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return frac[a] > frac[b]; });
    for (std::size_t k = 0; given < total && k < order.size(); ++k, ++given) ++planned[order[k]].budget;
  }

  std::vector<PlanItem> kept, skipped;
  for (auto& pi : planned) {
    if (pi.budget > 0) {
      pi.why = "LLM plan: " + (pi.strategy.empty() ? std::string("no strategy given") : pi.strategy);
      kept.push_back(std::move(pi));
    } else {
      pi.why = "skipped: the LLM plan gives it no budget";
      skipped.push_back(std::move(pi));
    }
  }
  for (const auto& p : profiles) {
    if (seen.count(p.name)) continue;
    PlanItem pi;
    pi.kernel = p.name;
    pi.score = p.share * (1.0 - std::clamp(p.roofline_fraction, 0.0, 1.0));
    pi.why = "skipped: not in the LLM plan";
    skipped.push_back(std::move(pi));
  }
  // skipped kernels in profile order
  std::map<std::string, std::size_t> rank;
  for (std::size_t i = 0; i < profiles.size(); ++i) rank.emplace(profiles[i].name, i);
  std::stable_sort(skipped.begin(), skipped.end(),
                   [&](const PlanItem& a, const PlanItem& b) { return rank[a.kernel] < rank[b.kernel]; });
  kept.insert(kept.end(), std::make_move_iterator(skipped.begin()), std::make_move_iterator(skipped.end()));
  return kept;
}

std::vector<json> parse_tuner_answer(const std::string& text, const std::vector<std::string>& constexprs,
                                     int max_configs) {
  const json j = answer_json(text);
  if (!j.is_array()) throw AnswerError("the answer is not a JSON list of configs");
  if (j.empty()) throw AnswerError("the answer lists no config");
  std::vector<json> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < j.size(); ++i) {
    check_launch_params(j[i], constexprs, fmt::format("config {}", i + 1), true);
    if (!seen.insert(j[i].dump()).second) continue;
    if (static_cast<int>(out.size()) < max_configs) out.push_back(j[i]);
  }
  return out;
}

}  // namespace kernelopt::agents
