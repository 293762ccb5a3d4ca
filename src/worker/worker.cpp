// Worker lifecycle (start, handshake, restart) and request/reply matching.
#include "worker/worker.hpp"
#include "worker/protocol.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "util/fs.hpp"
#include "util/subprocess.hpp"

namespace kernelopt::worker {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// `python -m kernelopt.worker` would put the current directory first on sys.path, and a torch.py, triton.py or
// kernelopt.py there would run in the worker. Under -c, sys.path[0] is '' (the current directory): dropped
// before anything is imported (-P would do it, but only from Python 3.11 on), then the package runs as -m runs it.
constexpr const char* kWorkerMain =
    "import sys\n"
    "if sys.path and sys.path[0] == '':\n"
    "    del sys.path[0]\n"
    "import runpy\n"
    "runpy.run_module('kernelopt.worker', run_name='__main__', alter_sys=True)\n";

void set_env(util::EnvVars& env, const std::string& key, const std::string& value) {
  for (auto& kv : env)
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  env.emplace_back(key, value);
}

std::string get_env(const util::EnvVars& env, const std::string& key) {
  for (const auto& [k, v] : env)
    if (k == key) return v;
  const char* value = std::getenv(key.c_str());
  return value ? value : "";
}

std::string str_field(const json& msg, const char* key) {
  auto it = msg.find(key);
  if (it == msg.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// The last few non-empty lines of a log file, joined into one line.
std::string log_tail(const std::string& path, size_t max_lines = 5) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > 4096 ? size - 4096 : 0;
  in.seekg(start);
  std::string text(static_cast<size_t>(size - start), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (end > pos) lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  if (start > 0 && !lines.empty()) lines.erase(lines.begin());  // likely cut mid-line
  if (lines.size() > max_lines) lines.erase(lines.begin(), lines.end() - static_cast<long>(max_lines));
  return fmt::format("{}", fmt::join(lines, " | "));
}

}  // namespace

const char* to_string(Status status) {
  switch (status) {
    case Status::ok: return "ok";
    case Status::error: return "error";
    case Status::timeout: return "timeout";
    case Status::crashed: return "crashed";
  }
  return "unknown";
}

Worker::Worker(WorkerOptions options) : options_(std::move(options)) {}

Worker::~Worker() { stop(); }

int Worker::restarts() const { return starts_ > 0 ? starts_ - 1 : 0; }

int Worker::pid() const { return proc_ ? static_cast<int>(proc_->pid()) : -1; }

std::string Worker::name() const {
  return options_.visible_devices.empty() ? "worker" : fmt::format("worker[gpu {}]", options_.visible_devices);
}

void Worker::stop() {
  if (!proc_) return;
  proc_->close_stdin();  // the server loop ends on EOF
  proc_->wait_exit(500);
  proc_->kill_group();
  proc_.reset();
  handshake_ = json();
}

std::map<std::string, double> phases_from_json(const json& phases_s) {
  std::map<std::string, double> out;
  if (!phases_s.is_object()) return out;
  for (const auto& [phase, seconds] : phases_s.items()) {
    if (seconds.is_number()) out[phase] = seconds.get<double>();
  }
  return out;
}

Reply Worker::request(const std::string& op, const json& args, int timeout_ms) {
  // a request the protocol does not allow is the engine's bug: never sent, never a candidate's verdict
  if (const std::string bad = protocol_violation(op, "args", args); !bad.empty()) {
    throw std::logic_error("worker protocol: " + bad);
  }
  if (proc_ && !proc_->alive()) {  // died while idle
    std::optional<int> status = proc_->exit_status();
    spdlog::debug("{} (pid {}) {} while idle", name(), proc_->pid(),
                  status ? util::describe_exit_status(*status) : "exited");
    stop();
  }
  if (!proc_) {
    const auto started = Clock::now();
    try {
      start();
    } catch (...) {
      add_time("start", started);
      throw;
    }
    add_time("start", started);
  }
  const auto sent = Clock::now();
  Reply reply = exchange(op, args, timeout_ms);
  add_time(op, sent);
  if (reply.ok()) {
    if (const std::string bad = protocol_violation(op, "result", reply.result); !bad.empty()) {
      reply.status = Status::error;
      reply.kind = "protocol";
      reply.error = "worker protocol: " + bad;
    }
  }
  RequestTime& t = request_times_[op];
  t.peak_bytes = std::max(t.peak_bytes, reply.peak_bytes);
  for (const auto& [phase, seconds] : reply.phases) t.phases[phase] += seconds;
  return reply;
}

void Worker::add_time(const std::string& op, std::chrono::steady_clock::time_point since) {
  RequestTime& t = request_times_[op];
  t.requests++;
  t.seconds += std::chrono::duration<double>(Clock::now() - since).count();
}

void Worker::start() {
  util::EnvVars env = options_.env;
  if (!options_.python_path.empty()) {
    std::string existing = get_env(env, "PYTHONPATH");
    set_env(env, "PYTHONPATH", existing.empty() ? options_.python_path
                                                : options_.python_path + ":" + existing);
  }
  if (!options_.visible_devices.empty()) set_env(env, "CUDA_VISIBLE_DEVICES", options_.visible_devices);
  // stderr is a log file: the worker writes each failed op's traceback there (the engine shows one line)
  set_env(env, "KERNELOPT_WORKER_LOG", options_.log_path.empty() ? "0" : "1");
  try {
    if (!options_.log_path.empty()) {
      auto dir = std::filesystem::path(options_.log_path).parent_path();
      if (!dir.empty()) util::ensure_dir(dir);
    }
    proc_ = std::make_unique<util::Subprocess>(std::vector<std::string>{options_.python, "-c", kWorkerMain}, env,
                                               options_.log_path);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}", name(), e.what()));
  }
  if (++starts_ > 1)
    spdlog::warn("{}: starting a fresh worker, pid {} (restart {})", name(), proc_->pid(), starts_ - 1);
  else
    spdlog::debug("{}: started pid {}", name(), proc_->pid());

  Reply hello = exchange("hello", json::object(), options_.handshake_timeout_ms);
  if (!hello.ok()) fail_start(hello.error);
  auto protocol = hello.result.is_object() ? hello.result.find("protocol") : hello.result.end();
  if (protocol == hello.result.end() || *protocol != kProtocolVersion)
    fail_start(fmt::format("worker speaks protocol {}, the engine speaks {}",
                           protocol == hello.result.end() ? "?" : protocol->dump(), kProtocolVersion));
  const std::string schema = hello.result.value("schema", std::string("?"));
  if (schema != protocol_schema_sha256())
    fail_start(fmt::format("the worker's protocol.json (sha256 {}) is not the one this engine was built with ({}): "
                           "rebuild the engine, or give it the python/ directory it was built from",
                           schema.substr(0, 12), protocol_schema_sha256().substr(0, 12)));
  handshake_ = hello.result;
}

void Worker::fail_start(const std::string& why) {
  if (proc_) {
    proc_->kill_group();
    proc_.reset();
  }
  std::string message = fmt::format("{} handshake failed: {}", name(), why);
  if (!options_.log_path.empty())
    if (std::string tail = log_tail(options_.log_path); !tail.empty())
      message += fmt::format(" (stderr: {})", tail);
  throw std::runtime_error(message);
}

Reply Worker::exchange(const std::string& op, const json& args, int timeout_ms) {
  const int id = next_id_++;
  const json request = {{"id", id}, {"op", op}, {"args", args}};
  if (!proc_->write_line(request.dump(-1, ' ', false, json::error_handler_t::replace)))
    return on_death(op);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int left = -1;
    if (timeout_ms >= 0)
      left = static_cast<int>(std::max<long long>(
          0, std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count()));
    util::ReadResult read = proc_->read_line(left);
    if (read.status == util::ReadStatus::timeout) return on_timeout(op, timeout_ms);
    if (read.status == util::ReadStatus::eof) return on_death(op);

    json msg = json::parse(read.line, nullptr, /*allow_exceptions=*/false);
    if (msg.is_discarded() || !msg.is_object()) {
      spdlog::debug("{}: skipping non-protocol line: {}", name(), read.line);
      continue;
    }
    auto rid = msg.find("id");
    auto ok_field = msg.find("ok");
    bool ok = ok_field != msg.end() && ok_field->is_boolean() && ok_field->get<bool>();
    // id null: the worker could not parse our request; it can only be about this one.
    bool ours = rid != msg.end() && (*rid == id || (rid->is_null() && !ok));
    if (!ours) {
      spdlog::debug("{}: skipping reply for another request: {}", name(), read.line);
      continue;
    }
    Reply reply;
    if (auto peak = msg.find("peak_bytes"); peak != msg.end() && peak->is_number()) reply.peak_bytes = peak->get<double>();
    if (auto phases = msg.find("phases_s"); phases != msg.end()) reply.phases = phases_from_json(*phases);
    if (ok) {
      reply.result = msg.contains("result") ? msg["result"] : json();
      return reply;
    }
    reply.status = Status::error;
    reply.error = str_field(msg, "error");
    reply.kind = str_field(msg, "kind");
    reply.traceback = str_field(msg, "traceback");
    return reply;
  }
}

Reply Worker::on_timeout(const std::string& op, int timeout_ms) {
  const int dead_pid = pid();
  proc_->kill_group();
  proc_.reset();
  handshake_ = json();
  Reply reply;
  reply.status = Status::timeout;
  reply.kind = "timeout";
  reply.error = fmt::format("op '{}' timed out after {} ms; {} (pid {}) killed", op, timeout_ms,
                            name(), dead_pid);
  return reply;
}

Reply Worker::on_death(const std::string& op) {
  const int dead_pid = pid();
  proc_->wait_exit(1000);  // stdout closes a moment before the exit status is ready
  std::optional<int> status = proc_->exit_status();
  proc_->kill_group();
  if (!status) status = proc_->exit_status();
  proc_.reset();
  handshake_ = json();
  Reply reply;
  reply.status = Status::crashed;
  reply.kind = "crashed";
  reply.error = fmt::format("{} (pid {}) died during op '{}': {}", name(), dead_pid, op,
                            status ? util::describe_exit_status(*status) : "exit status unknown");
  return reply;
}

}  // namespace kernelopt::worker
