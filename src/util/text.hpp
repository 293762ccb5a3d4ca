// Small string helpers shared by the engine's parts.
#pragma once

#include <string>
#include <string_view>

namespace kernelopt::util {

/// s without leading and trailing spaces, tabs, CRs and newlines.
inline std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace kernelopt::util
