// The SIGINT handler: one prepared line, then _exit. See interrupt.hpp.
#include "util/interrupt.hpp"

#include <unistd.h>

#include <csignal>
#include <cstring>

namespace kernelopt::util {
namespace {

// The handler may only read what is ready: the text is written while its length is 0, then the length set.
constexpr size_t kMaxLine = 4096;
char g_text[kMaxLine];
volatile std::sig_atomic_t g_length = 0;
std::string g_line;  // the same text, for InterruptLine to restore (never read by the handler)

constexpr int kInterruptedExit = 130;

extern "C" void on_interrupt(int) {
  const std::sig_atomic_t n = g_length;
  if (n > 0) {
    [[maybe_unused]] ssize_t w = ::write(STDERR_FILENO, g_text, static_cast<size_t>(n));
  }
  ::_exit(kInterruptedExit);
}

void set_line(const std::string& line) {
  g_line = line;
  g_length = 0;
  const std::string text = line.substr(0, kMaxLine - 1) + "\n";
  std::memcpy(g_text, text.data(), text.size());
  g_length = static_cast<std::sig_atomic_t>(text.size());
}

}  // namespace

void install_interrupt_handler(const std::string& line) {
  set_line(line);
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
}

InterruptLine::InterruptLine(const std::string& line) : previous_(g_line) { set_line(line); }

InterruptLine::~InterruptLine() { set_line(previous_); }

}  // namespace kernelopt::util
