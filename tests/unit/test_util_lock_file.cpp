// Tests for util/lock_file.hpp: one holder at a time, the holder's pid readable by the others, a lock
// released when its holder dies (a child process killed with SIGKILL), a stale pid file taken over.
#include "util/lock_file.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "util/fs.hpp"

namespace fs = std::filesystem;
using kernelopt::util::FileLock;

namespace {

fs::path fresh_dir(const char* name) {
  fs::path dir = fs::temp_directory_path() / ("kernelopt_lock_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST(FileLock, OneHolderAtATimeAndOthersReadItsPid) {
  const fs::path dir = fresh_dir("one");
  const fs::path file = dir / "run.lock";
  EXPECT_FALSE(FileLock::holder(file));  // no file yet
  {
    auto lock = FileLock::try_acquire(file);
    ASSERT_TRUE(lock);
    EXPECT_EQ(kernelopt::util::read_file(file), std::to_string(::getpid()) + "\n");
    long holder = -1;
    EXPECT_FALSE(FileLock::try_acquire(file, &holder));
    EXPECT_EQ(holder, ::getpid());
    EXPECT_EQ(FileLock::holder(file), ::getpid());
  }
  EXPECT_FALSE(FileLock::holder(file));  // released with the object
  EXPECT_TRUE(FileLock::try_acquire(file));
  fs::remove_all(dir);
}

TEST(FileLock, ALockDiesWithItsHolderAndItsStalePidIsOverwritten) {
  const fs::path dir = fresh_dir("dies");
  const fs::path file = dir / "run.lock";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // holds the lock until killed
    auto lock = FileLock::try_acquire(file);
    char ok = lock ? '1' : '0';
    [[maybe_unused]] ssize_t w = ::write(ready[1], &ok, 1);
    for (;;) ::pause();
  }
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, '1');
  long holder = 0;
  EXPECT_FALSE(FileLock::try_acquire(file, &holder));
  EXPECT_EQ(holder, child);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(kernelopt::util::read_file(file), std::to_string(child) + "\n");  // the dead holder's pid stays
  EXPECT_FALSE(FileLock::holder(file));
  auto taken = FileLock::try_acquire(file);
  ASSERT_TRUE(taken);
  EXPECT_EQ(kernelopt::util::read_file(file), std::to_string(::getpid()) + "\n");
  ::close(ready[0]);
  ::close(ready[1]);
  fs::remove_all(dir);
}
