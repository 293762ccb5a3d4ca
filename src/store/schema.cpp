#include "store/schema.hpp"

#include <array>
#include <string>

namespace kernelopt::store {
namespace {

// Version 0 -> 1: the initial tables.
constexpr const char* kV1 = R"sql(
CREATE TABLE runs (
  id           INTEGER PRIMARY KEY,
  created_at   TEXT NOT NULL,
  input_path   TEXT NOT NULL,
  input_hash   TEXT NOT NULL,
  out_dir      TEXT NOT NULL,
  status       TEXT NOT NULL,
  options_json TEXT,
  finished_at  TEXT,
  summary_json TEXT
);
CREATE INDEX runs_out_dir ON runs(out_dir);

CREATE TABLE kernels (
  id           INTEGER PRIMARY KEY,
  run_id       INTEGER NOT NULL REFERENCES runs(id),
  module       INTEGER NOT NULL,
  name         TEXT NOT NULL,
  kind         TEXT NOT NULL,
  source_hash  TEXT NOT NULL,
  profile_json TEXT,
  UNIQUE(run_id, module, name)
);

CREATE TABLE candidates (
  id          INTEGER PRIMARY KEY,
  run_id      INTEGER NOT NULL REFERENCES runs(id),
  module      INTEGER NOT NULL,
  kernel      TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  origin      TEXT NOT NULL,
  meta_json   TEXT,
  status      TEXT NOT NULL CHECK (status IN ('pending', 'rejected', 'passed', 'kept')),
  created_at  TEXT NOT NULL,
  UNIQUE(run_id, module, kernel, source_hash)
);

CREATE TABLE verdicts (
  id            INTEGER PRIMARY KEY,
  candidate_id  INTEGER NOT NULL REFERENCES candidates(id),
  gate          TEXT NOT NULL,
  passed        INTEGER NOT NULL CHECK (passed IN (0, 1)),
  reason        TEXT NOT NULL,
  evidence_json TEXT,
  created_at    TEXT NOT NULL
);
CREATE INDEX verdicts_candidate ON verdicts(candidate_id);

CREATE TABLE timings (
  id           INTEGER PRIMARY KEY,
  run_id       INTEGER NOT NULL REFERENCES runs(id),
  candidate_id INTEGER REFERENCES candidates(id),
  label        TEXT NOT NULL,
  unit         TEXT NOT NULL,
  samples_json TEXT NOT NULL,
  created_at   TEXT NOT NULL
);
CREATE INDEX timings_run ON timings(run_id);
)sql";

// Version 1 -> 2: every LLM exchange (request and answer), so identical
// requests replay from the store and a run's LLM use can be reported.
// request_json is the canonical request (redacted); the lookup key is
// (provider, model, request_hash).
constexpr const char* kV2 = R"sql(
CREATE TABLE llm_exchanges (
  id            INTEGER PRIMARY KEY,
  created_at    TEXT NOT NULL,
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  agent         TEXT NOT NULL,
  tag           TEXT NOT NULL,
  provider      TEXT NOT NULL,
  model         TEXT NOT NULL,
  request_hash  TEXT NOT NULL,
  request_json  TEXT NOT NULL,
  response_text TEXT NOT NULL,
  input_tokens  INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cost_usd      REAL NOT NULL
);
CREATE INDEX llm_exchanges_key ON llm_exchanges(provider, model, request_hash);
CREATE INDEX llm_exchanges_run ON llm_exchanges(run_id);
)sql";

// Version 2 -> 3: candidates.status admits 'skipped' (a whole-model decision that does not apply, e.g.
// CUDA graphs on a CPU device), which was recorded as 'rejected' before. SQLite cannot alter a CHECK, so
// the table is rebuilt by its documented procedure (lang_altertable.html#otheralter): a new table, every
// row copied with its id, the old one dropped, the new one renamed. migrate() runs it with foreign keys
// off (verdicts and timings keep referring to candidates(id) by name) and checks them before commit.
// candidates has no indexes of its own (its UNIQUE constraint comes with the table), triggers or views.
constexpr const char* kV3 = R"sql(
CREATE TABLE candidates_v3 (
  id          INTEGER PRIMARY KEY,
  run_id      INTEGER NOT NULL REFERENCES runs(id),
  module      INTEGER NOT NULL,
  kernel      TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  origin      TEXT NOT NULL,
  meta_json   TEXT,
  status      TEXT NOT NULL CHECK (status IN ('pending', 'rejected', 'passed', 'kept', 'skipped')),
  created_at  TEXT NOT NULL,
  UNIQUE(run_id, module, kernel, source_hash)
);
INSERT INTO candidates_v3(id, run_id, module, kernel, source_hash, origin, meta_json, status, created_at)
  SELECT id, run_id, module, kernel, source_hash, origin, meta_json, status, created_at FROM candidates;
DROP TABLE candidates;
ALTER TABLE candidates_v3 RENAME TO candidates;
)sql";

// kSteps[v] migrates version v to v + 1.
constexpr std::array<const char*, kSchemaVersion> kSteps = {kV1, kV2, kV3};

int user_version(Database& db) {
  Statement st = db.prepare("PRAGMA user_version");
  return st.step() ? static_cast<int>(st.column_int64(0)) : 0;
}

/// Foreign keys off for this connection while it lives (a step may rebuild a table others refer to), back
/// on when it ends. The pragma is a no-op inside a transaction, so this wraps the migration's Transaction.
class ForeignKeysOff {
 public:
  explicit ForeignKeysOff(Database& db) : db_(db) { db_.exec("PRAGMA foreign_keys = OFF"); }
  ForeignKeysOff(const ForeignKeysOff&) = delete;
  ForeignKeysOff& operator=(const ForeignKeysOff&) = delete;
  ~ForeignKeysOff() {
    if (on_) return;
    try {
      db_.exec("PRAGMA foreign_keys = ON");
    } catch (const StoreError&) {
      // already failing: the migration's own error is the one reported
    }
  }
  /// Turns them back on; throws if SQLite does not (the connection must not go on without them).
  void restore() {
    db_.exec("PRAGMA foreign_keys = ON");
    on_ = true;
    Statement st = db_.prepare("PRAGMA foreign_keys");
    if (!st.step() || st.column_int64(0) != 1)
      throw StoreError("store: cannot turn foreign keys back on after migrating");
  }

 private:
  Database& db_;
  bool on_ = false;
};

/// Every row PRAGMA foreign_key_check reports, as "table rowid -> parent" lines; "" when there are none.
std::string foreign_key_violations(Database& db) {
  Statement st = db.prepare("PRAGMA foreign_key_check");
  std::string out;
  while (st.step()) {
    out += (out.empty() ? "" : "; ") + st.column_text(0) + " row " + st.column_text(1) + " -> " + st.column_text(2);
  }
  return out;
}

}  // namespace

void migrate(Database& db, int target) {
  if (target < 1 || target > kSchemaVersion)
    throw StoreError("store: no schema version " + std::to_string(target) + " to migrate to");
  if (user_version(db) == target) return;  // fast path, no write lock
  ForeignKeysOff fk_off(db);               // before the transaction: SQLite ignores it inside one
  {
    Transaction tx(db);
    const int version = user_version(db);  // re-read under the write lock
    if (version > target)
      throw StoreError("store: database schema version " + std::to_string(version) +
                       " is newer than this build supports (" + std::to_string(target) + ")");
    for (int v = version; v < target; ++v) db.exec(kSteps[static_cast<size_t>(v)]);
    const std::string violations = foreign_key_violations(db);
    if (!violations.empty())
      throw StoreError("store: migrating the schema from version " + std::to_string(version) + " to " +
                       std::to_string(target) + " would break foreign keys: " + violations);
    db.exec("PRAGMA user_version = " + std::to_string(target));
    tx.commit();
  }
  fk_off.restore();
}

}  // namespace kernelopt::store
