#include "util/fs.hpp"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace fs = std::filesystem;
using namespace kernelopt::util;

namespace {
class FsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kernelopt_fs_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};
}  // namespace

TEST_F(FsTest, AtomicWriteThenReadRoundTrips) {
  fs::path file = dir_ / "state.json";
  std::string data("{\"a\": 1}\n\0binary", 16);
  write_file_atomic(file, data);
  EXPECT_EQ(read_file(file), data);
  write_file_atomic(file, "replaced");
  EXPECT_EQ(read_file(file), "replaced");
  // No temporary files are left behind.
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename(), "state.json");
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST_F(FsTest, ReadMissingFileThrowsNamingThePath) {
  fs::path missing = dir_ / "no_such_file.txt";
  try {
    read_file(missing);
    FAIL() << "read_file did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
  }
}

TEST_F(FsTest, AtomicWriteIntoMissingDirectoryThrowsNamingThePath) {
  fs::path target = dir_ / "missing" / "out.txt";
  try {
    write_file_atomic(target, "x");
    FAIL() << "write_file_atomic did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(target.string()), std::string::npos) << e.what();
  }
}

TEST_F(FsTest, EnsureDirCreatesParentsAndIsIdempotent) {
  fs::path nested = dir_ / "a" / "b" / "c";
  ensure_dir(nested);
  EXPECT_TRUE(fs::is_directory(nested));
  EXPECT_NO_THROW(ensure_dir(nested));
  write_file_atomic(dir_ / "plain", "x");
  EXPECT_THROW(ensure_dir(dir_ / "plain"), std::runtime_error);
}
