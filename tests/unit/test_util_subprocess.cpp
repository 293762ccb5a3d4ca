#include "util/subprocess.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "util/fs.hpp"

using namespace kernelopt::util;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

Subprocess shell(const std::string& script, const EnvVars& env = {}, const std::string& log = "") {
  return Subprocess({"/bin/sh", "-c", script}, env, log);
}

// Gone, or a zombie nobody reaps (orphans go to a PID 1 that may not reap).
bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

bool wait_gone(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (!process_gone(pid)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

}  // namespace

// Guaranteed copy elision lets shell() return a non-movable Subprocess.
TEST(Subprocess, WriteLineReadLineRoundTrip) {
  Subprocess p = shell("read x; echo \"got $x\"; read y; echo \"got $y\"");
  ASSERT_TRUE(p.write_line("one"));
  ReadResult r = p.read_line(5000);
  ASSERT_EQ(r.status, ReadStatus::line);
  EXPECT_EQ(r.line, "got one");
  ASSERT_TRUE(p.write_line("two"));
  EXPECT_EQ(p.read_line(5000).line, "got two");
  EXPECT_EQ(p.read_line(5000).status, ReadStatus::eof);
  EXPECT_TRUE(p.wait_exit(5000));
  EXPECT_EQ(p.exit_status(), 0);
}

TEST(Subprocess, ReadLineTimesOutWithoutOutput) {
  Subprocess p = shell("sleep 30");
  const auto start = Clock::now();
  ReadResult r = p.read_line(200);
  const auto elapsed = Clock::now() - start;
  EXPECT_EQ(r.status, ReadStatus::timeout);
  EXPECT_GE(elapsed, 200ms);
  EXPECT_LT(elapsed, 2s);
  EXPECT_TRUE(p.alive());
}

TEST(Subprocess, EofAndExitCode) {
  Subprocess p = shell("printf 'partial'; exit 7");
  ReadResult r = p.read_line(5000);
  EXPECT_EQ(r.status, ReadStatus::line);  // an unterminated last line still arrives
  EXPECT_EQ(r.line, "partial");
  EXPECT_EQ(p.read_line(5000).status, ReadStatus::eof);
  ASSERT_TRUE(p.wait_exit(5000));
  EXPECT_FALSE(p.alive());
  EXPECT_EQ(p.exit_status(), 7);
  EXPECT_EQ(describe_exit_status(7), "exited with code 7");
}

TEST(Subprocess, EnvironmentIsParentPlusOverrides) {
  ::setenv("KERNELOPT_TEST_PARENT", "from-parent", 1);
  ::setenv("KERNELOPT_TEST_OVERRIDE", "old", 1);
  Subprocess p = shell("echo \"$KERNELOPT_TEST_PARENT|$KERNELOPT_TEST_OVERRIDE|$KERNELOPT_TEST_NEW\"",
                       {{"KERNELOPT_TEST_OVERRIDE", "new"}, {"KERNELOPT_TEST_NEW", "a b"}});
  EXPECT_EQ(p.read_line(5000).line, "from-parent|new|a b");
}

TEST(Subprocess, StderrIsAppendedToLogFile) {
  std::filesystem::path log =
      std::filesystem::temp_directory_path() / ("kernelopt_sp_" + std::to_string(::getpid()) + ".log");
  write_file_atomic(log, "earlier\n");
  {
    Subprocess p = shell("echo oops >&2; echo done", {}, log.string());
    EXPECT_EQ(p.read_line(5000).line, "done");  // stdout stays separate
    EXPECT_EQ(p.read_line(5000).status, ReadStatus::eof);
  }
  EXPECT_EQ(read_file(log), "earlier\noops\n");
  std::filesystem::remove(log);
}

TEST(Subprocess, MissingProgramThrows) {
  EXPECT_THROW(Subprocess({"kernelopt-no-such-program"}), std::runtime_error);
  EXPECT_THROW(Subprocess({"/nonexistent/bin/tool"}), std::runtime_error);
}

TEST(Subprocess, WriteToExitedChildReturnsFalse) {
  Subprocess p = shell("exec 0<&-; exit 0");
  ASSERT_TRUE(p.wait_exit(5000));
  EXPECT_FALSE(p.write_line("anyone there?"));  // EPIPE, and SIGPIPE does not kill the test
}

TEST(Subprocess, KillGroupReachesGrandchildren) {
  Subprocess p = shell("sleep 60 & echo $!; wait");
  ReadResult r = p.read_line(5000);
  ASSERT_EQ(r.status, ReadStatus::line);
  const pid_t grandchild = std::stoi(r.line);
  ASSERT_FALSE(process_gone(grandchild));
  p.kill_group();
  EXPECT_FALSE(p.alive());
  EXPECT_TRUE(process_gone(p.pid()));
  EXPECT_TRUE(wait_gone(grandchild, 5s));
  EXPECT_EQ(p.exit_status(), -SIGTERM);
}

TEST(Subprocess, KillGroupEscalatesToSigkill) {
  Subprocess p = shell("trap '' TERM; echo ready; while :; do sleep 1; done");
  ASSERT_EQ(p.read_line(5000).line, "ready");
  p.kill_group();
  EXPECT_EQ(p.exit_status(), -SIGKILL);
  EXPECT_TRUE(process_gone(p.pid()));
  EXPECT_EQ(describe_exit_status(-SIGKILL), "killed by signal 9 (SIGKILL)");
}

TEST(Subprocess, OwnProcessGroup) {
  Subprocess p = shell("sleep 30");
  EXPECT_EQ(::getpgid(p.pid()), p.pid());
  EXPECT_NE(::getpgid(p.pid()), ::getpgrp());
}
