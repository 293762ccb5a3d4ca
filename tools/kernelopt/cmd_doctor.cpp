// `kernelopt doctor`: is this machine ready to optimize? python, torch, triton, GPU, with a verdict.
#include <cstdio>

#include <fmt/format.h>

#include "commands.hpp"
#include "engine/optimize.hpp"
#include "util/version.hpp"
#include "worker/worker.hpp"

namespace kernelopt::cli {

Runner add_doctor(CLI::App& app) {
  auto python = std::make_shared<std::string>("python3");
  auto* sub = app.add_subcommand("doctor", "check python, torch, triton and the GPU");
  sub->add_option("--python", *python, "python interpreter with torch and triton")->capture_default_str();
  return [python] {
    std::printf("kernelopt %s\n", util::version());
    worker::WorkerOptions wo;
    wo.python = *python;
    wo.python_path = engine::find_python_path();
    if (wo.python_path.empty()) throw engine::UserError("cannot find kernelopt's python/ directory; set KERNELOPT_ROOT");
    worker::Worker w(wo);
    worker::Reply r;
    try {
      r = w.request("doctor", nlohmann::json::object(), 300000);
    } catch (const std::exception& e) {
      throw engine::UserError(fmt::format("the worker did not start with {}: {}", *python, e.what()));
    }
    if (!r.ok()) throw engine::UserError("worker doctor failed: " + r.error);
    const auto& d = r.result;
    auto show = [&](const char* label, const char* key) {
      std::printf("  %-10s %s\n", label, d.contains(key) ? d[key].dump().c_str() : "(missing)");
    };
    show("python", "python");
    show("torch", "torch");
    show("triton", "triton");
    show("cuda", "cuda");
    show("gpu", "gpu");
    show("gpus", "device_count");
    show("capability", "capability");
    show("memory GB", "memory_gb");  // the device's total memory: what a problem's working set must fit in
    const bool torch_ok = d.contains("torch"), triton_ok = d.contains("triton");
    const bool gpu_ok = d.value("cuda_available", false);
    if (torch_ok && triton_ok && gpu_ok) {
      std::printf("verdict: ready: optimize runs on %s\n", d["gpu"].get<std::string>().c_str());
      return 0;
    }
    std::string missing = !torch_ok ? "torch is not importable (" + d.value("torch_error", "") + ")"
                          : !triton_ok ? "triton is not importable (" + d.value("triton_error", "") + ")"
                                       : "no CUDA GPU is visible to PyTorch";
    std::printf("verdict: not ready: %s; the tests run here (Triton kernels under TRITON_INTERPRET=1), "
                "optimize needs an NVIDIA GPU\n", missing.c_str());
    return 1;
  };
}

}  // namespace kernelopt::cli
