/// \file
/// The five agent roles of a run (see ../shared/DESIGN.md, Agents): each has
/// an LLM implementation (agents/llm_agents.hpp) and an offline one
/// (profiler, planner, tuner; the Coder's and Repairer's offline versions
/// are "no candidate"). Role names are the words used in configs, tags, the
/// store and reports.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace kernelopt::agents {

enum class Role { profiler, planner, coder, repairer, tuner };

inline constexpr std::array<Role, 5> kRoles = {Role::profiler, Role::planner, Role::coder, Role::repairer,
                                               Role::tuner};

/// "profiler", "planner", "coder", "repairer", "tuner".
constexpr const char* role_name(Role role) {
  switch (role) {
    case Role::profiler: return "profiler";
    case Role::planner: return "planner";
    case Role::coder: return "coder";
    case Role::repairer: return "repairer";
    case Role::tuner: return "tuner";
  }
  return "?";
}

/// The role named name (exactly as role_name spells it); nullopt otherwise.
inline std::optional<Role> role_from_name(std::string_view name) {
  for (Role r : kRoles) {
    if (name == role_name(r)) return r;
  }
  return std::nullopt;
}

}  // namespace kernelopt::agents
