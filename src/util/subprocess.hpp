/// \file
/// A child process driven over pipes: how the engine runs helpers (the Python
/// worker) that may hang, crash or outlive it. The child gets its own process
/// group, so one kill reaches everything it started, and a parent-death signal,
/// so it dies with the engine. stdin/stdout are pipes; stderr goes to a log file.
///
/// Contract: not thread-safe (one owner thread). The parent-death signal fires
/// when the *thread* that constructed the Subprocess exits, so construct it on a
/// thread that lives as long as the child should. Constructing the first
/// Subprocess sets SIGPIPE to SIG_IGN for the whole process (the child gets the
/// default back), so a broken pipe is an error value, not a signal.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace kernelopt::util {

/// Environment variables set on top of the parent's environment.
using EnvVars = std::vector<std::pair<std::string, std::string>>;

enum class ReadStatus { line, timeout, eof };

struct ReadResult {
  ReadStatus status = ReadStatus::eof;
  std::string line;  ///< without the trailing '\n'; empty unless status == line
};

class Subprocess {
 public:
  /// Starts argv[0] (searched in PATH when it has no '/'). stderr is appended to
  /// stderr_path ("" = inherit the engine's stderr). Throws std::runtime_error
  /// when the program cannot be started (not found, exec failed, log not writable).
  explicit Subprocess(std::vector<std::string> argv, const EnvVars& env = {},
                      const std::string& stderr_path = "");
  ~Subprocess();  ///< kill_group()
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  /// Writes line + '\n' to the child's stdin; false when the pipe is broken or closed.
  bool write_line(const std::string& line);
  /// Next line from the child's stdout, waiting at most timeout_ms (< 0 = forever).
  /// A final unterminated line is returned as a line before eof.
  ReadResult read_line(int timeout_ms);
  /// Closes the child's stdin (it sees EOF).
  void close_stdin();

  /// True until the child has exited (never reaps, so the group stays addressable).
  bool alive();
  /// Waits up to timeout_ms for the child to exit; true if it has.
  bool wait_exit(int timeout_ms);
  /// SIGTERM to the process group, up to ~1 s for the child to exit, then
  /// SIGKILL to the group (stragglers too) and reap. Idempotent.
  void kill_group();
  /// Exit code, or -N when killed by signal N (as Python's returncode); nullopt while running.
  std::optional<int> exit_status();
  pid_t pid() const { return pid_; }

 private:
  void record_exit(int code, int value);  // from waitid: CLD_* code and status

  pid_t pid_ = -1;
  int in_fd_ = -1;   // child's stdin (we write)
  int out_fd_ = -1;  // child's stdout (we read)
  std::string buffer_;
  std::optional<int> status_;
  bool reaped_ = false;
};

/// "exited with code 3" / "killed by signal 9 (KILL)" for an exit_status() value.
std::string describe_exit_status(int status);

}  // namespace kernelopt::util
