// Runs the real Python worker (python/kernelopt/worker) with its test ops enabled.
#include "worker/worker.hpp"
#include "worker/protocol.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

using namespace kernelopt::worker;
using namespace std::chrono_literals;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

WorkerOptions test_options() {
  WorkerOptions options;
  if (const char* python = std::getenv("KERNELOPT_PYTHON")) options.python = python;
  options.python_path = KERNELOPT_SOURCE_DIR "/python";
  options.env = {{"KERNELOPT_WORKER_TEST_OPS", "1"}};
  options.handshake_timeout_ms = 30000;
  return options;
}

// Gone, or a zombie nobody reaps (orphans go to a PID 1 that may not reap).
bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

bool wait_gone(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (!process_gone(pid)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

}  // namespace

TEST(Worker, HandshakeAndEchoRoundTrip) {
  Worker worker(test_options());
  EXPECT_EQ(worker.pid(), -1);
  json args = {{"n", 3}, {"text", "héllo\nworld"}, {"list", {1, 2.5, nullptr}}};
  Reply reply = worker.request("echo", args, 10000);
  ASSERT_TRUE(reply.ok()) << reply.error;
  EXPECT_EQ(reply.result, json({{"echo", args}}));
  EXPECT_EQ(worker.handshake().at("protocol"), kProtocolVersion);
  EXPECT_EQ(worker.handshake().at("pid"), worker.pid());  // we track the process we talk to
  EXPECT_EQ(worker.restarts(), 0);
  worker.stop();
  EXPECT_EQ(worker.pid(), -1);
}

TEST(Worker, OpErrorIsDataAndWorkerStaysUp) {
  Worker worker(test_options());
  ASSERT_TRUE(worker.request("echo", json::object(), 10000).ok());
  const int pid = worker.pid();
  Reply reply = worker.request("_fail", {{"message", "boom 42"}}, 10000);
  EXPECT_EQ(reply.status, Status::error);
  EXPECT_EQ(reply.kind, "exception");
  EXPECT_EQ(reply.error, "RuntimeError: boom 42");
  EXPECT_NE(reply.traceback.find("RuntimeError"), std::string::npos);
  EXPECT_EQ(worker.pid(), pid);
  EXPECT_TRUE(worker.request("echo", json::object(), 10000).ok());
  EXPECT_EQ(worker.pid(), pid);
}

TEST(Worker, AnOpOrArgumentsOutsideTheProtocolAreNeverSent) {
  Worker worker(test_options());
  EXPECT_THROW(worker.request("no_such_op", json::object(), 10000), std::logic_error);
  EXPECT_EQ(worker.pid(), -1);  // refused before a worker was even started
  try {
    worker.request("analyze", {{"source", "x = 1"}, {"grid_names", "n"}}, 10000);
    FAIL() << "no exception";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "worker protocol: analyze request grid_names: want array, got string");
  }
}

TEST(Worker, AnEchoRoundTripsThroughTheCheckedProtocol) {
  // the request and the result are both checked (and so is the worker's side, protocol.py)
  Worker worker(test_options());
  Reply reply = worker.request("echo", {{"x", 1}}, 10000);
  ASSERT_TRUE(reply.ok()) << reply.error;
  EXPECT_EQ(reply.result["echo"]["x"], 1);
}

TEST(Worker, CrashIsReportedAndNextRequestRestarts) {
  Worker worker(test_options());
  ASSERT_TRUE(worker.request("echo", json::object(), 10000).ok());
  const int first_pid = worker.pid();
  Reply reply = worker.request("_crash", {{"code", 3}}, 10000);
  EXPECT_EQ(reply.status, Status::crashed);
  EXPECT_EQ(reply.kind, "crashed");
  EXPECT_NE(reply.error.find("exited with code 3"), std::string::npos) << reply.error;
  EXPECT_EQ(worker.pid(), -1);
  EXPECT_TRUE(process_gone(first_pid));

  Reply next = worker.request("echo", {{"x", 1}}, 10000);
  ASSERT_TRUE(next.ok()) << next.error;
  EXPECT_EQ(next.result.at("echo").at("x"), 1);
  EXPECT_NE(worker.pid(), first_pid);
  EXPECT_EQ(worker.restarts(), 1);
}

TEST(Worker, HangTimesOutKillsGroupAndRecovers) {
  Worker worker(test_options());
  ASSERT_TRUE(worker.request("echo", json::object(), 10000).ok());
  const int pid = worker.pid();
  const auto start = Clock::now();
  Reply reply = worker.request("_hang", {{"seconds", 60}}, 1500);
  const auto elapsed = Clock::now() - start;
  EXPECT_EQ(reply.status, Status::timeout);
  EXPECT_EQ(reply.kind, "timeout");
  EXPECT_GE(elapsed, 1500ms);
  EXPECT_LT(elapsed, 5s);
  EXPECT_NE(::kill(pid, 0), 0);   // reaped
  EXPECT_NE(::kill(-pid, 0), 0);  // and nothing left in its process group

  Reply next = worker.request("echo", json::object(), 10000);
  EXPECT_TRUE(next.ok()) << next.error;
  EXPECT_NE(worker.pid(), pid);
  EXPECT_EQ(worker.restarts(), 1);
}

TEST(Worker, RequestTimesPerOpIncludeTimeoutsAndStarts) {
  Worker worker(test_options());
  EXPECT_TRUE(worker.request_times().empty());
  ASSERT_TRUE(worker.request("echo", json::object(), 10000).ok());
  ASSERT_TRUE(worker.request("echo", json::object(), 10000).ok());
  EXPECT_EQ(worker.request("_hang", {{"seconds", 60}}, 800).status, Status::timeout);
  ASSERT_TRUE(worker.request("echo", json::object(), 10000).ok());  // on a fresh worker
  const auto& t = worker.request_times();
  ASSERT_EQ(t.count("echo"), 1u);
  EXPECT_EQ(t.at("echo").requests, 3);
  EXPECT_EQ(t.at("_hang").requests, 1);
  EXPECT_GE(t.at("_hang").seconds, 0.8);  // a timed-out request counts its time up to the timeout
  EXPECT_LT(t.at("_hang").seconds, 5.0);
  EXPECT_EQ(t.at("start").requests, 2);  // the first worker and the one after the timeout
  EXPECT_GT(t.at("start").seconds, 0.0);
  EXPECT_EQ(t.count("hello"), 0u);  // the handshake is part of "start"
}

TEST(Worker, AnOpsPhasesAreSummedPerOpFailedRequestsIncluded) {
  Worker worker(test_options());
  const Reply first = worker.request("_phased", {{"ms", 5}}, 10000);
  ASSERT_TRUE(first.ok()) << first.error;
  EXPECT_EQ(first.phases.size(), 2u);
  EXPECT_EQ(first.phases.count("outer"), 1u);
  EXPECT_EQ(first.phases.count("inner"), 1u);
  EXPECT_GT(first.phases.at("inner"), 0.0);  // each slept 5 ms (the values are rounded to 0.1 ms)
  EXPECT_GT(first.phases.at("outer"), 0.0);
  const Reply failed = worker.request("_phased", {{"fail", true}, {"ms", 5}}, 10000);
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(failed.phases.size(), 2u);
  ASSERT_TRUE(worker.request("echo", json::object(), 10000).ok());
  const auto& t = worker.request_times();
  ASSERT_EQ(t.at("_phased").phases.size(), 2u);
  EXPECT_DOUBLE_EQ(t.at("_phased").phases.at("inner"), first.phases.at("inner") + failed.phases.at("inner"));
  EXPECT_GT(t.at("_phased").phases.at("inner"), first.phases.at("inner"));  // summed, not overwritten
  EXPECT_TRUE(t.at("echo").phases.empty());  // an op that marks none sends none
}

TEST(Worker, DiesWithItsParent) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the "engine": start a worker, report its pid, die without cleanup
    ::close(fds[0]);
    int pids[2] = {-1, -1};  // worker, holder
    try {
      auto* worker = new Worker(test_options());  // leaked on purpose: no destructor runs
      if (worker->request("echo", json::object(), 10000).ok()) pids[0] = worker->pid();
    } catch (...) {
    }
    // The holder inherits the worker's stdin pipe, so the worker sees no EOF:
    // only the parent-death signal can end it.
    pids[1] = ::fork();
    if (pids[1] == 0) {
      ::pause();
      ::_exit(0);
    }
    ssize_t n = ::write(fds[1], pids, sizeof pids);
    ::_exit(n == sizeof pids ? 0 : 1);
  }
  ::close(fds[1]);
  int pids[2] = {-1, -1};
  pollfd pfd{fds[0], POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 30000), 1);
  ASSERT_EQ(::read(fds[0], pids, sizeof pids), static_cast<ssize_t>(sizeof pids));
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_GT(pids[1], 0);
  const bool gone = pids[0] > 0 && wait_gone(pids[0], 5s);
  ::kill(pids[1], SIGKILL);
  ASSERT_GT(pids[0], 0);
  EXPECT_TRUE(gone) << "worker " << pids[0] << " outlived its parent";
  if (!gone) ::kill(-pids[0], SIGKILL);
}

TEST(Worker, HandshakeFailureThrowsWithStderrTail) {
  std::filesystem::path log = std::filesystem::temp_directory_path() /
                              ("kernelopt_worker_" + std::to_string(::getpid()) + ".log");
  std::filesystem::remove(log);
  WorkerOptions options = test_options();
  options.python_path = "/nonexistent";
  options.env.emplace_back("PYTHONPATH", "");  // so kernelopt cannot be imported
  options.log_path = log.string();
  Worker worker(options);
  try {
    worker.request("echo", json::object(), 10000);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("handshake failed"), std::string::npos) << what;
    EXPECT_NE(what.find("No module named"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  EXPECT_EQ(worker.pid(), -1);
  std::filesystem::remove(log);
}

TEST(Worker, MissingInterpreterThrows) {
  WorkerOptions options = test_options();
  options.python = "kernelopt-no-such-python";
  Worker worker(options);
  EXPECT_THROW(worker.request("echo", json::object(), 1000), std::runtime_error);
}

// A stand-in worker package that pads each reply with noise and a stray id.
class FakeWorker : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kernelopt_fake_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "kernelopt" / "worker");
    std::ofstream(dir_ / "kernelopt" / "__init__.py");
    std::ofstream(dir_ / "kernelopt" / "worker" / "__init__.py");
    std::ofstream(dir_ / "kernelopt" / "worker" / "__main__.py") << R"(import json, os, sys
def send(obj):
    print(json.dumps(obj), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "hello":
        send({"id": req["id"], "ok": True, "result": {"protocol": int(os.environ["FAKE_PROTOCOL"]), "pid": os.getpid(),
                                                      "schema": os.environ["FAKE_SCHEMA"]}})
        continue
    print("not json at all", flush=True)
    send({"id": req["id"] + 1000, "ok": True, "result": {"echo": {"stray": True}}})
    send({"id": req["id"], "ok": True, "result": {"echo": {"mine": True}} if req["args"].get("shape") != "bad" else "mine"})
)";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  WorkerOptions options(int protocol, const std::string& schema = kernelopt::worker::protocol_schema_sha256()) {
    WorkerOptions o = test_options();
    o.python_path = dir_.string();
    o.env.emplace_back("FAKE_PROTOCOL", std::to_string(protocol));
    o.env.emplace_back("FAKE_SCHEMA", schema);
    return o;
  }
  std::filesystem::path dir_;
};

TEST_F(FakeWorker, RepliesAreMatchedById) {
  Worker worker(options(kProtocolVersion));
  for (int i = 0; i < 3; ++i) {
    Reply reply = worker.request("echo", json::object(), 10000);
    ASSERT_TRUE(reply.ok()) << reply.error;
    EXPECT_EQ(reply.result["echo"], json({{"mine", true}}));
  }
}

TEST_F(FakeWorker, AReplyOutsideTheProtocolIsAnErrorNotAResult) {
  Worker worker(options(kProtocolVersion));
  Reply reply = worker.request("echo", {{"shape", "bad"}}, 10000);
  EXPECT_EQ(reply.status, Status::error);
  EXPECT_EQ(reply.kind, "protocol");
  EXPECT_EQ(reply.error, "worker protocol: echo result: want object, got string");
}

TEST_F(FakeWorker, AWorkerWithAnotherProtocolFileIsRefusedAtTheHandshake) {
  Worker worker(options(kProtocolVersion, "0123456789abcdef"));
  try {
    worker.request("echo", json::object(), 10000);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the worker's protocol.json (sha256 0123456789ab)"), std::string::npos)
        << e.what();
  }
}

TEST_F(FakeWorker, ProtocolMismatchThrows) {
  Worker worker(options(kProtocolVersion + 1));
  try {
    worker.request("echo", json::object(), 10000);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("protocol"), std::string::npos) << e.what();
  }
  EXPECT_EQ(worker.pid(), -1);
}

TEST(Worker, SeesOnlyTheGpuItIsGiven) {
  WorkerOptions options = test_options();
  options.visible_devices = "GPU-1f2e";  // CUDA_VISIBLE_DEVICES takes indexes and UUIDs alike
  Worker worker(options);
  EXPECT_EQ(worker.pid(), -1);  // started lazily, by its first request
  Reply reply = worker.request("echo", json::object(), 10000);
  ASSERT_TRUE(reply.ok()) << reply.error;
  std::ifstream environ("/proc/" + std::to_string(worker.pid()) + "/environ");
  std::string env((std::istreambuf_iterator<char>(environ)), std::istreambuf_iterator<char>());
  EXPECT_NE(env.find(std::string("CUDA_VISIBLE_DEVICES=GPU-1f2e") + '\0'), std::string::npos);
}

TEST(Worker, PhasesFromJsonKeepOnlyNumbers) {
  EXPECT_EQ(phases_from_json({{"a", 1.5}, {"b", "x"}, {"c", 2}}), (std::map<std::string, double>{{"a", 1.5}, {"c", 2.0}}));
  EXPECT_TRUE(phases_from_json(json::array({1, 2})).empty());
  EXPECT_TRUE(phases_from_json(json()).empty());
}
