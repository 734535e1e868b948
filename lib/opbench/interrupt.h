// SIGINT and SIGTERM during a run: the first one sets a flag and the run winds down in order (the
// case in flight is dropped, no further case runs, every output is written with what finished); one
// that comes a second or more after it ends the process at once, as the signal's default does. A
// repeat within that second is the same request (`timeout` signals its child, then the child's process
// group) and is ignored. No LibTorch.
#pragma once

namespace opbench {

// Installs the handlers for SIGINT and SIGTERM. Idempotent.
void install_interrupt_handlers();

// The signal that asked the run to stop (SIGINT or SIGTERM), or 0 while none has.
int interrupt_signal();

// For tests: behaves as though `signal` had arrived (0 clears it).
void set_interrupt_signal_for_test(int signal);

}  // namespace opbench
