/// \file
/// Content hashes: the engine names artifacts and cache entries by the SHA-256
/// of their bytes, so equal content gets equal keys across runs and machines.
#pragma once

#include <string>
#include <string_view>

namespace kernelopt::util {

/// SHA-256 of data as 64 lowercase hex digits.
std::string sha256_hex(std::string_view data);

}  // namespace kernelopt::util
