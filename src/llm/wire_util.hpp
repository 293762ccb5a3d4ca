/// \file
/// Small JSON readers shared by the wire formats (internal to src/llm): token
/// counts that may be absent, and text that may be a string or a list of parts.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kernelopt::llm::detail {

/// obj[key] as a token count when it is a non-negative integer, else 0.
int token_count(const nlohmann::json& obj, const char* key);

/// The "text" fields of the {"type":"text","text":...} items in parts, joined
/// in order; true if there was at least one.
bool join_text_parts(const nlohmann::json& parts, std::string& out);

}  // namespace kernelopt::llm::detail
