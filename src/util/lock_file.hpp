/// \file
/// An exclusive lock on a file (flock), held by one process, with the holder's pid written in the
/// file: how a run directory says that a live run is using it. The kernel drops the lock when the
/// holder exits, however it exits (SIGKILL included), so the lock of a killed process is free to take;
/// its pid stays in the file until the next holder writes its own.
///
/// Contract: the descriptor is close-on-exec (a worker the holder starts does not keep the lock);
/// within one process, a second try on the same file fails like another process's would.
#pragma once

#include <filesystem>
#include <optional>

namespace kernelopt::util {

class FileLock {
 public:
  /// Takes the lock on path (the file is created if absent) without waiting, and writes this process's
  /// pid into it. nullopt when another holder has it; *holder (if given) then gets the pid written in
  /// the file (0 when none could be read). Throws std::runtime_error naming the path when the file
  /// cannot be opened or created.
  static std::optional<FileLock> try_acquire(const std::filesystem::path& path, long* holder = nullptr);
  /// The pid of the process holding the lock on path (0 if its pid could not be read); nullopt when the
  /// file does not exist or nobody holds it. Writes nothing.
  static std::optional<long> holder(const std::filesystem::path& path);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();  ///< releases the lock

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace kernelopt::util
