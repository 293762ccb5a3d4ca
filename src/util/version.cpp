// The engine's version string, one definition for the CLI and the reports.
#include "util/version.hpp"

namespace kernelopt::util {
const char* version() { return KERNELOPT_VERSION; }
}  // namespace kernelopt::util
