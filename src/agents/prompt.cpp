// The {{name}} renderer and the table of compiled-in templates.
#include "agents/prompt.hpp"

#include <algorithm>
#include <cstddef>
#include <set>

#include <fmt/format.h>

namespace kernelopt::agents {
namespace detail {
// Generated from prompts/*.md by src/agents/embed_prompts.cmake (prompts_embedded.cpp).
struct EmbeddedPrompt {
  const char* name;
  const char* text;
  std::size_t size;
};
extern const EmbeddedPrompt kEmbeddedPrompts[];
extern const std::size_t kEmbeddedPromptCount;
}  // namespace detail

namespace {

bool name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

std::string value_text(const nlohmann::json& v, std::string_view tmpl, const std::string& key) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number_unsigned()) return std::to_string(v.get<unsigned long long>());
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  throw PromptError(fmt::format("{}: variable '{}' is a {}, not a string or number", tmpl, key, v.type_name()));
}

}  // namespace

std::string render(std::string_view text, const nlohmann::json& vars, std::string_view name) {
  if (!vars.is_object()) throw PromptError(fmt::format("{}: variables must be a JSON object", name));
  std::string out;
  out.reserve(text.size());
  std::set<std::string> used;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t open = text.find("{{", at);
    if (open == std::string_view::npos) {
      out.append(text.substr(at));
      break;
    }
    out.append(text.substr(at, open - at));
    std::size_t end = open + 2;
    while (end < text.size() && name_char(text[end])) ++end;
    const std::string key(text.substr(open + 2, end - open - 2));
    if (key.empty() || !name_start(key[0]) || text.substr(end, 2) != "}}") {
      const std::size_t line = static_cast<std::size_t>(std::count(text.begin(), text.begin() + open, '\n')) + 1;
      throw PromptError(fmt::format("{}: malformed placeholder at line {}: '{}'", name, line,
                                    text.substr(open, std::min<std::size_t>(24, text.size() - open))));
    }
    auto it = vars.find(key);
    if (it == vars.end()) throw PromptError(fmt::format("{}: no value for placeholder '{{{{{}}}}}'", name, key));
    out += value_text(*it, name, key);
    used.insert(key);
    at = end + 2;
  }
  for (const auto& [key, value] : vars.items()) {
    if (!used.count(key)) throw PromptError(fmt::format("{}: variable '{}' is not used by the template", name, key));
  }
  return out;
}

std::string_view prompt_template(std::string_view name) {
  for (std::size_t i = 0; i < detail::kEmbeddedPromptCount; ++i) {
    const auto& p = detail::kEmbeddedPrompts[i];
    if (name == p.name) return {p.text, p.size};
  }
  throw PromptError(fmt::format("no prompt template '{}' (prompts/{}.md is not compiled in)", name, name));
}

std::vector<std::string> prompt_template_names() {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < detail::kEmbeddedPromptCount; ++i) out.emplace_back(detail::kEmbeddedPrompts[i].name);
  std::sort(out.begin(), out.end());
  return out;
}

std::string render_prompt(std::string_view name, const nlohmann::json& vars) {
  std::string_view text = prompt_template(name);
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);  // the file's last newline is not content
  return render(text, vars, fmt::format("prompts/{}.md", name));
}

}  // namespace kernelopt::agents
