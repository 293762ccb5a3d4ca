#include "store/sqlite.hpp"

#include <sqlite3.h>

#include <chrono>
#include <thread>
#include <utility>

namespace kernelopt::store {
namespace {

constexpr int kBusyTimeoutMs = 10000;  // waits out another writer's transaction
constexpr int kWalRetryMs = 20;        // between attempts to switch a new store to WAL

[[noreturn]] void throw_error(sqlite3* db, std::string_view what, std::string_view sql) {
  std::string msg = "sqlite: ";
  msg += what;
  msg += ": ";
  msg += db ? sqlite3_errmsg(db) : "out of memory";
  if (!sql.empty()) {
    msg += " [SQL: ";
    msg += sql;
    msg += "]";
  }
  throw StoreError(msg, db ? (sqlite3_errcode(db) & 0xff) : SQLITE_NOMEM);
}

std::string query_text(Database& db, const std::string& sql) {
  Statement st = db.prepare(sql);
  return st.step() ? st.column_text(0) : std::string();
}

}  // namespace

// --- Database ---------------------------------------------------------------

Database Database::open(const std::filesystem::path& path, const std::string& journal_mode) {
  sqlite3* raw = nullptr;
  const std::string name = path.string();
  int rc = sqlite3_open_v2(name.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  Database db(raw);  // owns the handle even when open failed
  if (rc != SQLITE_OK) throw_error(raw, "cannot open database '" + name + "'", "");
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  db.exec("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;");
  // Processes opening a new file at once each switch its journal mode; SQLite answers the loser
  // SQLITE_BUSY at once (it skips the busy handler where waiting could deadlock), so the switch is retried.
  std::string mode;
  for (int waited_ms = 0;; waited_ms += kWalRetryMs) {
    try {
      mode = query_text(db, "PRAGMA journal_mode = " + journal_mode);
      break;
    } catch (const StoreError&) {
      if ((sqlite3_errcode(raw) & 0xff) != SQLITE_BUSY || waited_ms >= kBusyTimeoutMs) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(kWalRetryMs));
    }
  }
  if (name != ":memory:" && mode != journal_mode)
    throw StoreError("sqlite: cannot set journal_mode " + journal_mode + " for '" + name + "' (it is '" + mode + "')");
  return db;
}

Database::Database(Database&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

Database::~Database() { sqlite3_close_v2(db_); }

void Database::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    sqlite3_free(err);  // sqlite3_errmsg carries the same text
    throw_error(db_, "exec failed", sql);
  }
}

Statement Database::prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK)
    throw_error(db_, "prepare failed", sql);
  if (!stmt) throw StoreError("sqlite: empty statement [SQL: " + sql + "]");
  return Statement(stmt);
}

std::int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

int Database::changes() const { return sqlite3_changes(db_); }

// --- Statement --------------------------------------------------------------

Statement::Statement(Statement&& other) noexcept : stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::fail(const char* what) const {
  const char* sql = sqlite3_sql(stmt_);
  throw_error(sqlite3_db_handle(stmt_), what, sql ? sql : "");
}

Statement& Statement::bind(int idx, std::int64_t value) {
  if (sqlite3_bind_int64(stmt_, idx, value) != SQLITE_OK) fail("bind failed");
  return *this;
}

Statement& Statement::bind(int idx, double value) {
  if (sqlite3_bind_double(stmt_, idx, value) != SQLITE_OK) fail("bind failed");
  return *this;
}

Statement& Statement::bind(int idx, std::string_view value) {
  if (sqlite3_bind_text64(stmt_, idx, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8) != SQLITE_OK)
    fail("bind failed");
  return *this;
}

Statement& Statement::bind(int idx, std::nullptr_t) {
  if (sqlite3_bind_null(stmt_, idx) != SQLITE_OK) fail("bind failed");
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail("step failed");
}

void Statement::run() {
  while (step()) {
  }
}

std::int64_t Statement::column_int64(int col) const { return sqlite3_column_int64(stmt_, col); }

double Statement::column_double(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::column_text(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  if (!text) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

bool Statement::column_is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

void Statement::reset() {
  sqlite3_reset(stmt_);  // returns the last step's error, already reported by step()
  sqlite3_clear_bindings(stmt_);
}

// --- Transaction ------------------------------------------------------------

Transaction::Transaction(Database& db) : db_(&db) { db_->exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (done_) return;
  try {
    db_->exec("ROLLBACK");
  } catch (const StoreError&) {
    // The transaction may already be gone (SQLite rolls back on some errors).
  }
}

void Transaction::commit() {
  db_->exec("COMMIT");
  done_ = true;
}

}  // namespace kernelopt::store
