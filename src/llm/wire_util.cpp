// Lenient readers for optional fields of API answers.
#include "llm/wire_util.hpp"

#include <limits>

namespace kernelopt::llm::detail {

int token_count(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return 0;
  const auto n = it->get<long long>();
  if (n < 0 || n > std::numeric_limits<int>::max()) return 0;
  return static_cast<int>(n);
}

bool join_text_parts(const nlohmann::json& parts, std::string& out) {
  if (!parts.is_array()) return false;
  bool found = false;
  for (const nlohmann::json& part : parts) {
    if (!part.is_object()) continue;
    auto type = part.find("type");
    auto text = part.find("text");
    if (type == part.end() || *type != "text" || text == part.end() || !text->is_string()) continue;
    out += text->get<std::string>();
    found = true;
  }
  return found;
}

}  // namespace kernelopt::llm::detail
