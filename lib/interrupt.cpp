// The stop flag of SIGINT and SIGTERM (contract: opbench/interrupt.h).
#include "opbench/interrupt.h"

#include <csignal>
#include <ctime>

namespace opbench {
namespace {

// A repeat this soon after the first signal is the same request: `timeout` sends SIGTERM to its child
// and then to the child's process group, and a terminal's Ctrl-C reaches every process of the group.
constexpr double kSameRequestSeconds = 1.0;

volatile std::sig_atomic_t g_signal = 0;
std::timespec g_first_at{};   // written once, before g_signal is set

double seconds_since(const std::timespec& then) {
  std::timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);   // async-signal-safe
  return static_cast<double>(now.tv_sec - then.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec - then.tv_nsec);
}

extern "C" void on_interrupt(int signal) {
  if (g_signal == 0) {
    clock_gettime(CLOCK_MONOTONIC, &g_first_at);
    g_signal = signal;
    return;
  }
  if (seconds_since(g_first_at) < kSameRequestSeconds) return;
  std::signal(signal, SIG_DFL);   // a second request: the default action (the process ends)
  std::raise(signal);
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);   // one handler at a time on a thread
  sigaddset(&action.sa_mask, SIGTERM);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int interrupt_signal() { return g_signal; }

void set_interrupt_signal_for_test(int signal) { g_signal = signal; }

}  // namespace opbench
