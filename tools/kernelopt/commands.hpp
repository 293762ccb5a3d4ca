/// \file
/// Subcommands of the kernelopt CLI. Each registers its options on the app
/// and returns the function that runs it (exit status).
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace kernelopt::cli {

using Runner = std::function<int()>;

Runner add_optimize(CLI::App& app);
Runner add_inspect(CLI::App& app);
Runner add_doctor(CLI::App& app);
Runner add_bench(CLI::App& app);

}  // namespace kernelopt::cli
