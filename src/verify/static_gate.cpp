#include "verify/static_gate.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "util/text.hpp"

namespace kernelopt::verify {
namespace {

using nlohmann::json;

const json& empty_array() {
  static const json kEmpty = json::array();
  return kEmpty;
}

// The array at j[key], or an empty array when absent or of another type.
const json& array_at(const json& j, const char* key) {
  if (!j.is_object()) return empty_array();
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty_array();
}

std::string string_at(const json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

std::optional<std::int64_t> line_of(const json& j) {
  if (j.is_object()) {
    auto it = j.find("line");
    if (it != j.end() && it->is_number_integer()) return it->get<std::int64_t>();
  }
  return std::nullopt;
}

std::vector<std::string> strings(const json& arr) {
  std::vector<std::string> out;
  for (const json& x : arr)
    if (x.is_string()) out.push_back(x.get<std::string>());
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out + "]";
}

using util::trim;

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t dot; (dot = s.find('.', start)) != std::string::npos; start = dot + 1)
    parts.push_back(s.substr(start, dot - start));
  parts.push_back(s.substr(start));
  return parts;
}

// " (line N)" when the fact carries a line, else "".
std::string at_line(const json& fact) {
  const auto line = line_of(fact);
  return line ? fmt::format(" (line {})", *line) : std::string{};
}

class Checker {
 public:
  explicit Checker(const StaticPolicy& policy) : policy_(policy) {}

  void add(const char* rule, std::string message, const json& fact = json()) {
    json v = {{"rule", rule}, {"message", std::move(message)}};
    if (const auto line = line_of(fact)) v["line"] = *line;
    violations_.push_back(std::move(v));
  }

  const json& violations() const { return violations_; }

  void check_imports(const json& facts) {
    for (const json& imp : array_at(facts, "imports")) {
      const std::string module = string_at(imp, "module");
      const std::vector<std::string> names = strings(array_at(imp, "names"));
      if (names.empty()) {
        if (!policy_.plain_imports.count(module))
          add("import", fmt::format("import of {} is not allowed{}", module, at_line(imp)), imp);
        continue;
      }
      auto allowed = policy_.from_imports.find(module);
      if (allowed == policy_.from_imports.end()) {
        add("import", fmt::format("import of {} is not allowed{}", module, at_line(imp)), imp);
        continue;
      }
      for (const std::string& name : names)
        if (!allowed->second.count(name))
          add("import", fmt::format("import of {} from {} is not allowed{}", name, module, at_line(imp)), imp);
    }
  }

  void check_toplevel(const json& facts) {
    for (const json& stmt : array_at(facts, "toplevel")) {
      const std::string kind = string_at(stmt, "kind");
      const std::string text = trim(string_at(stmt, "text"));
      const bool literal = stmt.is_object() && stmt.value("literal", false);
      if (kind == "Import" || kind == "ImportFrom" || kind == "FunctionDef") continue;  // contents checked elsewhere
      if (kind == "Assign" && literal) continue;
      if (kind == "Expr" && (text == policy_.driver_call || (literal && policy_.allow_literal_expressions))) continue;
      const std::string what = kind == "Assign" ? "module-level assignment of a non-literal"
                                                : fmt::format("module-level {} statement", kind.empty() ? "unknown" : kind);
      add("toplevel", fmt::format("{} is not allowed{}: {}", what, at_line(stmt), text), stmt);
    }
  }

  void check_decorators(const json& facts) {
    for (const json& fn : array_at(facts, "functions")) {
      const std::string name = string_at(fn, "name");
      const std::vector<std::string> decorators = strings(array_at(fn, "decorators"));
      if (decorators.empty() || decorators.back() != policy_.jit_decorator) {
        add("decorator", fmt::format("function {} must have @{} as its last decorator{}", name,
                                     policy_.jit_decorator, at_line(fn)), fn);
        continue;
      }
      if (decorators.size() > 2) {
        add("decorator", fmt::format("function {} has {} decorators; at most one besides @{}{}", name,
                                     decorators.size(), policy_.jit_decorator, at_line(fn)), fn);
        continue;
      }
      if (decorators.size() == 2 && !policy_.heuristic_decorators.count(decorators.front()))
        add("decorator", fmt::format("decorator @{} on function {} is not allowed{}", decorators.front(), name,
                                     at_line(fn)), fn);
    }
  }

  void check_kernel(const json& candidate, const json& original_kernel) {
    const std::string name = string_at(original_kernel, "name");
    const json* found = nullptr;
    for (const json& fn : array_at(candidate, "functions"))
      if (string_at(fn, "name") == name) {
        found = &fn;
        break;
      }
    if (!found) {
      add("signature", fmt::format("candidate does not define kernel {}", name));
      return;
    }
    for (const char* field : {"params", "constexprs"}) {
      const auto want = strings(array_at(original_kernel, field));
      const auto got = strings(array_at(*found, field));
      if (want != got)
        add("signature", fmt::format("kernel {} {} differ from the original: expected {}, got {}{}", name, field,
                                     join(want), join(got), at_line(*found)), *found);
    }
  }

  void check_forbidden(const json& facts) {
    for (const std::string& name : strings(array_at(facts, "names")))
      if (policy_.forbidden_names.count(name) ||
          (policy_.forbid_dunder_names && name.size() > 4 && name.rfind("__", 0) == 0 &&
           name.compare(name.size() - 2, 2, "__") == 0 && !policy_.allowed_dunder_names.count(name)))
        add("name", fmt::format("use of {} is not allowed", name));
    for (const json& call : array_at(facts, "calls")) {
      const std::string callee = string_at(call, "name");
      const std::vector<std::string> parts = split_dots(callee);
      if (policy_.forbidden_call_leaves.count(parts.back())) {
        add("call", fmt::format("call to {} is not allowed{}", callee, at_line(call)), call);
        continue;
      }
      if (parts.size() == 1 && policy_.forbidden_names.count(parts.front())) continue;  // reported as a name
      for (std::size_t i = 0; i + 1 < parts.size(); ++i)
        if (policy_.forbidden_call_modules.count(parts[i])) {
          add("call", fmt::format("call to {} is not allowed{}: {} is off limits", callee, at_line(call), parts[i]),
              call);
          break;
        }
    }
  }

  void check_stores(const json& candidate, const json& original, const std::string& kernel) {
    auto stored = [&](const json& facts) {
      const json& sp = facts.is_object() && facts.contains("stored_params") ? facts["stored_params"] : json();
      return sp.is_object() ? strings(array_at(sp, kernel.c_str())) : std::vector<std::string>{};
    };
    const auto cand = stored(candidate);
    for (const std::string& param : stored(original))
      if (std::find(cand.begin(), cand.end(), param) == cand.end())
        add("store", fmt::format("kernel {} never stores to {}, which the original writes", kernel, param));
  }

 private:
  const StaticPolicy& policy_;
  json violations_ = json::array();
};

// The original's kernel: its first function with a heuristics decorator, else its first function.
const json* original_kernel(const json& original, const StaticPolicy& policy) {
  const json& fns = array_at(original, "functions");
  for (const json& fn : fns)
    for (const std::string& d : strings(array_at(fn, "decorators")))
      if (d.rfind(policy.heuristics_prefix, 0) == 0) return &fn;
  return fns.empty() ? nullptr : &fns.front();
}

bool has_parse_error(const json& facts) {
  return facts.is_object() && facts.contains("parse_error") && !facts["parse_error"].is_null();
}

std::string error_text(const json& e) { return e.is_string() ? e.get<std::string>() : e.dump(); }

}  // namespace

Verdict static_gate(const json& candidate_facts, const json& original_facts, const StaticPolicy& policy) {
  Verdict v;
  v.gate = "static";
  Checker check(policy);
  const json* kernel = original_kernel(original_facts, policy);
  const std::string kernel_name = kernel ? string_at(*kernel, "name") : std::string{};

  if (has_parse_error(original_facts)) {
    check.add("original", "the original kernel's facts have a parse error: " +
                              error_text(original_facts["parse_error"]));
  } else if (!kernel) {
    check.add("original", "the original defines no kernel function");
  }
  if (has_parse_error(candidate_facts)) {
    check.add("parse", "candidate does not parse: " + error_text(candidate_facts["parse_error"]));
  } else if (!candidate_facts.is_object()) {
    check.add("parse", "candidate facts are not a JSON object");
  } else {
    check.check_imports(candidate_facts);
    check.check_toplevel(candidate_facts);
    check.check_decorators(candidate_facts);
    if (kernel) check.check_kernel(candidate_facts, *kernel);
    check.check_forbidden(candidate_facts);
    if (kernel) check.check_stores(candidate_facts, original_facts, kernel_name);
    // a grid expression from an LLM answer, checked by the worker with ast (never evaluated there)
    if (const auto it = candidate_facts.find("grid_violations"); it != candidate_facts.end() && it->is_array()) {
      for (const json& g : *it) check.add("grid", error_text(g));
    }
  }

  const json& violations = check.violations();
  v.passed = violations.empty();
  v.reason = v.passed ? fmt::format("kernel {}: static checks passed", kernel_name)
                      : violations.front()["message"].get<std::string>();
  v.evidence = {{"kernel", kernel_name}, {"violations", violations}};
  return v;
}

}  // namespace kernelopt::verify
