/// \file
/// A thin RAII layer over the SQLite C API, so the store never touches raw
/// handles or return codes. Contract: every failure throws StoreError carrying
/// sqlite3_errmsg and the SQL that failed; handles are closed/finalized exactly
/// once; objects are move-only. A Database opened here uses WAL journaling (unless asked for another mode),
/// a 10 s busy timeout, foreign keys and synchronous=NORMAL, so several
/// connections (processes) may share one file. One connection must not be used
/// from two threads at once.
#pragma once

#include <cstdint>
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace kernelopt::store {

/// Any failure of the store: open, prepare, bind, step, schema, missing rows.
class StoreError : public std::runtime_error {
 public:
  explicit StoreError(const std::string& what, int sqlite_code = 0) : std::runtime_error(what), code_(sqlite_code) {}
  /// SQLite's primary result code of the failure (SQLITE_CORRUPT, SQLITE_NOTADB, ...); 0 = not SQLite's.
  int sqlite_code() const { return code_; }

 private:
  int code_ = 0;
};

class Statement;

/// One connection to one database file.
class Database {
 public:
  /// Opens (creating if absent) the file at `path`, or an in-memory database for
  /// ":memory:". The parent directory must exist. Applies the pragmas above.
  /// journal_mode: "wal" (the run store) or "delete" (a library file shared as one file); the switch is
  /// retried while another process opening the same new file holds it.
  static Database open(const std::filesystem::path& path, const std::string& journal_mode = "wal");

  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  /// Runs one or more statements, discarding any result rows.
  void exec(const std::string& sql);
  /// Compiles one statement.
  Statement prepare(const std::string& sql);
  /// Rowid of the last successful INSERT on this connection.
  std::int64_t last_insert_rowid() const;
  /// Rows changed by the last INSERT/UPDATE/DELETE on this connection.
  int changes() const;

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

/// One prepared statement. Parameter and column indexes follow SQLite:
/// bind() is 1-based, column_*() is 0-based.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& bind(int idx, std::int64_t value);
  Statement& bind(int idx, int value) { return bind(idx, static_cast<std::int64_t>(value)); }
  Statement& bind(int idx, double value);
  Statement& bind(int idx, std::string_view value);  // copied (SQLITE_TRANSIENT)
  Statement& bind(int idx, std::nullptr_t);

  /// Advances; true when a row is available, false when the statement is done.
  bool step();
  /// Steps to completion, for statements that return no rows.
  void run();

  std::int64_t column_int64(int col) const;
  double column_double(int col) const;
  std::string column_text(int col) const;  // "" for NULL
  bool column_is_null(int col) const;

  /// Rewinds so the statement can run again, and clears all bindings.
  void reset();

 private:
  friend class Database;
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  [[noreturn]] void fail(const char* what) const;
  sqlite3_stmt* stmt_ = nullptr;
};

/// BEGIN IMMEDIATE on construction (takes the write lock up front, so two
/// writers wait on busy_timeout instead of deadlocking); COMMIT on commit();
/// ROLLBACK in the destructor if commit() was not reached.
class Transaction {
 public:
  explicit Transaction(Database& db);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  void commit();

 private:
  Database* db_;
  bool done_ = false;
};

}  // namespace kernelopt::store
