// Tests for store/sqlite.hpp: the RAII wrapper over the SQLite C API.
#include "store/sqlite.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace fs = std::filesystem;
using kernelopt::store::Database;
using kernelopt::store::Statement;
using kernelopt::store::StoreError;
using kernelopt::store::Transaction;

namespace {

// A fresh directory under the system temp dir, removed afterwards.
class SqliteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("kernelopt-sqlite-" + std::to_string(rd()) + "-" +
            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path db_path() const { return dir_ / "test.db"; }

  static std::int64_t count(Database& db, const std::string& table) {
    Statement st = db.prepare("SELECT COUNT(*) FROM " + table);
    EXPECT_TRUE(st.step());
    return st.column_int64(0);
  }

  fs::path dir_;
};

TEST_F(SqliteTest, OpenAppliesPragmas) {
  Database db = Database::open(db_path());
  auto pragma = [&](const std::string& name) {
    Statement st = db.prepare("PRAGMA " + name);
    EXPECT_TRUE(st.step());
    return st.column_text(0);
  };
  EXPECT_EQ(pragma("journal_mode"), "wal");
  EXPECT_EQ(pragma("foreign_keys"), "1");
  EXPECT_EQ(pragma("busy_timeout"), "10000");
  EXPECT_EQ(pragma("synchronous"), "1");  // NORMAL
}

TEST_F(SqliteTest, ManyProcessesOpeningANewFileAtOnceAllGetItsJournalMode) {
  // runs starting together on a fresh workspace: each process switches the new file's journal mode (the
  // store to WAL, the kernel library to DELETE), and none may fail with "database is locked" (file locks
  // are per process, so these are processes, not threads)
  for (const std::string mode : {"wal", "delete"}) {
    for (int round = 0; round < 20; ++round) {
      const fs::path path = dir_ / ("new-" + mode + "-" + std::to_string(round) + ".db");
      std::vector<pid_t> children;
      for (int c = 0; c < 6; ++c) {
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
          int code = 0;
          try {
            Database db = Database::open(path, mode);
            Statement st = db.prepare("PRAGMA journal_mode");
            code = st.step() && st.column_text(0) == mode ? 0 : 1;
          } catch (const StoreError&) {
            code = 2;
          }
          ::_exit(code);
        }
        children.push_back(pid);
      }
      for (pid_t pid : children) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
            << mode << " round " << round << ": status " << status;
      }
    }
  }
}

TEST_F(SqliteTest, BindsAndReadsEveryType) {
  Database db = Database::open(db_path());
  db.exec("CREATE TABLE t(i INTEGER, d REAL, s TEXT, n TEXT)");
  const std::string text("a'b\0c", 5);  // quote and embedded NUL survive binding
  Statement ins = db.prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4)");
  ins.bind(1, std::int64_t{1} << 40).bind(2, 2.5).bind(3, text).bind(4, nullptr);
  EXPECT_FALSE(ins.step());
  EXPECT_EQ(db.changes(), 1);
  EXPECT_EQ(db.last_insert_rowid(), 1);

  Statement sel = db.prepare("SELECT i, d, s, n FROM t");
  ASSERT_TRUE(sel.step());
  EXPECT_EQ(sel.column_int64(0), std::int64_t{1} << 40);
  EXPECT_DOUBLE_EQ(sel.column_double(1), 2.5);
  EXPECT_EQ(sel.column_text(2), text);
  EXPECT_FALSE(sel.column_is_null(2));
  EXPECT_TRUE(sel.column_is_null(3));
  EXPECT_EQ(sel.column_text(3), "");
  EXPECT_FALSE(sel.step());
}

TEST_F(SqliteTest, ResetAllowsRerunWithNewBindings) {
  Database db = Database::open(db_path());
  db.exec("CREATE TABLE t(x INTEGER)");
  Statement ins = db.prepare("INSERT INTO t VALUES (?1)");
  for (int i = 0; i < 3; ++i) {
    ins.bind(1, i * 10).run();
    ins.reset();
  }
  Statement sum = db.prepare("SELECT SUM(x) FROM t");
  ASSERT_TRUE(sum.step());
  EXPECT_EQ(sum.column_int64(0), 30);
}

TEST_F(SqliteTest, ErrorsCarryMessageAndSql) {
  Database db = Database::open(db_path());
  try {
    db.prepare("SELEC nonsense");
    FAIL() << "prepare of invalid SQL did not throw";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("SELEC nonsense"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("syntax error"), std::string::npos) << e.what();
  }
  db.exec("CREATE TABLE u(x INTEGER UNIQUE)");
  db.exec("INSERT INTO u VALUES (1)");
  Statement dup = db.prepare("INSERT INTO u VALUES (1)");
  try {
    dup.step();
    FAIL() << "duplicate insert did not throw";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("UNIQUE"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("INSERT INTO u"), std::string::npos) << e.what();
  }
}

TEST_F(SqliteTest, TransactionCommits) {
  Database db = Database::open(db_path());
  db.exec("CREATE TABLE t(x INTEGER)");
  {
    Transaction tx(db);
    db.exec("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2);");
    tx.commit();
  }
  EXPECT_EQ(count(db, "t"), 2);
}

TEST_F(SqliteTest, TransactionRollsBackOnException) {
  Database db = Database::open(db_path());
  db.exec("CREATE TABLE t(x INTEGER)");
  EXPECT_THROW(
      {
        Transaction tx(db);
        db.exec("INSERT INTO t VALUES (1)");
        db.exec("INSERT INTO t VALUES (2)");
        throw std::runtime_error("interrupted before commit");
      },
      std::runtime_error);
  EXPECT_EQ(count(db, "t"), 0);
  // The connection is usable afterwards (no transaction left open).
  Transaction again(db);
  db.exec("INSERT INTO t VALUES (3)");
  again.commit();
  EXPECT_EQ(count(db, "t"), 1);
}

TEST_F(SqliteTest, OpenInMissingDirectoryThrows) {
  const fs::path bad = dir_ / "no-such-dir" / "x.db";
  try {
    Database::open(bad);
    FAIL() << "open did not throw";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find(bad.string()), std::string::npos) << e.what();
  }
}

TEST_F(SqliteTest, MovedDatabaseStaysUsable) {
  static_assert(std::is_nothrow_move_constructible_v<Database>);
  static_assert(!std::is_copy_constructible_v<Database>);
  Database a = Database::open(db_path());
  Database b = std::move(a);
  b.exec("CREATE TABLE t(x INTEGER); INSERT INTO t VALUES (7);");
  EXPECT_EQ(count(b, "t"), 1);
}

}  // namespace
