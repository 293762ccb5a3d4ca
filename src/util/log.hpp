/// \file
/// The engine's one log: spdlog's default logger, set up once by the CLI.
/// Modules just call spdlog::info/debug/warn; this decides where lines go.
#pragma once

#include <string>

namespace kernelopt::util {

/// Points spdlog's default logger at stderr (info, or debug when verbose;
/// pattern "[HH:MM:SS] message") and, when log_file is not empty, also appends
/// to log_file at debug level with full timestamps. Throws spdlog::spdlog_ex if
/// log_file cannot be opened. Call once, before other threads log.
void setup_logging(bool verbose, const std::string& log_file);

}  // namespace kernelopt::util
