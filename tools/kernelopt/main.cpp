// kernelopt: make a PyTorch model faster than torch.compile, verified.
#include <cstdio>
#include <map>

#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "engine/optimize.hpp"
#include "util/log.hpp"
#include "util/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"kernelopt: rewrites the Triton kernels torch.compile generates, keeps only verified wins"};
  app.set_version_flag("--version", kernelopt::util::version());
  app.require_subcommand(1);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "debug output");
  std::map<CLI::App*, kernelopt::cli::Runner> runners;
  for (auto add : {kernelopt::cli::add_optimize, kernelopt::cli::add_inspect, kernelopt::cli::add_doctor}) {
    auto before = app.get_subcommands([](CLI::App*) { return true; }).size();
    auto run = add(app);
    auto subs = app.get_subcommands([](CLI::App*) { return true; });
    runners[subs.at(before)] = run;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  kernelopt::util::setup_logging(verbose, "");
  try {
    for (auto& [sub, run] : runners) {
      if (sub->parsed()) return run();
    }
  } catch (const kernelopt::engine::UserError& e) {
    std::fprintf(stderr, "kernelopt: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernelopt: internal error: %s\n", e.what());
    return 3;
  }
  return 1;
}
