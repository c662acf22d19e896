// napisim: SIGINT and SIGTERM. The handler only records the signal; a run stops at the next event
// boundary (HostModel::advance_to) with a one-line message and exit status 128 + signal (130,
// 143), and a signal that arrives while results are written is honoured once they are all
// written, so that a result set is never half new and no temporary file is left behind.
//
// The recorded signal is process state by nature (a handler can touch nothing else): it is the
// one global napisim has.
#pragma once

#include <csignal>

namespace napisim::interrupt {

/// 0, or the number of the SIGINT/SIGTERM received since install().
extern volatile std::sig_atomic_t g_signal;

/// Installs the recording handlers for SIGINT and SIGTERM (SA_RESTART: a write in progress goes
/// on). Called again after SimGrid's engine has installed its own SIGINT handler, which exits.
void install();

/// Thrown where stopping needs cleanup first (calibrate's child simulations and temporary files);
/// the CLI prints the one line and exits with 128 + signal.
struct Interrupted {
  int signal;
};

/// Throws Interrupted if a signal was recorded.
void throw_if_signalled();

/// If a signal was recorded: prints "napisim: interrupted by SIG..., <what>" on stderr and exits
/// with 128 + signal, without unwinding (nothing is being written when it is called).
void exit_if_signalled(const char* what);

}  // namespace napisim::interrupt
