// flock(2) on a file holding the holder's pid. See lock_file.hpp.
#include "util/lock_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include <fmt/format.h>

namespace kernelopt::util {
namespace {

constexpr int kPidReadTries = 50;  // a new holder writes its pid just after taking the lock: wait up to ~0.5 s
constexpr auto kPidReadPause = std::chrono::milliseconds(10);

/// The pid written in the file of fd; 0 while none is there.
long read_pid(int fd) {
  for (int i = 0; i < kPidReadTries; ++i) {
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    if (n > 0) {
      const long pid = std::strtol(buf, nullptr, 10);
      if (pid > 0) return pid;
    }
    std::this_thread::sleep_for(kPidReadPause);
  }
  return 0;
}

}  // namespace

std::optional<FileLock> FileLock::try_acquire(const std::filesystem::path& path, long* holder) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK && holder) *holder = read_pid(fd);
    ::close(fd);
    if (err == EWOULDBLOCK) return std::nullopt;
    throw std::runtime_error(fmt::format("cannot lock {}: {}", path.string(), std::strerror(err)));
  }
  FileLock lock(fd);
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
  }
  return lock;
}

std::optional<long> FileLock::holder(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<long> pid;
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    ::flock(fd, LOCK_UN);
  } else if (errno == EWOULDBLOCK) {
    pid = read_pid(fd);
  }
  ::close(fd);
  return pid;
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor of the open file releases the flock
}

}  // namespace kernelopt::util
