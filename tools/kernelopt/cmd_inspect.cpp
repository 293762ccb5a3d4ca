// `kernelopt inspect`: the artifact of a model, an output module, or a finished run:
// each Triton sub-kernel (kind, ATen ops, time share when measured), each vendor call, the launches.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "commands.hpp"
#include "engine/optimize.hpp"
#include "engine/run_dir.hpp"
#include "util/fs.hpp"
#include "worker/worker.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kernelopt::cli {

namespace {

void print_artifact(const json& art, const json* profile) {
  std::printf("Triton sub-kernels (%zu): the only code kernelopt rewrites\n", art["kernels"].size());
  for (const auto& k : art["kernels"]) {
    std::string share;
    if (profile) {
      for (const auto& p : (*profile)["kernels"]) {
        if (p["name"] == k["name"]) {
          // read back from report.json: a field of the wrong type reads as unknown, not as an internal error
          const auto number = [&](const char* key) {
            return p.contains(key) && p[key].is_number() ? p[key].get<double>() : 0.0;
          };
          const auto text = [&](const char* key) {
            return p.contains(key) && p[key].is_string() ? p[key].get<std::string>() : std::string();
          };
          share = fmt::format("  {:.4f} ms, {:.0f}% of module, {}", number("time_ms"), 100 * number("share"),
                              text("diagnosis"));
        }
      }
    }
    std::printf("  %-55s %-21s aten: %s%s\n", k["name"].get<std::string>().c_str(), k["kind"].get<std::string>().c_str(),
                fmt::format("{}", fmt::join(k["aten_ops"], ", ")).c_str(), share.c_str());
  }
  std::printf("Vendor calls (%zu): kept exactly as the compiler chose\n", art["vendor_calls"].size());
  for (const auto& v : art["vendor_calls"]) {
    std::printf("  %-24s (%s)\n", v["op"].get<std::string>().c_str(), fmt::format("{}", fmt::join(v["args"], ", ")).c_str());
  }
  std::printf("Launches in program order:\n");
  for (const auto& l : art["launches"]) {
    std::printf("  %2d %s(%s)\n", l["order"].get<int>(), l["kernel"].get<std::string>().c_str(),
                fmt::format("{}", fmt::join(l["args"], ", ")).c_str());
  }
}

}  // namespace

Runner add_inspect(CLI::App& app) {
  struct Opts { fs::path target; bool code = false; std::string python = "python3"; };
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand("inspect", "show the Triton kernels, vendor calls and launches of a model, output module or run");
  sub->add_option("target", o->target, "a finished run directory, an Inductor output module (with --code), or a model file")
      ->required();
  sub->add_flag("--code", o->code, "target is an Inductor output module: parse it (no GPU needed)");
  sub->add_option("--python", o->python, "python interpreter with torch and triton")->capture_default_str();
  return [o] {
    if (!fs::exists(o->target)) throw engine::UserError(fmt::format("{}: no such file or directory", o->target.string()));
    worker::WorkerOptions wo;
    wo.python = o->python;
    wo.python_path = engine::find_python_path();
    if (wo.python_path.empty()) throw engine::UserError("cannot find kernelopt's python/ directory; set KERNELOPT_ROOT");
    worker::Worker w(wo);
    if (fs::is_directory(o->target)) {  // a finished run: its baseline modules and measured profile
      if (!fs::exists(o->target / "report.json")) {
        throw engine::UserError(fmt::format("{}: no report.json (not a finished run)", o->target.string()));
      }
      const json report = engine::read_report(o->target / "report.json");
      // a standalone or Helion run's baseline/module0.py is the Triton file it optimized, not an Inductor module
      const std::string kind = report.value("input_kind", std::string("module")) == "module" ? "module" : "triton";
      for (const auto& m : report["modules"]) {
        int idx = m["index"];
        const fs::path module = o->target / fmt::format("baseline/module{}.py", idx);
        auto r = w.request("parse", {{"module_path", module.string()}, {"input_kind", kind}}, 60000);
        if (!r.ok()) throw engine::UserError(fmt::format("{}: {}", module.string(), r.error));
        std::printf("== module %d (%.4f ms)\n", idx, m["module_ms"].get<double>());
        json prof = {{"kernels", json::array()}};
        for (const auto& k : m["kernels"]) {
          json p = k["profile"];
          p["name"] = k["name"];
          prof["kernels"].push_back(p);
        }
        print_artifact(r.result, &prof);
      }
      return 0;
    }
    if (!o->code) {
      throw engine::UserError("inspecting a model file needs a run: use `kernelopt optimize` first, then "
                              "`kernelopt inspect RUN_DIR`; or pass --code with an Inductor output module");
    }
    auto r = w.request("parse", {{"module_path", fs::absolute(o->target).string()}}, 60000);
    if (!r.ok() && r.kind == "artifact") {
      throw engine::UserError(fmt::format("{}: not an Inductor output module kernelopt can read: {}",
                                          o->target.string(), r.error));
    }
    if (!r.ok()) throw engine::UserError(fmt::format("{}: {}", o->target.string(), r.error));
    print_artifact(r.result, nullptr);
    return 0;
  };
}

}  // namespace kernelopt::cli
