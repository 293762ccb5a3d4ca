/// \file
/// Whole-file reads and crash-safe writes. Run state, caches and reports are
/// written with write_file_atomic, so a reader sees the old file or the new
/// one, never a torn one. Errors throw std::runtime_error naming the path.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kernelopt::util {

/// The file's bytes. Throws std::runtime_error ("cannot read <path>: <reason>").
std::string read_file(const std::filesystem::path& path);

/// Replaces path with data: writes a temporary file in the same directory,
/// fsyncs it, renames it over path, then fsyncs the directory. The directory
/// must exist. Throws std::runtime_error naming the path.
void write_file_atomic(const std::filesystem::path& path, std::string_view data);

/// Creates dir and its parents if missing. Throws std::runtime_error if it
/// cannot, or if dir exists but is not a directory.
void ensure_dir(const std::filesystem::path& dir);

}  // namespace kernelopt::util
