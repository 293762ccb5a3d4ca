/// \file
/// JSON in SQLite columns, shared by the run store and the kernel library: null binds as SQL NULL,
/// anything else as its dump; reading back parses, and a column that does not parse is a StoreError
/// naming the file kind (`what`: "store", "library").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "store/sqlite.hpp"

namespace kernelopt::store {

inline void bind_json(Statement& st, int idx, const nlohmann::json& value) {
  if (value.is_null())
    st.bind(idx, nullptr);
  else
    st.bind(idx, value.dump());
}

inline nlohmann::json read_json(const Statement& st, int col, const char* what) {
  if (st.column_is_null(col)) return nullptr;
  try {
    return nlohmann::json::parse(st.column_text(col));
  } catch (const nlohmann::json::exception& e) {
    throw StoreError(std::string(what) + ": corrupt JSON column: " + e.what());
  }
}

}  // namespace kernelopt::store
