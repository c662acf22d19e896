#include "sim/core/host_model.hpp"

#include <cstdio>

#include "sim/core/interrupt.hpp"

namespace napisim {

void HostModel::advance_to(Nanos horizon) {
  NAPISIM_ASSERT(horizon >= now_, "advance_to() into the past");
  Nanos time;
  EventSink* sink;
  std::uint32_t kind;
  std::uint64_t arg;
  while (queue_.pop_due(horizon, &time, &order_, &sink, &kind, &arg)) {
    if (interrupt::g_signal) [[unlikely]] {  // SIGINT/SIGTERM: stop between two events
      char what[96];
      std::snprintf(what, sizeof what, "run stopped at %.6f s simulated; no results written", to_seconds(now_));
      interrupt::exit_if_signalled(what);
    }
    now_ = time;
    ++events_;
    // Cheap multiplicative mix: enough to detect any change of trajectory.
    fingerprint_ = (fingerprint_ ^ (static_cast<std::uint64_t>(time) + (static_cast<std::uint64_t>(kind) << 48))) *
                   0x100000001b3ULL;
    sink->on_event(kind, arg);
  }
  order_ = kAfterAll;  // every event due by now has been processed
  if (horizon != kNever) now_ = horizon;
}

}  // namespace napisim
