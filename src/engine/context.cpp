// The worker requests every step of a run makes. See context.hpp.
#include "engine/context.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine/optimize.hpp"

using nlohmann::json;

namespace kernelopt::engine {

json Context::request(const std::string& op, const json& args) {
  worker::Reply r = worker.request(op, args, timeout_ms());
  if (!r.ok()) {
    if (r.kind == "problem" || r.kind == "capture" || r.kind == "no_gpu") throw UserError(r.error);
    throw UserError(fmt::format("worker {} failed ({}): {}", op, worker::to_string(r.status), r.error));
  }
  return r.result;
}

worker::Reply Context::ask(const std::string& op, const json& args) { return ask(op, args, timeout_ms()); }

worker::Reply Context::ask(const std::string& op, const json& args, int wait_ms) {
  json full = args;
  worker::Reply r = worker.request(op, full, wait_ms);
  const json seeds = full.value("seeds", json());
  if (r.ok() || r.kind != "out_of_memory" || !seeds.is_array() || seeds.size() < 2) return r;
  // Fewer inputs alive at once: one seed's evidence is still evidence. The run's later ops on the captured
  // session keep to that seed too; a problem that does not fit once fails with the device's own error.
  spdlog::warn("    {} ran out of the device's memory on {} seeds; retrying on seed {} alone", op, seeds.size(),
               seeds.front().dump());
  if (base_args.is_object() && base_args.value("seeds", json()) == seeds) base_args["seeds"] = json::array({seeds.front()});
  full["seeds"] = json::array({seeds.front()});
  return worker.request(op, full, wait_ms);
}

}  // namespace kernelopt::engine
