// The stop flag of SIGINT and SIGTERM (contract: opbench/interrupt.h).
#include "opbench/interrupt.h"

#include <csignal>

namespace opbench {
namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_interrupt(int signal) {
  if (g_signal != 0) {   // the second signal: the default action (the process ends)
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  g_signal = signal;
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int interrupt_signal() { return g_signal; }

void set_interrupt_signal_for_test(int signal) { g_signal = signal; }

}  // namespace opbench
