/// \file
/// The store's schema and its migrations. Contract: migrate() brings a
/// database from any older PRAGMA user_version to kSchemaVersion, one step per
/// version, inside one IMMEDIATE transaction (so two processes opening a fresh
/// file at once cannot both create it); a file newer than this build is refused
/// with StoreError and left untouched. To change the schema, append a step —
/// never edit a released one.
#pragma once

#include "store/sqlite.hpp"

namespace kernelopt::store {

inline constexpr int kSchemaVersion = 2;  // 2: llm_exchanges

/// Migrates `db` to kSchemaVersion.
void migrate(Database& db);

}  // namespace kernelopt::store
