// Which GPUs a command may use. See gpus.hpp.
#include "engine/gpus.hpp"

#include <chrono>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/optimize.hpp"
#include "util/subprocess.hpp"
#include "util/text.hpp"

namespace kernelopt::engine {

namespace {

using Clock = std::chrono::steady_clock;
using util::trim;

constexpr int kNvidiaSmiTimeoutMs = 30000;  // nvidia-smi -L answers in well under a second

}  // namespace

std::vector<std::string> visible_gpus() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES")) {
    const std::string list = env;
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = list.find(',', start);
      if (end == std::string::npos) end = list.size();
      const std::string entry = trim(list.substr(start, end - start));
      if (!entry.empty() && entry[0] == '-') break;  // CUDA stops at an invalid entry ("-1" hides every GPU)
      if (!entry.empty()) out.push_back(entry);
      start = end + 1;
    }
    return out;
  }
  int count = 0;
  try {
    util::Subprocess smi({"nvidia-smi", "-L"}, {}, "/dev/null");
    smi.close_stdin();
    const auto deadline = Clock::now() + std::chrono::milliseconds(kNvidiaSmiTimeoutMs);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return {};  // a hung nvidia-smi: the destructor kills it
      util::ReadResult r = smi.read_line(static_cast<int>(left));
      if (r.status != util::ReadStatus::line) break;
      if (r.line.rfind("GPU ", 0) == 0) ++count;  // not the "  MIG ..." lines under a GPU
    }
    if (!smi.wait_exit(kNvidiaSmiTimeoutMs) || smi.exit_status() != 0) return {};
  } catch (const std::runtime_error&) {  // not installed
    return {};
  }
  for (int i = 0; i < count; ++i) out.push_back(std::to_string(i));
  return out;
}

int parse_gpus(const std::string& value, int visible) {
  if (value == "all") return visible > 1 ? visible : 1;
  size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || n < 1) {
    throw UserError(fmt::format("--gpus {}: want all or a whole number >= 1", value));
  }
  return n;
}

std::vector<std::string> gpu_ids(int gpus, const std::string& device, const std::vector<std::string>& visible) {
  if (device == "cpu") return std::vector<std::string>(static_cast<size_t>(gpus), "");
  if (gpus == 1) return {""};  // one process: it sees what this one sees
  if (device != "cuda" && device != "cuda:0") {
    throw UserError(fmt::format("--gpus {} with --device {}: each process sees one GPU, as cuda; give --device cuda "
                                "(or choose the GPUs with CUDA_VISIBLE_DEVICES)",
                                gpus, device));
  }
  if (static_cast<int>(visible.size()) < gpus) {
    throw UserError(fmt::format("--gpus {}: {} GPU(s) visible (CUDA_VISIBLE_DEVICES, else nvidia-smi -L)", gpus,
                                visible.size()));
  }
  return {visible.begin(), visible.begin() + gpus};
}

}  // namespace kernelopt::engine
