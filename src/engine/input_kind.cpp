// The three kinds of input and what each decides. See input_kind.hpp.
#include "engine/input_kind.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine/candidate.hpp"
#include "engine/context.hpp"
#include "engine/library_use.hpp"
#include "engine/optimize.hpp"
#include "util/fs.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kernelopt::engine {

json InputKind::prepare_problem(Context&, const fs::path&) const { return nullptr; }

void InputKind::write_outputs(const Context&, const fs::path&) const {}

namespace {

/// An nn.Module: the kernels of Inductor's output modules; the engine sets their whole launch config.
class ModuleInput final : public InputKind {
 public:
  std::string name() const override { return "module"; }
  std::string problem_argument() const override { return "model"; }
  std::string capture_what() const override { return "torch.compile of"; }
  std::string library_kind() const override { return "inductor"; }
  json own_config(const json& config) const override { return config; }
  std::string grid_rule(const artifact::Kernel& kernel) const override {
    if (kernel.grid_type == "Grid2D") return "(cdiv(xnumel, XBLOCK), cdiv(ynumel, YBLOCK), 1)";
    return "(cdiv(xnumel, XBLOCK), 1, 1)";
  }
  json answer_config(const json& tunable, const json& meta) const override {
    json config = tunable;
    if (meta.is_object()) {
      for (const auto& [k, v] : meta.items()) config[k] = v;
    }
    return config;
  }
  std::string config_source(const artifact::Module& module, const artifact::Kernel& kernel,
                            const artifact::LaunchConfig& cfg) const override {
    return artifact::kernel_source_with_config(module, kernel, cfg);
  }
  std::string code_source(const artifact::Module& module, const artifact::Kernel& kernel, const std::string& code,
                          const artifact::FunctionLines& fn, const json& config,
                          const std::vector<std::string>& grid) const override {
    return artifact::inductor_candidate(module, kernel, code, fn, artifact::LaunchConfig::from_json(config), grid);
  }
  void from_library(const store::LibraryEntry& entry, const std::string& name, Candidate& c) const override {
    c.config = entry.config;
    // the entry's kernel text as it was stitched and verified, under this module's name: used as is
    c.kernel_source = rename_kernel(entry.source, entry.kernel_name, name);
    c.code = rename_kernel(entry.code, entry.kernel_name, name);  // kept for the next entry; not rebuilt
  }
  std::string original_text(const artifact::Module& module, const artifact::Kernel& kernel) const override {
    return module.kernel_source(kernel);
  }
  StaticText static_text(const Candidate& c, const std::string&) const override { return {c.kernel_source, ""}; }
  std::string untunable(const artifact::Kernel&) const override { return ""; }
  agents::KernelTask tuner_task(agents::KernelTask task) const override { return task; }
  bool rewrites_and_tunes_code() const override { return true; }
  std::string no_tuning_space(const artifact::Kernel& kernel) const override {
    return fmt::format("no tuning space for a {} kernel with constexprs [{}]", kernel.kind,
                       fmt::join(kernel.constexprs, ", "));
  }
};

/// A standalone Triton file: only its @triton.jit functions change; block sizes and the grid stay the
/// launcher's, the engine sets num_warps/num_stages through one line above the user's kernel.
class TritonFileInput : public InputKind {
 public:
  std::string name() const override { return "triton"; }
  std::string problem_argument() const override { return "kernel_file"; }
  std::string capture_what() const override { return "the launches of"; }
  void write_outputs(const Context& ctx, const fs::path& out) const override {
    // the optimized file under the user's own file name, drop-in: same launcher, same names
    const fs::path named = out / "optimized" / fs::path(ctx.base_args["problem"].get<std::string>()).filename();
    util::write_file_atomic(named, util::read_file(out / "optimized" / "module0.py"));
    spdlog::info("optimized kernel file: {}", named.string());
  }
  std::string library_kind() const override { return "triton"; }
  json own_config(const json& config) const override { return launch_only(config); }
  std::string grid_rule(const artifact::Kernel&) const override {
    return "the user's launcher's grid (unchanged; meta is not used)";
  }
  json answer_config(const json&, const json&) const override { return nullptr; }
  std::string config_source(const artifact::Module& module, const artifact::Kernel& kernel,
                            const artifact::LaunchConfig& cfg) const override {
    return artifact::standalone_with_config(module, kernel, cfg);
  }
  std::string code_source(const artifact::Module& module, const artifact::Kernel& kernel, const std::string& code,
                          const artifact::FunctionLines& fn, const json&,
                          const std::vector<std::string>&) const override {
    return artifact::standalone_candidate(module, kernel, code, fn);
  }
  void from_library(const store::LibraryEntry& entry, const std::string& name, Candidate& c) const override {
    // either code (the user's launcher's config) or a launch config of the user's kernel; rebuilt here
    c.config = entry.code.empty() ? entry.config : json(nullptr);
    c.code = rename_kernel(entry.code, entry.kernel_name, name);
  }
  std::string original_text(const artifact::Module& module, const artifact::Kernel& kernel) const override {
    // its function under a plain @triton.jit: the user's own decorators (autotune, heuristics) are not judged
    return "@triton.jit\n" + module.source.substr(kernel.function.begin, kernel.function.size());
  }
  StaticText static_text(const Candidate& c, const std::string& original) const override {
    // what the model wrote; for a launch config, the user's kernel itself under the engine's one-line
    // decorator, which holds two integers standalone_with_config checked (never model-written text)
    if (!c.code.empty()) return {c.code, ""};
    return {original, c.kernel_source.substr(0, c.kernel_source.find('\n'))};
  }
  std::string untunable(const artifact::Kernel& kernel) const override {
    // tuned only where the user's code does not choose the config (autotune, heuristics)
    return artifact::standalone_untunable(kernel);
  }
  agents::KernelTask tuner_task(agents::KernelTask task) const override {
    task.constexprs.clear();
    task.current_config = launch_only(task.current_config);
    return task;
  }
  // its candidates keep the user's decorators, and pinning a config on an LLM-written function is not done yet
  bool rewrites_and_tunes_code() const override { return false; }
  std::string no_tuning_space(const artifact::Kernel&) const override {
    return "no candidate: no launch config to try besides the launcher's";
  }
};

/// A Helion kernel: the Triton code Helion generates for its config, exported to a standalone file
/// (out/helion/<stem>_triton.py; what Helion said about it in out/helion/export.json), then that file.
class HelionInput final : public TritonFileInput {
 public:
  std::string name() const override { return "helion"; }
  /// A continued run keeps the file it started with: Helion's autotuner may choose another config the
  /// second time, and recorded verdicts are about the first.
  json prepare_problem(Context& ctx, const fs::path& out) const override {
    const auto& o = ctx.options;
    const fs::path file = out / "helion" / (o.problem.stem().string() + "_triton.py");
    const fs::path info_file = out / "helion" / "export.json";
    ctx.base_args["problem"] = file.string();
    if (ctx.continuing && fs::is_regular_file(file) && fs::is_regular_file(info_file)) {
      spdlog::info("[0/5] Helion: continuing with {}", file.string());
      return json::parse(util::read_file(info_file));
    }
    spdlog::info("[0/5] Helion: generating the Triton code of {}{}", o.problem.string(),
                 o.helion_autotune ? " (Helion's autotuner chooses the config; this can take minutes)" : "");
    json args = {{"problem", fs::absolute(o.problem).string()}, {"out", fs::absolute(file).string()},
                 {"device", o.device}, {"autotune", o.helion_autotune}, {"tolerances", o.tolerances_json()}};
    if (!o.helion_kernel.empty()) args["kernel"] = o.helion_kernel;
    json info = ctx.request("helion_export", args);
    spdlog::info("  kernel {} (Helion {}), {}: {}", info["kernel"].get<std::string>(), info["helion"].get<std::string>(),
                 info["config_source"].get<std::string>(), info["config"].get<std::string>());
    spdlog::info("  exported to {}; it reproduces the Helion kernel's output (max abs err {})", file.string(),
                 info["max_abs_err_vs_helion"].get<double>());
    info["path"] = fs::relative(file, out).string();
    util::write_file_atomic(info_file, info.dump(1) + "\n");
    return info;
  }
};

}  // namespace

const InputKind& input_kind_named(const std::string& name) {
  static const ModuleInput module;
  static const TritonFileInput triton;
  static const HelionInput helion;
  if (name == module.name()) return module;
  if (name == triton.name()) return triton;
  if (name == helion.name()) return helion;
  throw UserError(fmt::format("unknown input kind '{}' (want module, triton or helion)", name));
}

}  // namespace kernelopt::engine
