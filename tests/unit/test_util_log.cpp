#include "util/log.hpp"

#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "util/fs.hpp"

namespace fs = std::filesystem;

TEST(Logging, FileSinkGetsDebugLinesConsoleLevelStaysInfo) {
  fs::path file = fs::temp_directory_path() / ("kernelopt_log_" + std::to_string(::getpid()) + ".log");
  fs::remove(file);
  kernelopt::util::setup_logging(/*verbose=*/false, file.string());
  spdlog::debug("debug line {}", 42);
  spdlog::info("info line");
  spdlog::default_logger()->flush();
  std::string text = kernelopt::util::read_file(file);
  EXPECT_NE(text.find("debug line 42"), std::string::npos) << text;
  EXPECT_NE(text.find("info line"), std::string::npos) << text;
  EXPECT_EQ(spdlog::default_logger()->sinks().front()->level(), spdlog::level::info);
  kernelopt::util::setup_logging(/*verbose=*/true, "");
  EXPECT_EQ(spdlog::default_logger()->sinks().size(), 1u);
  EXPECT_EQ(spdlog::default_logger()->sinks().front()->level(), spdlog::level::debug);
  fs::remove(file);
}
