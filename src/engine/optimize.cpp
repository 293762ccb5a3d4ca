// The optimize run loop. See optimize.hpp for the contract.
#include "engine/optimize.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agents/planner.hpp"
#include "agents/profiler.hpp"
#include "engine/agent_calls.hpp"
#include "engine/decisions.hpp"
#include "engine/gpus.hpp"
#include "engine/input_kind.hpp"
#include "engine/kernel_search.hpp"
#include "engine/library_use.hpp"
#include "engine/module_check.hpp"
#include "llm/chat.hpp"
#include "engine/run_dir.hpp"
#include "report/report.hpp"
#include "store/library.hpp"
#include "store/store.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"
#include "util/interrupt.hpp"
#include "util/version.hpp"
#include "verify/model_gate.hpp"
#include "verify/stats.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kernelopt::engine {

std::string find_python_path() {
  // set but wrong is the user's mistake to hear about, not a reason to look elsewhere silently
  if (const char* v = std::getenv("KERNELOPT_PYTHONPATH"); v && *v) {
    if (!fs::exists(fs::path(v) / "kernelopt/worker/server.py")) {
      throw UserError(fmt::format("KERNELOPT_PYTHONPATH={}: no kernelopt package there (it must name kernelopt's "
                                  "python/ directory)", v));
    }
    return v;
  }
  if (const char* root = std::getenv("KERNELOPT_ROOT"); root && *root) {
    if (!fs::exists(fs::path(root) / "python/kernelopt/worker/server.py")) {
      throw UserError(fmt::format("KERNELOPT_ROOT={}: no python/kernelopt there (it must name kernelopt's checkout)",
                                  root));
    }
    return (fs::path(root) / "python").string();
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  for (fs::path dir = exe.parent_path(); !ec && !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    if (fs::exists(dir / "python/kernelopt/worker/server.py")) return (dir / "python").string();
  }
  return "";
}

namespace {

std::vector<double> samples_of(const json& j) { return j.get<std::vector<double>>(); }

worker::WorkerOptions worker_options(const OptimizeOptions& o, const fs::path& out) {
  worker::WorkerOptions w;
  w.python = o.python;
  w.python_path = o.python_path.empty() ? find_python_path() : o.python_path;
  if (w.python_path.empty()) throw UserError("cannot find kernelopt's python/ directory; set KERNELOPT_ROOT");
  w.log_path = (out / "logs" / "worker.log").string();
  return w;
}

/// The CUDA_VISIBLE_DEVICES value of each worker that searches kernels (--gpus); {""}: one worker,
/// seeing what this process sees. The first worker (the run's own) is started without one: it sees
/// every GPU and uses the first, gpus[0], as cuda.
std::vector<std::string> worker_gpus(const OptimizeOptions& o) {
  if (o.gpus == "1") return {""};
  const std::vector<std::string> visible = visible_gpus();
  return gpu_ids(parse_gpus(o.gpus, static_cast<int>(visible.size())), o.device, visible);
}

void add_request_times(std::map<std::string, worker::RequestTime>& into,
                       const std::map<std::string, worker::RequestTime>& from) {
  for (const auto& [op, t] : from) {
    into[op].requests += t.requests;
    into[op].seconds += t.seconds;
    into[op].peak_bytes = std::max(into[op].peak_bytes, t.peak_bytes);
    for (const auto& [phase, seconds] : t.phases) into[op].phases[phase] += seconds;
  }
}

/// One planned kernel search: rep.modules[module].kernels[kernel].
struct SearchJob {
  size_t module = 0, kernel = 0;
};

/// Runs each job's search_kernel into its KernelReport. With one worker, in order on ctx's worker.
/// With several (one per entry of `gpus`, its CUDA_VISIBLE_DEVICES), each on its own thread with its
/// own worker (the first keeps ctx's, which sees the first GPU), store connection and library
/// connection, taking the next job (the largest planned budget first) when it is done: timings never
/// share a GPU, and the searches of one run overlap. The LLM session is shared (it locks its own
/// state). The other workers' request times are added to `times`. The first thread's exception is
/// rethrown after all stopped; after one, no thread starts another job. Returns the workers used.
size_t search_kernels(Context& ctx, const std::vector<artifact::Module>& modules, report::Report& rep,
                    const std::vector<SearchJob>& jobs, const std::vector<std::string>& gpus,
                    std::map<std::string, worker::RequestTime>& times) {
  auto search = [&](Context& c, const SearchJob& job, int worker) {
    const auto& m = modules[job.module];
    auto& kr = rep.modules[job.module].kernels[job.kernel];
    if (worker >= 0) spdlog::info("  worker {}{}: {}", worker, gpus[worker].empty() ? "" : " (GPU " + gpus[worker] + ")",
                                  kr.profile.name);
    kr.outcome = search_kernel(c, m, *m.find_kernel(kr.profile.name), kr.baseline_config, kr.plan.budget, kr.profile,
                               kr.plan.strategy);
    kr.outcome.worker = worker;
  };
  const size_t n = std::min(gpus.size(), jobs.size());
  if (n <= 1) {
    for (const auto& job : jobs) search(ctx, job, -1);
    return 1;
  }
  spdlog::info("  {} kernel searches over {} workers", jobs.size(), n);
  // the largest budgets first, so the longest searches start at once
  std::vector<SearchJob> order = jobs;
  std::stable_sort(order.begin(), order.end(), [&](const SearchJob& a, const SearchJob& b) {
    return rep.modules[a.module].kernels[a.kernel].plan.budget > rep.modules[b.module].kernels[b.kernel].plan.budget;
  });
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::map<std::string, worker::RequestTime>> own_times(n);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      // started on this thread and stopped before it ends: a worker dies with the thread that started it
      std::unique_ptr<worker::Worker> own;
      std::optional<ProcessWorker> own_link;
      try {
        if (i > 0) {
          worker::WorkerOptions wo = worker_options(ctx.options, ctx.out);
          wo.log_path = (ctx.out / "logs" / fmt::format("worker{}.log", i)).string();
          wo.visible_devices = gpus[i];
          own = std::make_unique<worker::Worker>(wo);
          own_link.emplace(*own);
        }
        store::Store st = store::Store::open(ctx.options.workspace / "store.db");
        std::optional<store::Library> library;
        if (ctx.library) library.emplace(store::Library::open(ctx.library->path()));
        Context c{ctx.options, ctx.input, own_link ? static_cast<WorkerLink&>(*own_link) : ctx.worker, st, ctx.run_id, ctx.out, ctx.base_args, ctx.llm,
                  ctx.continuing, library ? &*library : nullptr, ctx.fingerprints, ctx.search_deadline};
        for (size_t k = next++; k < order.size(); k = next++) search(c, order[k], static_cast<int>(i));
      } catch (...) {
        errors[i] = std::current_exception();
        next = order.size();
      }
      if (own) {  // its time counts whether or not its searches finished
        own->stop();
        own_times[i] = own->request_times();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& worker_times : own_times) add_request_times(times, worker_times);
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return n;
}

/// Profiles one module and turns the worker's numbers into agent inputs.
std::vector<agents::KernelProfile> profile_module(Context& ctx, const artifact::Module& m, json& raw) {
  // A continued run reuses its measured profile: the agents' prompts (built from it) stay byte-identical,
  // so their answers replay from the store instead of being asked and paid for again.
  const fs::path cached = ctx.out / "logs" / fmt::format("profile_m{}_{}.json", m.index, m.source_hash.substr(0, 12));
  if (ctx.continuing && fs::exists(cached)) {
    raw = json::parse(util::read_file(cached));
    spdlog::info("  profile of module {} reused from {}", m.index, cached.string());
  } else {
    json args = ctx.base_args;
    args["module"] = m.index;
    args["reps"] = 20;
    raw = ctx.request("profile", args);
    util::write_file_atomic(cached, raw.dump() + "\n");
  }
  double module_ms = verify::median(samples_of(raw["module_samples_ms"]));
  std::vector<agents::KernelMeasurement> ms;
  for (const auto& k : raw["kernels"]) {
    agents::KernelMeasurement km;
    km.name = k["name"];
    km.kind = k["kind"];
    km.launches = k["launches"];
    km.bytes = k["bytes"].get<double>();
    km.reread_bytes = k.value("reread_bytes", 0.0);
    km.time_ms = k["samples_ms"].empty() ? 0.0 : verify::median(samples_of(k["samples_ms"]));
    ms.push_back(km);
  }
  agents::DeviceLimits limits;
  limits.bandwidth_gbps = raw.value("bandwidth_gbps", 0.0);
  return agents::profile_kernels(ms, module_ms, limits);
}

json run(const OptimizeOptions& o, const std::vector<std::string>& gpus, store::Store& st, int64_t run_id,
         RunDir& run_dir, const std::string& problem_hash, const json& options, bool continuing);

/// `kernelopt resume` of a run that finished: its report, and nothing run again; nullopt otherwise.
std::optional<json> finished_report(const OptimizeOptions& o, store::Store& st, const std::string& problem_hash) {
  const fs::path out = fs::absolute(o.out_dir);
  const auto prev = st.latest_run_for_out_dir(out.string());
  if (!o.resume || !prev || prev->input_hash != problem_hash || prev->status != "done" ||
      !fs::is_regular_file(out / "report.json")) {
    return std::nullopt;
  }
  spdlog::info("{}: this run is finished; nothing to resume (its report: {})", o.out_dir.string(),
               (out / "report.md").string());
  return read_report(out / "report.json");
}

}  // namespace

json optimize(const OptimizeOptions& o) {
  if (fs::is_directory(o.problem)) {
    throw UserError(fmt::format("{}: a directory, not a Python file (kernelopt bench takes a directory)", o.problem.string()));
  }
  if (!fs::is_regular_file(o.problem)) throw UserError(fmt::format("{}: no such file", o.problem.string()));
  if (std::set<int>(o.seeds.begin(), o.seeds.end()).size() < 3) {
    throw UserError("at least 3 distinct seeds are needed for the correctness gates");
  }
  input_kind_named(o.input_kind);                       // an unknown kind is one line before anything is written
  if (o.python_path.empty() && find_python_path().empty()) {
    throw UserError("cannot find kernelopt's python/ directory; set KERNELOPT_ROOT");
  }
  const std::vector<std::string> gpus = worker_gpus(o);  // a bad --gpus is one line before anything is written
  const std::string problem_hash = util::sha256_hex(util::read_file(o.problem));
  // nothing is written before the run directory, the workspace and the library are known to be usable
  RunDir::check(o.out_dir, problem_hash);
  store::Store st = open_workspace_store(o.workspace);
  try {  // a damaged or foreign library file is the user's to fix: one line, before anything runs
    store::Library::open(o.library_path());
  } catch (const store::StoreError& e) {
    throw UserError(e.what());
  }
  if (auto report = finished_report(o, st, problem_hash)) return *report;
  RunDir run_dir = RunDir::prepare(o.out_dir, o.problem, problem_hash);
  const fs::path out = run_dir.path();
  // Ctrl-C from here on: the run stays resumable, and says so
  util::InterruptLine interrupted(fmt::format("kernelopt: interrupted; continue with: kernelopt resume {}",
                                              o.out_dir.string()));
  store::RunRecord rec;
  rec.input_path = fs::absolute(o.problem).string();
  rec.input_hash = problem_hash;
  rec.out_dir = out.string();
  rec.status = "running";
  rec.options = {{"seeds", o.seeds}, {"atol", o.atol}, {"rtol", o.rtol}, {"budget", o.budget},
                 {"input_kind", o.input_kind}};
  int64_t run_id = 0;
  bool continuing = false;
  if (auto prev = st.latest_run_for_out_dir(out.string()); prev && prev->input_hash == problem_hash &&
                                                            (o.resume || prev->status != "done")) {
    // the same problem in the same directory, unfinished (or resumed on purpose): continue that run,
    // so every verdict it recorded stands and nothing verified is measured again
    run_id = prev->id;
    continuing = true;
    st.set_run_status(run_id, "running");
    spdlog::info("continuing run {} recorded in {}", run_id, out.string());
  } else if (o.resume) {
    throw UserError(fmt::format("{}: the store in {} has no run of this problem to resume", out.string(),
                                o.workspace.string()));
  } else {
    run_id = st.create_run(rec);
  }
  util::write_file_atomic(out / "options.json", saved_options(o).dump(1) + "\n");

  try {
    return run(o, gpus, st, run_id, run_dir, problem_hash, rec.options, continuing);
  } catch (const llm::PendingAnswer& e) {
    st.set_run_status(run_id, "waiting");
    throw WaitingForAnswers(fmt::format("waiting for LLM answers ({}); when they are written, run: kernelopt resume {}",
                                        e.what(), out.string()));
  } catch (const agents::LlmRequiredError& e) {
    st.set_run_status(run_id, "failed");
    throw UserError(e.what());
  } catch (...) {
    st.set_run_status(run_id, "failed");
    throw;
  }
}

namespace {

/// Writes every kernel whose winner passed all four gates and is in the final, end-to-end verified
/// module into the library; returns the report's "library" object.
json update_library(Context& ctx, store::Library& library, const std::vector<artifact::Module>& modules,
                    const std::vector<std::string>& stitched, const report::Report& rep, const json& capture) {
  json reused = json::array(), written = json::array();
  const json& versions = capture.value("versions", json::object());
  EntryContext ec;
  ec.device = capture.value("device_name", versions.value("gpu", std::string("?")));
  ec.torch_version = versions.value("torch", "");
  ec.triton_version = versions.value("triton", "");
  ec.run_id = ctx.run_id;
  ec.run_out_dir = ctx.out.string();
  ec.input_kind = ctx.input.library_kind();
  const auto& e2e = rep.end_to_end;
  ec.end_to_end = {{"passed", e2e.passed}, {"speedup", e2e.speedup.speedup}, {"ci_low", e2e.speedup.ci_low},
                   {"ci_high", e2e.speedup.ci_high}};
  const bool kept = rep.kernels_kept && e2e.passed;
  for (const auto& m : modules) {
    for (const auto& kr : rep.modules[m.index].kernels) {
      const auto& outcome = kr.outcome;
      if (outcome.status != "improved") continue;
      const bool in_final = kept && stitched[m.index] != m.source &&
                            stitched[m.index].find(outcome.winner_source) != std::string::npos;
      if (outcome.library_entry != 0 && in_final) reused.push_back(kr.profile.name);
      auto fps = ctx.fingerprints.find(m.index);
      if (!in_final || fps == ctx.fingerprints.end() || !fps->second.contains(kr.profile.name)) continue;
      ec.fingerprint = fps->second.at(kr.profile.name);
      const auto* kernel = m.find_kernel(kr.profile.name);
      // the stored winner for this fingerprint failed this run's gates: the new verified one replaces it
      bool stored_failed = false;
      for (const auto& a : outcome.attempts) stored_failed |= a.value("origin", "") == "library" && !a.value("passed", true);
      std::string conflict;
      try {
        auto result = library.put(library_entry(*kernel, outcome, ec), &conflict, stored_failed);
        written.push_back({{"kernel", kr.profile.name}, {"fingerprint", ec.fingerprint},
                           {"result", store::to_string(result)}});
        spdlog::info("library: {} {} ({}){}", kr.profile.name, store::to_string(result), ec.fingerprint.substr(0, 12),
                     conflict.empty() ? "" : "; " + conflict);
      } catch (const store::StoreError& e) {
        spdlog::warn("library: {} not written: {}", kr.profile.name, e.what());
      }
    }
  }
  return {{"path", library.path().string()}, {"reused", reused}, {"written", written}};
}

/// Stage 0: the problem file (a Helion run's exported Triton file), then the GPU, before the first progress
/// line: bad input is one line on stderr. Returns what preparing the problem found (a Helion export's
/// kernel, config and Helion's version; null otherwise).
json validate_input(Context& ctx, const fs::path& out) {
  const auto& o = ctx.options;
  json prepared;
  try {
    prepared = ctx.input.prepare_problem(ctx, out);
    ctx.request("validate", ctx.base_args);
  } catch (const UserError&) {
    throw;
  } catch (const std::exception& e) {  // the worker did not start: a wrong --python, or torch missing
    throw UserError(fmt::format("the worker did not start with {}: {}", o.python, e.what()));
  }
  return prepared;
}

/// What the capture gave: the worker's reply and the output modules parsed from it.
struct Capture {
  json reply;
  std::vector<artifact::Module> modules;
};

/// Stage 1: the problem compiled (or a standalone file's launches recorded) on the seeds; the modules and
/// their kernels' library fingerprints.
Capture capture_modules(Context& ctx, const fs::path& out) {
  const auto& o = ctx.options;
  spdlog::info("[1/5] capturing: {} {} (seeds {})", ctx.input.capture_what(),
               ctx.base_args["problem"].get<std::string>(), fmt::join(o.seeds, ","));
  json cap_args = ctx.base_args;
  cap_args["out_dir"] = out.string();
  Capture cap;
  cap.reply = ctx.request("capture", cap_args);
  for (const auto& m : cap.reply["modules"]) {
    std::string path = m["path"];
    cap.modules.push_back(artifact::module_from_json(m["artifact"], util::read_file(path), m["index"], path));
    if (m.contains("fingerprints")) {
      ctx.fingerprints[m["index"].get<int>()] = m["fingerprints"].get<std::map<std::string, std::string>>();
    }
  }
  for (const auto& m : cap.modules) {
    spdlog::info("  module {}: {} Triton kernel(s), {} vendor call(s)", m.index, m.kernels.size(), m.vendor_calls.size());
  }
  return cap;
}

/// Stage 2 for one module: its kernels profiled, diagnosed and given a budget (the LLM Profiler and Planner
/// where configured). Kernels with a budget become search jobs (`index`: the module's place in the report).
report::ModuleReport profile_and_plan(Context& ctx, const artifact::Module& m, size_t index, std::vector<SearchJob>& jobs) {
  spdlog::info("[2/5] profiling module {}", m.index);
  json raw;
  auto profiles = profile_module(ctx, m, raw);
  if (ctx.llm) {  // the LLM Profiler's diagnosis replaces the rules' sentence; the numbers stay measured
    for (const auto& [name, text] : ask_profiler(ctx, profiles, raw.value("bandwidth_gbps", 0.0))) {
      for (auto& p : profiles) {
        if (p.name == name) p.diagnosis = text;
      }
    }
  }
  report::ModuleReport mr;
  mr.index = m.index;
  mr.module_ms = verify::median(samples_of(raw["module_samples_ms"]));
  mr.bandwidth_gbps = raw.value("bandwidth_gbps", 0.0);
  for (const auto& v : m.vendor_calls) mr.vendor_calls.push_back(v.op);
  auto plan = agents::plan(profiles, ctx.options.budget);
  if (ctx.llm) {
    if (auto llm_plan = ask_planner(ctx, profiles, ctx.options.budget)) plan = *llm_plan;
  }
  for (const auto& p : profiles) {
    const auto* k = m.find_kernel(p.name);
    const json& raw_k = *std::find_if(raw["kernels"].begin(), raw["kernels"].end(),
                                      [&](const json& j) { return j["name"] == p.name; });
    ctx.store.upsert_kernel(ctx.run_id, m.index, p.name, p.kind, k->source_hash, p.to_json());
    report::KernelReport kr;
    kr.profile = p;
    kr.aten_ops = k->aten_ops;
    kr.baseline_config = raw_k["config"];
    auto it = std::find_if(plan.begin(), plan.end(), [&](const auto& pi) { return pi.kernel == p.name; });
    if (it != plan.end()) kr.plan = *it;
    spdlog::info("  {} {}: {:.4f} ms ({:.0f}% of module), {}", p.kind, p.name, p.time_ms, 100 * p.share,
                 p.diagnosis);
    mr.kernels.push_back(kr);
  }
  for (size_t k = 0; k < mr.kernels.size(); ++k) {
    auto& kr = mr.kernels[k];
    if (kr.plan.budget > 0) {
      jobs.push_back({index, k});
      continue;
    }
    kr.outcome.status = "skipped";
    kr.outcome.why = kr.plan.why.rfind("skipped: ", 0) == 0 ? kr.plan.why.substr(9) : kr.plan.why;
  }
  return mr;
}

/// Stage 3: the planned kernel searches; per module, kernel name -> the winning kernel source.
std::vector<std::map<std::string, std::string>> tune_kernels(Context& ctx, const std::vector<artifact::Module>& modules,
                                                             report::Report& rep, const std::vector<SearchJob>& jobs,
                                                             const std::vector<std::string>& gpus,
                                                             std::map<std::string, worker::RequestTime>& other_workers) {
  spdlog::info("[3/5] tuning: {} kernel(s) planned{}", jobs.size(),
               ctx.options.search_seconds > 0 ? fmt::format(", within {} s (--search-seconds)", ctx.options.search_seconds)
                                              : "");
  if (ctx.options.search_seconds > 0) {
    ctx.search_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(ctx.options.search_seconds);
  }
  rep.cost.workers = static_cast<int>(search_kernels(ctx, modules, rep, jobs, gpus, other_workers));
  std::vector<std::map<std::string, std::string>> winners(modules.size());
  for (const auto& mr : rep.modules) {
    for (const auto& kr : mr.kernels) {
      if (kr.outcome.status == "improved") winners[mr.index][kr.profile.name] = kr.outcome.winner_source;
    }
  }
  return winners;
}

/// Stage 4: each module with its winners stitched in, written to the run directory; the modules' texts.
std::vector<std::string> stitch_modules(Context& ctx, const std::vector<artifact::Module>& modules,
                                        const std::vector<std::map<std::string, std::string>>& winners,
                                        report::Report& rep, RunDir& run_dir) {
  spdlog::info("[4/5] stitching");
  std::vector<std::string> stitched(modules.size());
  for (const auto& m : modules) {
    std::string optimized = stitch_module(ctx, m, winners[m.index], rep.modules[m.index]);
    run_dir.write_optimized(m.index, optimized, optimized != m.source);
    stitched[m.index] = optimized;
  }
  run_dir.write_manifest();
  return stitched;
}

/// Stage 5: the run as users load it, on fresh seeds. Not verified, or not faster end to end: the baseline
/// modules are written back and checked again.
void verify_end_to_end(Context& ctx, const std::vector<artifact::Module>& modules, report::Report& rep,
                       RunDir& run_dir) {
  spdlog::info("[5/5] verifying end to end on fresh seeds {}", fmt::join(ctx.options.final_seeds, ","));
  rep.end_to_end = final_check(ctx, run_dir);
  if (!rep.end_to_end.passed && run_dir.any_optimized()) {  // not a success, even if the baseline passes below
    const bool ran = rep.end_to_end.ran;
    rep.reverted_check = {{"outcome", ran ? "did not pass" : "could not run"},
                          {"why", ran ? rep.end_to_end.why : rep.end_to_end.failure}};
  }
  if (rep.end_to_end.passed && run_dir.any_optimized() && rep.end_to_end.speedup.speedup < 1.0) {
    // verified per kernel, but the model as users call it is not measured faster: when unsure, keep the baseline
    rep.end_to_end.passed = false;
    rep.end_to_end.why = fmt::format("end to end {:.3f}x [{:.3f}, {:.3f}] is not faster than the baseline",
                                     rep.end_to_end.speedup.speedup, rep.end_to_end.speedup.ci_low,
                                     rep.end_to_end.speedup.ci_high);
  }
  if (!rep.end_to_end.passed && run_dir.any_optimized()) {
    spdlog::warn("end-to-end verification failed ({}); keeping the compiler's baseline", rep.end_to_end.why);
    for (const auto& m : modules) run_dir.write_optimized(m.index, m.source, false);
    run_dir.write_manifest();
    rep.reverted_why = rep.end_to_end.why;
    rep.end_to_end = final_check(ctx, run_dir);
  }
  // a kept whole-model decision meets the same rule, on what is left: verified and not slower than default
  if (const std::string why = decision_unconfirmed_why(rep.decisions, rep.end_to_end.passed, rep.end_to_end.speedup);
      !why.empty()) {
    spdlog::warn("decision {} dropped ({}); keeping torch.compile default", report::kept_decision(rep.decisions), why);
    rep.decisions = drop_kept_decision(rep.decisions, why);
    run_dir.set_decision({{"kept", rep.decisions["kept"]}, {"settings", rep.decisions["settings"]}});
    run_dir.write_manifest();
    ctx.base_args.erase("compile_settings");
    rep.end_to_end = final_check(ctx, run_dir);
  }
  // a dropped decision leaves no kernel behind: kernels are reverted before the decision is judged
  rep.kernels_kept = run_dir.any_optimized();
}

/// report.json and report.md written, the run marked done in the store; returns report.json.
json write_report(Context& ctx, report::Report& rep) {
  json report_json = report::to_json(rep);
  report::write(rep, ctx.out);
  ctx.store.set_run_status(ctx.run_id, "done", report_json["summary"]);
  spdlog::info("done: {}", report_json["summary"]["headline"].get<std::string>());
  spdlog::info("outputs in {} (report.md, report.json, optimized/, manifest.json)", ctx.out.string());
  return report_json;
}

json run(const OptimizeOptions& o, const std::vector<std::string>& gpus, store::Store& st, int64_t run_id,
         RunDir& run_dir, const std::string& problem_hash, const json& options, bool continuing) {
  const auto started = std::chrono::steady_clock::now();
  const fs::path out = run_dir.path();
  worker::Worker w(worker_options(o, out));
  ProcessWorker link(w);
  agents::LlmSession llm(o.llm, st, run_id);
  store::Library library = store::Library::open(o.library_path());
  Context ctx{o, input_kind_named(o.input_kind), link, st, run_id, out, {}, o.llm.configured() ? &llm : nullptr};
  ctx.library = &library;
  ctx.base_args = {{"problem", fs::absolute(o.problem).string()}, {"device", o.device}, {"seeds", o.seeds},
                   {"input_kind", ctx.input.name()}};
  ctx.continuing = continuing;

  const json prepared = validate_input(ctx, out);  // a Helion run: what its export said
  run_dir.mark_validated();
  if (ctx.llm) ctx.llm->preflight();  // a missing key or a dead endpoint: one line now, not per agent later
  const json decisions = decisions_before_capture(ctx, run_dir);  // null without --decisions
  const Capture cap = capture_modules(ctx, out);
  report::Report rep;
  rep.problem = o.problem.string();
  rep.problem_hash = problem_hash;
  rep.out_dir = out.string();
  rep.versions = cap.reply["versions"];
  rep.options = options;
  rep.problem_work = cap.reply.value("work", json());  // a standalone kernel file has none
  rep.decisions = decisions;
  std::vector<SearchJob> jobs;
  for (const auto& m : cap.modules) rep.modules.push_back(profile_and_plan(ctx, m, rep.modules.size(), jobs));
  std::map<std::string, worker::RequestTime> other_workers;
  const auto winners = tune_kernels(ctx, cap.modules, rep, jobs, gpus, other_workers);
  const auto stitched = stitch_modules(ctx, cap.modules, winners, rep, run_dir);
  verify_end_to_end(ctx, cap.modules, rep, run_dir);
  if (!cap.modules.empty()) ctx.input.write_outputs(ctx, out);

  rep.input_kind = o.input_kind;
  rep.helion = prepared;
  rep.library = update_library(ctx, library, cap.modules, stitched, rep, cap.reply);
  if (ctx.llm) rep.llm = ctx.llm->usage();
  rep.cost.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  rep.cost.continued = continuing;
  rep.cost.requests = w.request_times();
  add_request_times(rep.cost.requests, other_workers);
  return write_report(ctx, rep);
}

}  // namespace

}  // namespace kernelopt::engine
