/// \file
/// Subcommands of the kernelopt CLI. Each registers its options on the app
/// and returns the function that runs it (exit status).
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace kernelopt::cli {

using Runner = std::function<int()>;

/// Exit status of a run that stopped to wait for LLM answers (relay); `kernelopt resume` continues it.
inline constexpr int kExitWaiting = 75;  // EX_TEMPFAIL: try again later
inline constexpr int kExitCheckFailed = 4;  // the run finished, but its end-to-end check did not pass or run

/// --device: an NVIDIA GPU (cuda, cuda:N), or the CPU under Triton's interpreter (cpu); anything else is one line.
CLI::Validator torch_device();

Runner add_optimize(CLI::App& app);
Runner add_optimize_kernel(CLI::App& app);
Runner add_optimize_helion(CLI::App& app);
Runner add_resume(CLI::App& app);
Runner add_inspect(CLI::App& app);
Runner add_doctor(CLI::App& app);
Runner add_bench(CLI::App& app);
Runner add_bench_merge(CLI::App& app);
Runner add_library(CLI::App& app);

}  // namespace kernelopt::cli
