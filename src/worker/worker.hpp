/// \file
/// The engine's client for the Python worker (kernelopt.worker.server, started so that
/// nothing is imported from the current directory),
/// the only process that touches PyTorch/Triton. One request at a time over
/// JSON lines (protocol: python/kernelopt/worker/server.py). Failures come back
/// as data: an op that raises is Status::error; a hang or a dead worker is
/// Status::timeout/crashed, after which the worker's process group is gone and
/// the next request starts a fresh worker. Only a failed start or handshake throws.
///
/// Contract: a Worker is not thread-safe; drive each one from one thread, and
/// start it on a thread that outlives it (the worker gets SIGKILL when the
/// thread that started it exits; see util/subprocess.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernelopt::util {
class Subprocess;
}

namespace kernelopt::worker {

/// The protocol version this engine speaks (server.py's PROTOCOL_VERSION).
inline constexpr int kProtocolVersion = 2;

struct WorkerOptions {
  std::string python = "python3";                         ///< interpreter
  std::string python_path;                                ///< prepended to PYTHONPATH (the repo's python/ dir)
  std::vector<std::pair<std::string, std::string>> env;  ///< extra environment
  std::string log_path;                                   ///< worker stderr appended here; "" = inherit
  int handshake_timeout_ms = 120000;                      ///< first import of torch can be slow
  std::string visible_devices;                            ///< CUDA_VISIBLE_DEVICES for this worker; "" = inherit
};

enum class Status { ok, error, timeout, crashed };
const char* to_string(Status status);

struct Reply {
  Status status = Status::ok;
  nlohmann::json result;  ///< the op's result when ok
  std::string error;      ///< one-line message otherwise
  std::string kind;       ///< worker's error kind ("exception", "protocol", ...) or "timeout"/"crashed"
  std::string traceback;  ///< worker traceback if any
  double peak_bytes = -1; ///< the op's peak device memory (max_memory_allocated, reset per op); -1 = not measured
  std::map<std::string, double> phases;  ///< where the op's time went: its named phases' own seconds ("phases_s")
  bool ok() const { return status == Status::ok; }
};

/// A reply's or a record's "phases_s" ({phase: seconds}) as a map; entries that are not numbers are left out,
/// and anything but an object gives an empty map.
std::map<std::string, double> phases_from_json(const nlohmann::json& phases_s);

/// Time spent in one kind of request, from the engine's side (send to reply, or to the timeout or death).
struct RequestTime {
  int requests = 0;    ///< requests of this op, failed ones included
  double seconds = 0;  ///< their wall time together, s
  double peak_bytes = -1;  ///< the largest peak device memory of one of them, bytes; -1 = not measured (CPU)
  std::map<std::string, double> phases;  ///< their phases' seconds, summed (the worker's phases_s)
};

class Worker {
 public:
  explicit Worker(WorkerOptions options);  ///< starts nothing yet
  ~Worker();                               ///< stop()
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// Sends one request and waits up to timeout_ms (< 0 = forever) for its reply.
  /// Starts the worker and handshakes if it is not running. On timeout or death
  /// the process group is killed and the Reply says timeout/crashed (crashed
  /// names the exit code or signal). Throws std::runtime_error (one line, with
  /// the last stderr lines when log_path is set) if the worker cannot start or
  /// fails the handshake.
  Reply request(const std::string& op, const nlohmann::json& args, int timeout_ms);
  /// Closes the worker's stdin, gives it a moment to exit, then kills its group.
  void stop();
  int restarts() const;  ///< how many times a fresh worker was started after the first
  int pid() const;       ///< current worker pid or -1
  /// Per op name, the requests made through this Worker and their time, across restarts; "start" is the
  /// time spent starting workers and their handshakes (importing torch), not a request of the protocol.
  const std::map<std::string, RequestTime>& request_times() const { return request_times_; }
  /// The current worker's "hello" result ({"protocol", "pid", "python"}); null before start.
  const nlohmann::json& handshake() const { return handshake_; }

 private:
  void start();
  Reply exchange(const std::string& op, const nlohmann::json& args, int timeout_ms);
  void add_time(const std::string& op, std::chrono::steady_clock::time_point since);
  Reply on_timeout(const std::string& op, int timeout_ms);
  Reply on_death(const std::string& op);
  [[noreturn]] void fail_start(const std::string& why);
  std::string name() const;

  WorkerOptions options_;
  std::unique_ptr<util::Subprocess> proc_;
  nlohmann::json handshake_;
  int next_id_ = 1;
  int starts_ = 0;
  std::map<std::string, RequestTime> request_times_;
};

}  // namespace kernelopt::worker
