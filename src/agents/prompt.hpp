/// \file
/// Prompt templates: the files under prompts/ (compiled into the binary, so it
/// needs no data files) and the tiny renderer that fills them.
///
/// A template is text with placeholders `{{name}}` (name: [A-Za-z_][A-Za-z0-9_]*).
/// render() replaces each with vars[name], a string (as is) or a number
/// (integers in decimal, others in the shortest form that reads back equal).
/// Values are inserted once and never re-scanned, so they may contain braces.
///
/// Contract: strict, so templates and code cannot drift apart. PromptError
/// (one line, naming the template and the variable) for a placeholder with no
/// variable, a variable no placeholder uses, a value that is not a string or
/// number, a `{{` that does not open a well-formed placeholder, or an unknown
/// template name.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernelopt::agents {

class PromptError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// text with every placeholder filled from vars (a JSON object); `name`
/// labels errors.
std::string render(std::string_view text, const nlohmann::json& vars, std::string_view name = "template");

/// The text of prompts/<name>.md as compiled in (e.g. "coder", "system").
std::string_view prompt_template(std::string_view name);
/// Every compiled-in template name, sorted.
std::vector<std::string> prompt_template_names();
/// render(prompt_template(name), vars, name), without the file's final newline
/// (so a rendered part can be placed into another template as a block).
std::string render_prompt(std::string_view name, const nlohmann::json& vars);

}  // namespace kernelopt::agents
