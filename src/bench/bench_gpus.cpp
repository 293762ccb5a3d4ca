// One bench over several GPUs: child `kernelopt bench` processes, merged. See bench_gpus.hpp.
#include "bench/bench_gpus.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine/optimize.hpp"
#include "util/fs.hpp"
#include "util/subprocess.hpp"
#include "util/text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kernelopt::bench {

using engine::UserError;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPollMs = 200;              // between looks at the children

using util::trim;

/// The last non-empty line of a log (its last 4 KiB), cut to 200 characters; "no output" when the child wrote none.
std::string last_line(const fs::path& log) {
  std::ifstream in(log, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = size > 4096 ? size - 4096 : 0;
  in.seekg(from);
  std::string tail(static_cast<size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  std::string last;
  size_t start = 0;
  while (start < tail.size()) {
    size_t end = tail.find('\n', start);
    if (end == std::string::npos) end = tail.size();
    if (std::string line = trim(tail.substr(start, end - start)); !line.empty()) last = line;
    start = end + 1;
  }
  if (last.rfind("=== gpu", 0) == 0) return "no output";  // only the parent's header line
  return last.size() > 200 ? last.substr(0, 197) + "..." : last;
}

/// A child's bench.json when it is a finished bench (has "shard"); null otherwise.
json finished_bench(const fs::path& dir) {
  const fs::path file = dir / "bench.json";
  if (!fs::exists(file)) return nullptr;
  try {
    json bench = json::parse(util::read_file(file));
    return bench.contains("shard") && bench.contains("aggregate") ? bench : json(nullptr);
  } catch (const std::exception&) {
    return nullptr;
  }
}

struct Child {
  int number = 0;                    // 1-based: OUT/gpu<number>
  BenchOptions options;
  std::string gpu;                   // CUDA_VISIBLE_DEVICES; "" = inherited (cpu)
  size_t problems = 0;
  fs::path log;
  std::unique_ptr<util::Subprocess> process;
  std::ofstream log_out;             // the child's stdout lines, appended to its log
  Clock::time_point started;
  bool done = false;

  std::string label() const {
    return fmt::format("gpu{} ({}, shard {}/{})", number, gpu.empty() ? "cpu" : "CUDA_VISIBLE_DEVICES=" + gpu,
                       options.shard_index, options.shard_count);
  }

  void drain_stdout() {
    for (;;) {
      util::ReadResult r = process->read_line(0);
      if (r.status != util::ReadStatus::line) return;
      log_out << r.line << '\n';
      log_out.flush();
    }
  }
};

}  // namespace

std::pair<int, int> child_shard(int shard_index, int shard_count, int child, int children) {
  if (shard_count < 1 || shard_index < 1 || shard_index > shard_count || children < 1 || child < 1 ||
      child > children) {
    throw std::invalid_argument(
        fmt::format("child_shard: child {} of {} under shard {}/{}", child, children, shard_index, shard_count));
  }
  return {shard_index + (child - 1) * shard_count, shard_count * children};
}

namespace {

/// Starts child `i` of `n`; null when its share is empty or it could not start (then `result` says why).
std::unique_ptr<Child> start_child(const BenchOptions& o, int i, int n, const std::string& gpu,
                                   const std::string& kernelopt_binary, const BenchChildArgs& child_args,
                                   BenchGpusResult& result) {
  auto c = std::make_unique<Child>();
  c->number = i;
  c->gpu = gpu;
  c->options = o;
  std::tie(c->options.shard_index, c->options.shard_count) = child_shard(o.shard_index, o.shard_count, i, n);
  c->options.out_dir = o.out_dir / fmt::format("gpu{}", i);
  c->options.optimize.workspace = o.optimize.workspace / fmt::format("gpu{}", i);  // its own store.db
  c->options.optimize.library = o.optimize.library_path();                         // one library, shared
  c->problems = select_problems(c->options).size();
  if (c->problems == 0) {
    spdlog::info("{}: no problem in its share; not started", c->label());
    return nullptr;
  }
  // A finished bench.json left by an earlier run would be merged if this child stopped before writing its own.
  fs::remove(c->options.out_dir / "bench.json");
  c->log = o.out_dir / fmt::format("gpu{}.log", i);
  c->log_out.open(c->log, std::ios::app);
  std::vector<std::string> argv = {kernelopt_binary};
  for (auto& a : child_args(c->options)) argv.push_back(std::move(a));
  std::string command;
  for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
  c->log_out << fmt::format("=== {}: {}\n", c->label(), command);
  c->log_out.flush();
  util::EnvVars env;
  if (!c->gpu.empty()) env.emplace_back("CUDA_VISIBLE_DEVICES", c->gpu);
  c->started = Clock::now();
  try {
    c->process = std::make_unique<util::Subprocess>(argv, env, c->log.string());
  } catch (const std::runtime_error& e) {
    result.failed.push_back(fmt::format("{}: cannot start: {}", c->label(), e.what()));
    spdlog::error("{}", result.failed.back());
    return nullptr;
  }
  spdlog::info("{}: started, {} problem(s); log {}", c->label(), c->problems, c->log.string());
  return c;
}

/// Waits for every child; returns the bench directories of those that finished, in child order.
std::vector<fs::path> wait_for(std::vector<std::unique_ptr<Child>>& children, BenchGpusResult& result) {
  std::vector<const Child*> finished;
  for (size_t running = children.size(); running > 0;) {
    for (auto& c : children) {
      if (c->done) continue;
      c->drain_stdout();
      if (c->process->alive()) continue;
      c->drain_stdout();
      c->done = true;
      --running;
      const int status = c->process->exit_status().value_or(-1);
      const double seconds = std::chrono::duration<double>(Clock::now() - c->started).count();
      const json bench = finished_bench(c->options.out_dir);
      if ((status == 0 || status == 1) && !bench.is_null()) {
        const json& a = bench["aggregate"]["overall"];
        spdlog::info("{}: finished in {:.0f} s: {} problems, geomean {:.3f}x, {} improved, {} incorrect, {} failed",
                     c->label(), seconds, a.value("problems", 0), a.value("geomean_speedup", 1.0),
                     a.value("improved", 0), a.value("incorrect", 0), a.value("failed", 0));
        finished.push_back(c.get());
      } else {
        result.failed.push_back(fmt::format("{}: {} after {:.0f} s without finishing its bench: {} (log {})",
                                            c->label(), util::describe_exit_status(status), seconds,
                                            last_line(c->log), c->log.string()));
        spdlog::error("{}", result.failed.back());
      }
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
  std::sort(finished.begin(), finished.end(), [](const Child* a, const Child* b) { return a->number < b->number; });
  std::vector<fs::path> dirs;
  for (const Child* c : finished) dirs.push_back(c->options.out_dir);
  return dirs;
}

}  // namespace

BenchGpusResult run_bench_on_gpus(const BenchOptions& o, const std::vector<std::string>& gpu_ids,
                                  const std::string& kernelopt_binary, const BenchChildArgs& child_args) {
  const int n = static_cast<int>(gpu_ids.size());
  if (select_problems(o).empty()) throw UserError(fmt::format("{}: no problem files selected", o.problems_dir.string()));
  util::ensure_dir(o.out_dir);
  const fs::path library_dir = o.optimize.library_path().parent_path();
  if (!library_dir.empty()) util::ensure_dir(library_dir);  // children open the shared library at once
  BenchGpusResult result;
  std::vector<std::unique_ptr<Child>> children;
  for (int i = 1; i <= n; ++i) {
    if (auto c = start_child(o, i, n, gpu_ids[i - 1], kernelopt_binary, child_args, result)) {
      children.push_back(std::move(c));
    }
  }
  const std::vector<fs::path> dirs = wait_for(children, result);
  if (!dirs.empty()) result.bench = merge_bench(dirs, o.out_dir, fmt::format("{}/{}", o.shard_index, o.shard_count));
  return result;
}

}  // namespace kernelopt::bench
