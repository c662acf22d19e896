#include "sim/core/interrupt.hpp"

#include <cstdio>
#include <cstdlib>

#include <unistd.h>

namespace napisim::interrupt {

volatile std::sig_atomic_t g_signal = 0;

namespace {
extern "C" void record(int sig) {
  g_signal = sig;
}
}  // namespace

void install() {
  struct sigaction sa {};
  sa.sa_handler = record;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

void throw_if_signalled() {
  if (g_signal != 0) throw Interrupted{g_signal};
}

void exit_if_signalled(const char* what) {
  const int sig = g_signal;
  if (sig == 0) return;
  std::fflush(stdout);
  std::fprintf(stderr, "napisim: interrupted by %s, %s\n", sig == SIGINT ? "SIGINT" : "SIGTERM", what);
  std::fflush(stderr);
  std::_Exit(128 + sig);
}

}  // namespace napisim::interrupt
