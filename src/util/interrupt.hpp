/// \file
/// What Ctrl-C (SIGINT) leaves: one line on stderr, then exit status 130 (the shell's 128 + SIGINT) at
/// once. Nothing is cleaned up on purpose: everything a run writes survives a kill (the store's
/// transactions, atomic file writes, a lock the kernel drops), so a run stopped here resumes as a
/// killed one does, and its workers die with the engine (their parent-death signal).
#pragma once

#include <string>

namespace kernelopt::util {

/// Installs the SIGINT handler, printing `line` (a newline is added) when it fires.
void install_interrupt_handler(const std::string& line);

/// While alive, the handler prints `line` instead (e.g. how to resume the run under way); the line before
/// comes back when it ends. Nest them on one thread only.
class InterruptLine {
 public:
  explicit InterruptLine(const std::string& line);
  ~InterruptLine();
  InterruptLine(const InterruptLine&) = delete;
  InterruptLine& operator=(const InterruptLine&) = delete;

 private:
  std::string previous_;
};

}  // namespace kernelopt::util
