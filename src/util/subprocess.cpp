// fork/exec with pipes, a private process group and a parent-death signal.
// Everything the child needs is prepared before fork(); after fork the child
// only makes async-signal-safe calls and reports a failed step through a
// close-on-exec pipe.
#include "util/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace kernelopt::util {
namespace {

using Clock = std::chrono::steady_clock;

std::runtime_error sys_error(const std::string& what) {
  return std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Moves fd to a number >= 3 so dup2() onto 0/1/2 in the child cannot clobber it.
int above_stdio(int fd) {
  if (fd >= 3) return fd;
  int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  if (moved < 0) throw sys_error("fcntl(F_DUPFD_CLOEXEC)");
  return moved;
}

void make_pipe(int& read_end, int& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw sys_error("pipe2");
  read_end = fds[0];
  write_end = fds[1];
}

std::string lookup(const EnvVars& env, const std::string& key) {
  for (const auto& [k, v] : env)
    if (k == key) return v;
  const char* value = std::getenv(key.c_str());
  return value ? value : "";
}

std::string resolve_program(const std::string& name, const std::string& path_env) {
  if (name.find('/') != std::string::npos) return name;
  size_t start = 0;
  while (start <= path_env.size()) {
    size_t end = path_env.find(':', start);
    if (end == std::string::npos) end = path_env.size();
    std::string dir = path_env.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    start = end + 1;
  }
  throw std::runtime_error(fmt::format("cannot start {}: not found in PATH", name));
}

std::vector<std::string> child_environment(const EnvVars& env) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    std::string_view key = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& kv : env) overridden = overridden || kv.first == key;
    if (!overridden) out.emplace_back(entry);
  }
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Steps the child reports when it fails before exec.
enum ChildStep : int { kSetpgid = 1, kPdeathsig, kDup2, kExec };

const char* step_name(int step) {
  switch (step) {
    case kSetpgid: return "setpgid";
    case kPdeathsig: return "prctl(PR_SET_PDEATHSIG)";
    case kDup2: return "dup2";
    default: return "exec";
  }
}

struct ChildSetup {
  pid_t parent;
  int stdin_fd, stdout_fd, stderr_fd, error_fd;  // stderr_fd < 0 = inherit
  const char* program;
  char** argv;
  char** envp;
  sigset_t empty_mask;
};

// Runs in the forked child: async-signal-safe calls only.
[[noreturn]] void run_child(const ChildSetup& s) {
  auto fail = [&](int step) {
    int report[2] = {step, errno};
    ssize_t ignored = ::write(s.error_fd, report, sizeof report);
    (void)ignored;
    ::_exit(127);
  };
  if (::setpgid(0, 0) != 0) fail(kSetpgid);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(kPdeathsig);
  if (::getppid() != s.parent) ::_exit(127);  // the parent died before prctl
  if (::dup2(s.stdin_fd, 0) < 0 || ::dup2(s.stdout_fd, 1) < 0) fail(kDup2);
  if (s.stderr_fd >= 0 && ::dup2(s.stderr_fd, 2) < 0) fail(kDup2);
  ::signal(SIGPIPE, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &s.empty_mask, nullptr);
  ::execve(s.program, s.argv, s.envp);
  fail(kExec);
  ::_exit(127);  // not reached; fail() exits
}

}  // namespace

Subprocess::Subprocess(std::vector<std::string> argv, const EnvVars& env,
                       const std::string& stderr_path) {
  if (argv.empty()) throw std::invalid_argument("Subprocess: empty argv");
  static std::once_flag sigpipe_once;
  std::call_once(sigpipe_once, [] { ::signal(SIGPIPE, SIG_IGN); });

  std::string program = resolve_program(argv[0], lookup(env, "PATH"));
  std::vector<std::string> env_strings = child_environment(env);
  std::vector<char*> c_argv = c_strings(argv);
  std::vector<char*> c_envp = c_strings(env_strings);

  int log_fd = -1;
  if (!stderr_path.empty()) {
    log_fd = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) throw sys_error(fmt::format("cannot open log {}", stderr_path));
  }
  int child_in = -1, child_out = -1, err_read = -1, err_write = -1;
  try {
    make_pipe(child_in, in_fd_);
    make_pipe(out_fd_, child_out);
    make_pipe(err_read, err_write);
    child_in = above_stdio(child_in);
    child_out = above_stdio(child_out);
    err_write = above_stdio(err_write);
    if (log_fd >= 0) log_fd = above_stdio(log_fd);
  } catch (...) {
    for (int* fd : {&log_fd, &child_in, &child_out, &err_read, &err_write, &in_fd_, &out_fd_})
      close_fd(*fd);
    throw;
  }

  ChildSetup setup{::getpid(), child_in, child_out, log_fd, err_write,
                   program.c_str(), c_argv.data(), c_envp.data(), {}};
  sigemptyset(&setup.empty_mask);
  pid_ = ::fork();
  if (pid_ == 0) run_child(setup);
  int fork_errno = errno;
  if (pid_ > 0) ::setpgid(pid_, pid_);  // also from this side, so kill_group works at once
  for (int* fd : {&log_fd, &child_in, &child_out, &err_write}) close_fd(*fd);
  if (pid_ < 0) {
    close_fd(err_read);
    close_fd(in_fd_);
    close_fd(out_fd_);
    errno = fork_errno;
    throw sys_error("fork");
  }

  int report[2] = {0, 0};
  ssize_t n;
  do n = ::read(err_read, report, sizeof report);
  while (n < 0 && errno == EINTR);
  close_fd(err_read);
  if (n == static_cast<ssize_t>(sizeof report)) {  // the child failed before exec
    kill_group();
    close_fd(in_fd_);
    close_fd(out_fd_);
    throw std::runtime_error(fmt::format("cannot start {}: {} failed: {}", argv[0],
                                         step_name(report[0]), std::strerror(report[1])));
  }
}

Subprocess::~Subprocess() {
  kill_group();
  close_fd(in_fd_);
  close_fd(out_fd_);
}

bool Subprocess::write_line(const std::string& line) {
  if (in_fd_ < 0) return false;
  std::string data = line + '\n';
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(in_fd_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // EPIPE: the child closed its stdin or died
    done += static_cast<size_t>(n);
  }
  return true;
}

ReadResult Subprocess::read_line(int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (size_t nl = buffer_.find('\n'); nl != std::string::npos) {
      ReadResult r{ReadStatus::line, buffer_.substr(0, nl)};
      buffer_.erase(0, nl + 1);
      return r;
    }
    if (out_fd_ < 0) {
      if (buffer_.empty()) return {ReadStatus::eof, ""};
      return {ReadStatus::line, std::exchange(buffer_, {})};
    }
    int wait_ms = -1;
    if (timeout_ms >= 0) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      wait_ms = static_cast<int>(std::max<long long>(0, left.count()));
    }
    pollfd pfd{out_fd_, POLLIN, 0};
    int ready = ::poll(&pfd, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw sys_error("poll");
    if (ready == 0) return {ReadStatus::timeout, ""};
    char chunk[65536];
    ssize_t n = ::read(out_fd_, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      close_fd(out_fd_);  // EOF (or a read error, treated alike)
      continue;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

void Subprocess::close_stdin() { close_fd(in_fd_); }

void Subprocess::record_exit(int code, int value) {
  status_ = code == CLD_EXITED ? value : -value;
}

bool Subprocess::alive() {
  if (pid_ <= 0 || status_ || reaped_) return false;
  siginfo_t info{};
  // WNOWAIT leaves the zombie in place: its pid keeps the process group id
  // from being reused, so kill_group() can still signal the group safely.
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    if (errno == EINTR) return true;
    reaped_ = true;  // ECHILD: someone else reaped it
    return false;
  }
  if (info.si_pid != pid_) return true;
  record_exit(info.si_code, info.si_status);
  return false;
}

bool Subprocess::wait_exit(int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (alive()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

void Subprocess::kill_group() {
  if (pid_ <= 0 || reaped_) return;
  if (alive()) {
    ::kill(-pid_, SIGTERM);
    wait_exit(1000);
  }
  ::kill(-pid_, SIGKILL);  // the leader if it ignored SIGTERM, and any stragglers
  ::kill(pid_, SIGKILL);   // safe: unreaped, so pid_ is still ours
  int status = 0;
  pid_t r;
  do r = ::waitpid(pid_, &status, 0);
  while (r < 0 && errno == EINTR);
  if (r == pid_ && !status_)
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  reaped_ = true;
}

std::optional<int> Subprocess::exit_status() {
  alive();
  return status_;
}

std::string describe_exit_status(int status) {
  if (status >= 0) return fmt::format("exited with code {}", status);
  const char* name = ::sigabbrev_np(-status);
  return name ? fmt::format("killed by signal {} (SIG{})", -status, name)
              : fmt::format("killed by signal {}", -status);
}

}  // namespace kernelopt::util
