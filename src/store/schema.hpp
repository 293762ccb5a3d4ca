/// \file
/// The store's schema and its migrations. Contract: migrate() brings a
/// database from any older PRAGMA user_version to kSchemaVersion, one step per
/// version, inside one IMMEDIATE transaction (so two processes opening a fresh
/// file at once cannot both create it), with foreign keys off around it (a step
/// may rebuild a table others refer to) and PRAGMA foreign_key_check clean before
/// it commits (StoreError otherwise); a file newer than this build is refused
/// with StoreError and left untouched. To change the schema, append a step —
/// never edit a released one.
#pragma once

#include "store/sqlite.hpp"

namespace kernelopt::store {

// 2: llm_exchanges; 3: candidates.status admits 'skipped' (the table rebuilt, rows and ids kept)
inline constexpr int kSchemaVersion = 3;

/// Migrates `db` to `target` (the stores always to kSchemaVersion; tests build an older version's file with
/// the released steps themselves, not a copy of their SQL).
void migrate(Database& db, int target = kSchemaVersion);

}  // namespace kernelopt::store
