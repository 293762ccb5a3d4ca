/// \file
/// Reading the optional fields of report and bench JSON: a missing or mistyped field is null, a
/// fallback or empty, never an exception (shared by the bench rows and the bench's pages).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kernelopt::report::fields {

using nlohmann::json;

/// obj[key] when it is a number, else null.
inline json number_or_null(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number()) return nullptr;
  return obj[key];
}

inline double number_or(const json& obj, const char* key, double fallback) {
  const json v = number_or_null(obj, key);
  return v.is_null() ? fallback : v.get<double>();
}

inline std::string string_or_empty(const json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && obj[key].is_string() ? obj[key].get<std::string>() : "";
}

inline const json& member(const json& obj, const char* key) {
  static const json empty = json::object();
  return obj.is_object() && obj.contains(key) ? obj[key] : empty;
}

}  // namespace kernelopt::report::fields
