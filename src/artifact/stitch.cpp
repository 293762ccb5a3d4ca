#include "artifact/stitch.hpp"

#include <algorithm>
#include <set>

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

std::string kernel_source_with_config(const Module& module, const Kernel& kernel, const LaunchConfig& cfg) {
  const std::string& triton_meta = heuristic_arg(kernel, "triton_meta");
  const std::string& inductor_meta = heuristic_arg(kernel, "inductor_meta");
  check_blocks(kernel, cfg);
  if (kernel.decorator.begin < kernel.source.begin || kernel.decorator.end > kernel.source.end ||
      kernel.decorator.begin > kernel.decorator.end) {
    throw ArtifactError("kernel " + kernel.name + ": decorator span not inside its source span");
  }
  Span local{kernel.decorator.begin - kernel.source.begin, kernel.decorator.end - kernel.source.begin};
  std::string call = "triton_heuristics.fixed_config(config=" + cfg.python_dict() +
                     ", filename=__file__, triton_meta=" + triton_meta + ", inductor_meta=" + inductor_meta + ")";
  return splice(module.kernel_source(kernel), {{local, std::move(call)}});
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
