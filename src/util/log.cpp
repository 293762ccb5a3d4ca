// spdlog setup: a stderr sink for people, an optional debug file sink for later.
#include "util/log.hpp"

#include <memory>
#include <vector>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace kernelopt::util {

void setup_logging(bool verbose, const std::string& log_file) {
  auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  console->set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  console->set_pattern("[%H:%M:%S] %v");
  std::vector<spdlog::sink_ptr> sinks{console};
  if (!log_file.empty()) {
    auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_file, /*truncate=*/false);
    file->set_level(spdlog::level::debug);
    file->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
    sinks.push_back(file);
  }
  auto logger = std::make_shared<spdlog::logger>("kernelopt", sinks.begin(), sinks.end());
  logger->set_level(verbose || !log_file.empty() ? spdlog::level::debug : spdlog::level::info);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace kernelopt::util
