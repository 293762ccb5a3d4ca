// kernelopt: make a PyTorch model faster than torch.compile, verified.
#include <cstdio>
#include <map>
#include <string>

#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "engine/optimize.hpp"
#include "util/interrupt.hpp"
#include "util/log.hpp"
#include "util/version.hpp"

namespace {

/// An error is one line on stderr: line breaks inside a message become "; ".
std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || text[i] == '\r') {
      while (i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) ++i;
      out += "; ";
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kernelopt: rewrites the Triton kernels torch.compile generates, keeps only verified wins"};
  app.set_version_flag("--version", kernelopt::util::version());
  app.require_subcommand(1);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "debug output");
  std::map<CLI::App*, kernelopt::cli::Runner> runners;
  for (auto add : {kernelopt::cli::add_optimize, kernelopt::cli::add_optimize_kernel, kernelopt::cli::add_optimize_helion, kernelopt::cli::add_resume,
                   kernelopt::cli::add_inspect, kernelopt::cli::add_doctor, kernelopt::cli::add_bench,
                   kernelopt::cli::add_bench_merge, kernelopt::cli::add_library}) {
    auto before = app.get_subcommands([](CLI::App*) { return true; }).size();
    auto run = add(app);
    auto subs = app.get_subcommands([](CLI::App*) { return true; });
    runners[subs.at(before)] = run;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    if (argc > 1 && argv[1][0] != '-') {
      // a mistyped command: CLI11 would say only "A subcommand is required"
      std::string names;
      bool known = false;
      for (const CLI::App* s : app.get_subcommands([](CLI::App*) { return true; })) {
        names += (names.empty() ? "" : ", ") + s->get_name();
        known = known || s->get_name() == argv[1];
      }
      if (!known) {
        std::fprintf(stderr, "kernelopt: error: unknown command '%s' (commands: %s)\n", argv[1], names.c_str());
        return 2;
      }
    }
    std::fprintf(stderr, "kernelopt: error: %s (see --help)\n", one_line(e.what()).c_str());
    return 2;
  }
  kernelopt::util::setup_logging(verbose, "");
  kernelopt::util::install_interrupt_handler("kernelopt: interrupted");
  try {
    for (auto& [sub, run] : runners) {
      if (sub->parsed()) return run();
    }
  } catch (const kernelopt::engine::UserError& e) {
    std::fprintf(stderr, "kernelopt: error: %s\n", one_line(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernelopt: internal error: %s\n", one_line(e.what()).c_str());
    return 3;
  }
  return 1;
}
