/// \file
/// The engine's version, as set by CMake (project VERSION).
#pragma once

namespace kernelopt::util {
const char* version();
}  // namespace kernelopt::util
