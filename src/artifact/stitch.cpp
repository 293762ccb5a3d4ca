#include "artifact/stitch.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

namespace kernelopt::artifact {

namespace {

std::string span_text(const Span& span) {
  return "[" + std::to_string(span.begin) + ", " + std::to_string(span.end) + ")";
}

const std::string& heuristic_arg(const Kernel& kernel, const std::string& key) {
  auto it = kernel.heuristic_args.find(key);
  if (it == kernel.heuristic_args.end() || it->second.empty()) {
    throw ArtifactError("kernel " + kernel.name + ": decorator has no " + key);
  }
  return it->second;
}

void check_blocks(const Kernel& kernel, const LaunchConfig& cfg) {
  std::set<std::string> wanted(kernel.constexprs.begin(), kernel.constexprs.end());
  std::set<std::string> given;
  for (const auto& [name, size] : cfg.blocks) given.insert(name);
  if (given != wanted) {
    std::string names;
    for (const std::string& name : kernel.constexprs) names += (names.empty() ? "" : ", ") + name;
    throw ArtifactError("kernel " + kernel.name + ": config " + cfg.label() +
                        " must set exactly its constexprs (" + names + ")");
  }
}

// The new text must stay one plain triple-quoted literal with the same value.
void check_literal_safe(const Module& module, const Kernel& kernel, const std::string& text) {
  if (module.input_kind == "triton") {  // a user's file: the function itself is replaced, no literal around it
    if (text.find('\0') != std::string::npos) throw ArtifactError("kernel " + kernel.name + ": new source contains a NUL byte");
    return;
  }
  const Span& s = kernel.source;
  if (s.begin < 3 || s.end + 3 > module.source.size()) {
    throw ArtifactError("kernel " + kernel.name + ": source span " + span_text(s) + " is not inside a literal");
  }
  std::string_view open = std::string_view(module.source).substr(s.begin - 3, 3);
  std::string_view close = std::string_view(module.source).substr(s.end, 3);
  if (open != close || (open != "'''" && open != "\"\"\"")) {
    throw ArtifactError("kernel " + kernel.name + ": source span is not delimited by ''' or \"\"\"");
  }
  const char* why = nullptr;
  if (text.find("'''") != std::string::npos) why = "contains '''";
  else if (text.find("\"\"\"") != std::string::npos) why = "contains \"\"\"";
  else if (text.find('\\') != std::string::npos) why = "contains a backslash";
  else if (text.find('\0') != std::string::npos) why = "contains a NUL byte";
  else if (!text.empty() && text.back() == open[0]) why = "ends with the literal's quote character";
  if (why) throw ArtifactError("kernel " + kernel.name + ": new source " + why);
}

}  // namespace

std::string splice(std::string_view source, std::vector<Replacement> replacements) {
  std::stable_sort(replacements.begin(), replacements.end(),
                   [](const Replacement& a, const Replacement& b) { return a.span.begin < b.span.begin; });
  std::string out;
  std::size_t pos = 0;
  for (const Replacement& r : replacements) {
    if (r.span.begin > r.span.end || r.span.end > source.size()) {
      throw ArtifactError("splice: span " + span_text(r.span) + " out of range (source has " +
                          std::to_string(source.size()) + " bytes)");
    }
    if (r.span.begin < pos) {
      throw ArtifactError("splice: span " + span_text(r.span) + " overlaps a previous replacement ending at " +
                          std::to_string(pos));
    }
    out.append(source.substr(pos, r.span.begin - pos));
    out.append(r.text);
    pos = r.span.end;
  }
  out.append(source.substr(pos));
  return out;
}

namespace {

std::string fixed_config_call(const Kernel& kernel, const LaunchConfig& cfg, const std::vector<std::string>& grid) {
  const std::string& triton_meta = heuristic_arg(kernel, "triton_meta");
  std::string inductor_meta = heuristic_arg(kernel, "inductor_meta");
  check_blocks(kernel, cfg);
  if (!grid.empty()) {
    if (grid.size() > 3) throw ArtifactError("kernel " + kernel.name + ": a grid has at most 3 dimensions");
    std::string dims;
    for (std::size_t i = 0; i < 3; ++i) {
      const std::string g = i < grid.size() ? grid[i] : "1";
      const bool safe = !g.empty() && std::all_of(g.begin(), g.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_ +-*/%()").find(c) != std::string_view::npos;
      });
      if (!safe) throw ArtifactError("kernel " + kernel.name + ": grid expression '" + g + "' has characters outside [A-Za-z0-9_ +-*/%()]");
      dims += (i ? ", '" : "'") + g + "'";
    }
    inductor_meta = "{**" + inductor_meta + ", 'grid_type': 'FixedGrid', 'fixed_grid': [" + dims + "]}";
  }
  return "triton_heuristics.fixed_config(config=" + cfg.python_dict() + ", filename=__file__, triton_meta=" +
         triton_meta + ", inductor_meta=" + inductor_meta + ")";
}

/// Byte offset of the start of 1-based `line` in text (text.size() for one past the last line).
std::size_t line_offset(const std::string& text, int line) {
  if (line < 1) throw ArtifactError("candidate code: line " + std::to_string(line) + " out of range");
  std::size_t pos = 0;
  for (int l = 1; l < line; ++l) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) throw ArtifactError("candidate code: line " + std::to_string(line) + " out of range");
    ++pos;
  }
  return pos;
}

/// The code's lines [first, last] (1-based, inclusive), ending with a newline.
std::string lines(const std::string& code, int first, int last) {
  if (first > last) throw ArtifactError("candidate code: empty function lines");
  const std::size_t b = line_offset(code, first);
  std::size_t e = code.find('\n', line_offset(code, last));
  std::string out = code.substr(b, e == std::string::npos ? std::string::npos : e - b);
  return out + "\n";
}

}  // namespace

std::string kernel_source_with_config(const Module& module, const Kernel& kernel, const LaunchConfig& cfg,
                                      const std::vector<std::string>& grid) {
  std::string call = fixed_config_call(kernel, cfg, grid);
  if (kernel.decorator.begin < kernel.source.begin || kernel.decorator.end > kernel.source.end ||
      kernel.decorator.begin > kernel.decorator.end) {
    throw ArtifactError("kernel " + kernel.name + ": decorator span not inside its source span");
  }
  Span local{kernel.decorator.begin - kernel.source.begin, kernel.decorator.end - kernel.source.begin};
  return splice(module.kernel_source(kernel), {{local, std::move(call)}});
}

std::string inductor_candidate(const Module& module, const Kernel& kernel, const std::string& code,
                               const FunctionLines& fn, const LaunchConfig& cfg, const std::vector<std::string>& grid) {
  std::string call = fixed_config_call(kernel, cfg, grid);
  const std::string original = module.kernel_source(kernel);
  const std::size_t at = kernel.decorator.begin - kernel.source.begin;  // just after the decorator's '@'
  if (kernel.decorator.begin < kernel.source.begin || at == 0 || original[at - 1] != '@') {
    throw ArtifactError("kernel " + kernel.name + ": no '@' before its heuristics decorator");
  }
  std::string out = original.substr(0, at - 1);  // imports and anything else Inductor put before the kernel
  if (fn.first_line > 1) out += lines(code, 1, fn.first_line - 1);
  out += "@" + call + "\n";
  out += lines(code, fn.first_line, fn.end_line);
  return out;
}

std::string standalone_candidate(const Module& module, const Kernel& kernel, const std::string& code,
                                 const FunctionLines& fn) {
  if (kernel.function.begin < kernel.source.begin) throw ArtifactError("kernel " + kernel.name + ": function before its span");
  std::string out;
  if (fn.first_line > 1) out += lines(code, 1, fn.first_line - 1) + "\n";
  out += module.source.substr(kernel.source.begin, kernel.function.begin - kernel.source.begin);
  std::string def = lines(code, fn.def_line, fn.end_line);
  // the original span ends where its function's last line ends (no newline): keep the bytes after it as they were
  if (!def.empty() && def.back() == '\n' && (kernel.source.end == module.source.size() || module.source[kernel.source.end] == '\n')) def.pop_back();
  out += def;
  return out;
}

namespace {

// `@triton.jit` -> "triton."; "" for a decorator that is not `<module>.jit`.
std::string jit_module_prefix(const std::string& decorator) {
  const std::string suffix = ".jit";
  if (decorator.size() <= suffix.size() || decorator.compare(decorator.size() - suffix.size(), suffix.size(), suffix) != 0)
    return "";
  return decorator.substr(0, decorator.size() - 3);
}

// The last dotted component: "triton.autotune" -> "autotune".
std::string leaf(const std::string& dotted) {
  const auto dot = dotted.rfind('.');
  return dot == std::string::npos ? dotted : dotted.substr(dot + 1);
}

}  // namespace

std::string standalone_untunable(const Kernel& kernel) {
  if (kernel.decorators.empty()) return "its decorators were not recorded";
  for (const auto& d : kernel.decorators) {
    const std::string name = leaf(d);
    if (name == "autotune" || name == "heuristics") {
      return "it is under @" + d + ": the user's own code chooses its launch config";
    }
  }
  if (kernel.decorators.size() > 1) {
    std::string others;
    for (std::size_t i = 0; i + 1 < kernel.decorators.size(); ++i) {
      others += (others.empty() ? "@" : ", @") + (kernel.decorators[i].empty() ? "<expression>" : kernel.decorators[i]);
    }
    return "it has decorators besides its @triton.jit (" + others + ")";
  }
  if (jit_module_prefix(kernel.decorators.back()).empty()) {
    return "its decorator @" + kernel.decorators.back() + " is not @<module>.jit (e.g. @triton.jit), so the engine "
           "has no module name to pin the launch config with";
  }
  return "";
}

std::string standalone_with_config(const Module& module, const Kernel& kernel, const LaunchConfig& cfg) {
  if (const std::string why = standalone_untunable(kernel); !why.empty()) {
    throw ArtifactError("kernel " + kernel.name + ": launch config not tunable: " + why);
  }
  if (!cfg.blocks.empty()) {
    throw ArtifactError("kernel " + kernel.name + ": a standalone kernel's block sizes are its launcher's; "
                        "only num_warps and num_stages can be pinned");
  }
  const int w = cfg.num_warps;
  if (w < 1 || w > 32 || (w & (w - 1)) != 0) {
    throw ArtifactError("kernel " + kernel.name + ": num_warps must be a power of two in [1, 32], got " + std::to_string(w));
  }
  if (cfg.num_stages < 1 || cfg.num_stages > 8) {
    throw ArtifactError("kernel " + kernel.name + ": num_stages must be in [1, 8], got " + std::to_string(cfg.num_stages));
  }
  if (kernel.source.end > module.source.size()) throw ArtifactError("kernel " + kernel.name + ": span out of range");
  return "@" + jit_module_prefix(kernel.decorators.back()) + "heuristics(values={'num_warps': lambda args: " +
         std::to_string(w) + ", 'num_stages': lambda args: " + std::to_string(cfg.num_stages) + "})\n" +
         module.kernel_source(kernel);
}

std::string stitch_kernels(const Module& module, const std::map<std::string, std::string>& new_sources) {
  std::vector<Replacement> replacements;
  for (const auto& [name, text] : new_sources) {
    const Kernel* kernel = module.find_kernel(name);
    if (kernel == nullptr) throw ArtifactError("stitch: no kernel named " + name + " in module " + module.path);
    check_literal_safe(module, *kernel, text);
    replacements.push_back({kernel->source, text});
  }
  return splice(module.source, std::move(replacements));
}

}  // namespace kernelopt::artifact
