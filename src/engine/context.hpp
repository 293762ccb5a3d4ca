/// \file
/// What every step of a run shares (Context), and the one thing a run needs of a worker
/// (WorkerLink): a request and its reply. In a run the link is a worker process
/// (ProcessWorker over worker::Worker); the unit tests give one that replays recorded
/// replies, so the search and its gates run without a worker.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "agents/llm_session.hpp"
#include "engine/input_kind.hpp"
#include "engine/options.hpp"
#include "store/library.hpp"
#include "store/store.hpp"
#include "worker/worker.hpp"

namespace kernelopt::engine {

/// The worker as the engine asks it: one request, its reply; failures come back as data (worker::Reply).
class WorkerLink {
 public:
  virtual ~WorkerLink() = default;
  /// Sends `op` with `args` and waits up to timeout_ms (< 0 = forever) for its reply.
  virtual worker::Reply request(const std::string& op, const nlohmann::json& args, int timeout_ms) = 0;
};

/// The worker process (worker::Worker) behind a WorkerLink.
class ProcessWorker final : public WorkerLink {
 public:
  explicit ProcessWorker(worker::Worker& worker) : worker_(worker) {}
  worker::Reply request(const std::string& op, const nlohmann::json& args, int timeout_ms) override {
    return worker_.request(op, args, timeout_ms);
  }

 private:
  worker::Worker& worker_;
};

/// What every step of a run shares.
struct Context {
  const OptimizeOptions& options;
  const InputKind& input;    ///< input_kind_named(options.input_kind), chosen once for the run
  WorkerLink& worker;
  store::Store& store;
  std::int64_t run_id = 0;
  std::filesystem::path out;
  nlohmann::json base_args;  ///< problem, device, seeds, input_kind: identifies the captured session
  agents::LlmSession* llm = nullptr;  ///< the LLM agents; null or disabled roles = the offline agents
  bool continuing = false;   ///< this run was started before (resume): reuse what it recorded
  store::Library* library = nullptr;  ///< the kernel library; null = none
  std::map<int, std::map<std::string, std::string>> fingerprints;  ///< module -> kernel -> library fingerprint
  /// When the kernel search's allowance (--search-seconds) is spent; unset = no allowance (or not started).
  std::optional<std::chrono::steady_clock::time_point> search_deadline;

  /// The kernel search's allowance is spent: no further candidate is gated.
  bool search_time_spent() const {
    return search_deadline && std::chrono::steady_clock::now() >= *search_deadline;
  }

  /// A worker request whose failure ends the run (capture, profile): throws
  /// UserError with the worker's one-line message.
  nlohmann::json request(const std::string& op, const nlohmann::json& args);
  /// A worker request whose failure is a verdict, not the end of the run (gates, screening). A request
  /// on several seeds that runs out of the device's memory is asked again on the first seed alone, and
  /// base_args keeps to that seed from then on.
  worker::Reply ask(const std::string& op, const nlohmann::json& args);
  /// The same, waiting up to wait_ms rather than the run's --timeout.
  worker::Reply ask(const std::string& op, const nlohmann::json& args, int wait_ms);
  int timeout_ms() const { return options.request_timeout_s * 1000; }
};

}  // namespace kernelopt::engine
