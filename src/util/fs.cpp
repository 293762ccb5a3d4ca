// POSIX file I/O, so errors carry errno and the atomic write can fsync.
#include "util/fs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

namespace kernelopt::util {
namespace fs = std::filesystem;
namespace {

std::runtime_error path_error(const char* what, const fs::path& path, int err) {
  return std::runtime_error(fmt::format("{} {}: {}", what, path.string(), std::strerror(err)));
}

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category());
    data.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

std::string read_file(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw path_error("cannot read", path, errno);
  std::string data;
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw path_error("cannot read", path, err);
    }
    if (n == 0) break;
    data.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  return data;
}

void write_file_atomic(const fs::path& path, std::string_view data) {
  static std::atomic<unsigned> counter{0};
  fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  fs::path tmp = dir / fmt::format(".{}.tmp.{}.{}", path.filename().string(), ::getpid(),
                                   counter.fetch_add(1));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw path_error("cannot write", path, errno);
  try {
    write_all(fd, data);
    if (::fsync(fd) != 0) throw std::system_error(errno, std::generic_category());
    if (::close(fd) != 0) {
      fd = -1;
      throw std::system_error(errno, std::generic_category());
    }
    fd = -1;
    if (::rename(tmp.c_str(), path.c_str()) != 0)
      throw std::system_error(errno, std::generic_category());
  } catch (const std::system_error& e) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw path_error("cannot write", path, e.code().value());
  }
  if (int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir_fd >= 0) {
    ::fsync(dir_fd);  // makes the rename durable; best effort
    ::close(dir_fd);
  }
}

void ensure_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw std::runtime_error(fmt::format("cannot create directory {}: {}", dir.string(), ec.message()));
  if (!fs::is_directory(dir, ec))
    throw std::runtime_error(fmt::format("cannot create directory {}: not a directory", dir.string()));
}

}  // namespace kernelopt::util
