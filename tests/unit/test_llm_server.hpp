// A cpp-httplib server on 127.0.0.1 at a free port, serving in a thread for
// the lifetime of the object: the other end of the HTTP provider tests.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include <httplib.h>

namespace kernelopt::llm::testing {

class LoopbackServer {
 public:
  /// routes registers the handlers (before the server starts serving).
  explicit LoopbackServer(const std::function<void(httplib::Server&)>& routes) {
    routes(server_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ > 0) thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 500 && port_ > 0 && !server_.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ~LoopbackServer() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  bool ok() const { return port_ > 0 && server_.is_running(); }
  /// "http://127.0.0.1:PORT"
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = -1;
  std::thread thread_;
};

}  // namespace kernelopt::llm::testing
