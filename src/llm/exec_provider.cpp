// Runs the command through util::Subprocess. The request is written from a
// second thread while this one reads stdout, so a command that answers before
// it has read all of a large prompt cannot deadlock on full pipes.
#include "llm/exec_provider.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "util/subprocess.hpp"

namespace kernelopt::llm {
namespace {

using Clock = std::chrono::steady_clock;

// An answer is text a model wrote; anything this large is a runaway command.
constexpr size_t kMaxAnswerBytes = 64u << 20;
// Longer timeouts (about 115 days) are treated as this, so time arithmetic cannot overflow.
constexpr double kMaxTimeoutS = 1e7;

}  // namespace

ExecProvider::ExecProvider(const ProviderSpec& spec) : spec_(spec), limit_(spec.max_concurrency) {}

ChatResponse ExecProvider::complete(const ChatRequest& request) {
  ConcurrencyLimit::Slot slot = limit_.acquire();
  const bool limited = spec_.timeout_s > 0;
  const std::chrono::duration<double> timeout(limited ? std::min(spec_.timeout_s, kMaxTimeoutS) : 0);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout);
  auto ms_left = [&]() -> int {
    if (!limited) return -1;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
  };

  const std::string prompt = canonical_request(request);
  spdlog::debug("{}: running ({} bytes on stdin)", name(), prompt.size());
  std::optional<util::Subprocess> child;
  try {
    child.emplace(std::vector<std::string>{"/bin/sh", "-c", spec_.target});
  } catch (const std::exception& e) {
    throw ProviderError(fmt::format("{}: {}", name(), e.what()));
  }
  // Writes then closes stdin; a child that exits without reading makes the
  // write fail with EPIPE, which is not an error here (its exit status says).
  std::thread writer([&] {
    child->write_line(prompt);
    child->close_stdin();
  });
  // Whatever happens below, the writer must be released (by killing the child
  // if it still runs) and joined before `child` and `writer` go away.
  struct Join {
    util::Subprocess& child;
    std::thread& writer;
    ~Join() {
      if (writer.joinable()) {
        child.kill_group();
        writer.join();
      }
    }
  } join{*child, writer};

  std::string out;
  bool timed_out = false, too_large = false;
  for (bool first = true;; first = false) {
    util::ReadResult r = child->read_line(ms_left());
    if (r.status == util::ReadStatus::timeout) {
      timed_out = true;
      break;
    }
    if (r.status == util::ReadStatus::eof) break;
    if (!first) out += '\n';
    out += r.line;
    if (out.size() > kMaxAnswerBytes) {
      too_large = true;
      break;
    }
  }
  // stdout is closed; the command may still be finishing (or have handed stdout on).
  constexpr int kForever = 1 << 30;  // ms, about 12 days
  if (!timed_out && !too_large && !child->wait_exit(limited ? ms_left() : kForever)) timed_out = true;
  // Done or overdue: the group goes (the command itself if it still runs, and
  // anything it left in the background, which could hold stdin and keep the
  // write blocked); an exit status already seen is kept.
  child->kill_group();
  writer.join();

  if (timed_out)
    throw ProviderError(fmt::format("{}: no answer within {} s; the command was killed", name(), spec_.timeout_s));
  if (too_large)
    throw ProviderError(fmt::format("{}: answer larger than {} MiB; the command was killed", name(),
                                    kMaxAnswerBytes >> 20));
  const int status = child->exit_status().value_or(-1);
  if (status != 0)
    throw ProviderError(fmt::format("{}: command {}", name(), util::describe_exit_status(status)));

  ChatResponse response;
  response.text = std::move(out);
  response.model = request.model;
  response.provider = name();
  return response;
}

}  // namespace kernelopt::llm
