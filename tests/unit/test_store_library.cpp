// Tests for store/library.hpp: entries round trip, the conflict policy, merging, and the
// one-line errors for missing, foreign and damaged files. Real SQLite files in a temp dir.
#include "store/library.hpp"

#include <gtest/gtest.h>

#include <cstdio>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "store/store.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kernelopt::store;

namespace {

class LibraryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("kernelopt-library-" + std::to_string(rd()) + "-" +
            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

LibraryEntry entry(const std::string& fp, const std::string& source, double speedup) {
  LibraryEntry e;
  e.fingerprint = fp;
  e.kernel_name = "triton_poi_fused_add_0";
  e.kind = "pointwise";
  e.input_kind = "inductor";
  e.original_source_hash = "abc";
  e.source = source;
  e.config = {{"XBLOCK", 1024}, {"num_warps", 4}};
  e.origin = "tuner";
  e.speedup = speedup;
  e.ci_low = speedup - 0.1;
  e.ci_high = speedup + 0.1;
  e.device = "NVIDIA H200";
  e.torch_version = "2.11.0";
  e.triton_version = "3.6.0";
  e.run_id = 7;
  e.run_out_dir = "/runs/x";
  e.evidence = {{"gates", {"static", "correctness", "model", "performance"}}};
  return e;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const StoreError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(LibraryTest, ManyProcessesOpeningANewLibraryAtOnceAllGetTheSchema) {
  // two bench runs starting together on a fresh workspace both create WORKSPACE/library.kolib; the
  // loser of the schema creation must wait for it, not fail with "database is locked"
  for (int round = 0; round < 20; ++round) {
    const fs::path path = dir_ / ("new-" + std::to_string(round) + ".kolib");
    std::vector<pid_t> children;
    for (int c = 0; c < 6; ++c) {
      const pid_t pid = ::fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        int code = 0;
        try {
          Library lib = Library::open(path);
          code = lib.entries().empty() ? 0 : 1;
        } catch (const std::exception& e) {
          std::fprintf(stderr, "child: %s\n", e.what());  // the reason, when the assertion below fails
          code = 2;
        }
        ::_exit(code);
      }
      children.push_back(pid);
    }
    for (pid_t pid : children) {
      int status = 0;
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round << ": status " << status;
    }
  }
}

TEST_F(LibraryTest, EntryRoundTripsThroughTheFile) {
  {
    auto lib = Library::open(dir_ / "a.kolib");
    EXPECT_EQ(lib.put(entry("f00dfeed01", "def k(): pass\n", 1.5)), PutResult::added);
  }
  auto lib = Library::open_existing(dir_ / "a.kolib");
  auto e = lib.find("f00dfeed01");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kernel_name, "triton_poi_fused_add_0");
  EXPECT_EQ(e->source, "def k(): pass\n");
  EXPECT_EQ(e->source_hash.size(), 64u);  // filled by put()
  EXPECT_EQ(e->config["XBLOCK"], 1024);
  EXPECT_DOUBLE_EQ(e->speedup, 1.5);
  EXPECT_EQ(e->device, "NVIDIA H200");
  EXPECT_FALSE(e->created_at.empty());
  EXPECT_EQ(e->evidence["gates"].size(), 4u);
  EXPECT_FALSE(lib.find("other").has_value());
  // by id and by a unique fingerprint prefix
  ASSERT_TRUE(lib.get(std::to_string(e->id)).has_value());
  ASSERT_TRUE(lib.get("f00dfe").has_value());
  EXPECT_FALSE(lib.get("f00d").has_value());  // too short to be a prefix, not an id
  EXPECT_FALSE(lib.get("99").has_value());
}

TEST_F(LibraryTest, OneEntryPerFingerprintTheFasterWinnerStays) {
  auto lib = Library::open(dir_ / "a.kolib");
  ASSERT_EQ(lib.put(entry("fp1", "A", 1.5)), PutResult::added);
  EXPECT_EQ(lib.put(entry("fp1", "A", 9.0)), PutResult::unchanged);  // same source: nothing to decide
  std::string conflict;
  EXPECT_EQ(lib.put(entry("fp1", "B", 1.2), &conflict), PutResult::kept_existing);
  EXPECT_NE(conflict.find("existing"), std::string::npos) << conflict;
  EXPECT_EQ(lib.find("fp1")->source, "A");
  conflict.clear();
  EXPECT_EQ(lib.put(entry("fp1", "C", 2.0), &conflict), PutResult::replaced);
  EXPECT_NE(conflict.find("incoming"), std::string::npos) << conflict;
  EXPECT_EQ(lib.find("fp1")->source, "C");
  EXPECT_EQ(lib.put(entry("fp1", "D", 2.0)), PutResult::kept_existing);  // a tie keeps what is there
  EXPECT_EQ(lib.entries().size(), 1u);
}

TEST_F(LibraryTest, MergeReportsEveryDecision) {
  auto mine = Library::open(dir_ / "mine.kolib");
  mine.put(entry("same", "S", 1.3));
  mine.put(entry("slow_here", "old", 1.1));
  mine.put(entry("fast_here", "keep", 3.0));
  auto theirs = Library::open(dir_ / "theirs.kolib");
  theirs.put(entry("same", "S", 1.3));
  theirs.put(entry("slow_here", "new", 1.8));
  theirs.put(entry("fast_here", "lose", 1.4));
  theirs.put(entry("new_one", "N", 1.2));
  MergeReport r = mine.merge_from(theirs);
  EXPECT_EQ(r.added, 1);
  EXPECT_EQ(r.replaced, 1);
  EXPECT_EQ(r.kept_existing, 1);
  EXPECT_EQ(r.unchanged, 1);
  EXPECT_EQ(r.conflicts.size(), 2u);
  EXPECT_EQ(mine.find("slow_here")->source, "new");
  EXPECT_EQ(mine.find("fast_here")->source, "keep");
  EXPECT_EQ(mine.entries().size(), 4u);
  EXPECT_EQ(theirs.entries().size(), 4u);  // the source of a merge is only read
}

TEST_F(LibraryTest, TheFileAloneIsTheLibrary) {
  {
    auto lib = Library::open(dir_ / "share.kolib");
    lib.put(entry("fp", "X", 1.5));
  }
  // no WAL companions: copying the one file shares the whole library
  EXPECT_FALSE(fs::exists(dir_ / "share.kolib-wal"));
  fs::copy_file(dir_ / "share.kolib", dir_ / "copy.kolib");
  EXPECT_TRUE(Library::open_existing(dir_ / "copy.kolib").find("fp").has_value());
}

TEST_F(LibraryTest, MissingForeignAndDamagedFilesAreOneLineErrors) {
  const auto missing = message_of([&] { Library::open_existing(dir_ / "nope.kolib"); });
  EXPECT_NE(missing.find("nope.kolib: no such library file"), std::string::npos) << missing;

  std::ofstream(dir_ / "text.kolib") << "this is not a database, just text that is long enough to be a header....";
  const auto text = message_of([&] { Library::open_existing(dir_ / "text.kolib"); });
  EXPECT_NE(text.find("text.kolib: not a kernelopt library file"), std::string::npos) << text;

  { Store::open(dir_ / "store.db"); }  // a kernelopt store is SQLite too, but not a library
  const auto store = message_of([&] { Library::open_existing(dir_ / "store.db"); });
  EXPECT_NE(store.find("store.db: not a kernelopt library file"), std::string::npos) << store;
  {  // refused from its header alone: the store was not opened, so it is still in WAL mode (header bytes 18-19)
    std::ifstream in(dir_ / "store.db", std::ios::binary);
    char h[20] = {};
    in.read(h, sizeof h);
    EXPECT_EQ(h[18], 2);
    EXPECT_EQ(h[19], 2);
  }

  std::ofstream(dir_ / "empty.kolib").close();
  const auto empty = message_of([&] { Library::open_existing(dir_ / "empty.kolib"); });
  EXPECT_NE(empty.find("not a kernelopt library file"), std::string::npos) << empty;

  const auto no_dir = message_of([&] { Library::open(dir_ / "no" / "such" / "x.kolib"); });
  EXPECT_NE(no_dir.find("does not exist"), std::string::npos) << no_dir;
  for (const auto& m : {missing, text, store, empty, no_dir}) EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}

TEST_F(LibraryTest, RefusesAnEntryWithoutFingerprintOrWithANonFiniteSpeedup) {
  auto lib = Library::open(dir_ / "a.kolib");
  EXPECT_THROW(lib.put(entry("", "X", 1.5)), StoreError);
  EXPECT_THROW(lib.put(entry("fp", "X", std::nan(""))), StoreError);
  EXPECT_TRUE(lib.entries().empty());
}

}  // namespace

namespace {

TEST_F(LibraryTest, AStoredWinnerThatFailedTheGatesIsSupersededWhateverItsSpeedup) {
  auto lib = Library::open(dir_ / "a.kolib");
  lib.put(entry("fp", "corrupt", 9.0));
  std::string conflict;
  EXPECT_EQ(lib.put(entry("fp", "good", 1.2), &conflict, /*supersede=*/true), PutResult::replaced);
  EXPECT_NE(conflict.find("failed this run's gates"), std::string::npos) << conflict;
  EXPECT_EQ(lib.find("fp")->source, "good");
}

}  // namespace
