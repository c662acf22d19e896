#include "sim/core/host_model.hpp"

namespace napisim {

void HostModel::advance_to(Nanos horizon) {
  NAPISIM_ASSERT(horizon >= now_, "advance_to() into the past");
  while (!queue_.empty()) {
    if (queue_.top().time > horizon) break;
    const Event ev = queue_.pop();
    if (EventQueue::is_stale(ev)) continue;
    now_ = ev.time;
    ++events_;
    // Cheap multiplicative mix: enough to detect any change of trajectory.
    fingerprint_ = (fingerprint_ ^ (static_cast<std::uint64_t>(ev.time) + (static_cast<std::uint64_t>(ev.kind) << 48))) *
                   0x100000001b3ULL;
    ev.sink->on_event(ev.kind, ev.arg);
  }
  if (horizon != kNever) now_ = horizon;
}

}  // namespace napisim
