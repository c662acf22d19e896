// napisim: HostModel, the simulated server's event loop and clock.
//
// The host model owns the event queue every per-packet, per-interrupt and per-scheduling event
// goes through. Its time boundary is exactly two calls: next_event_time() (a query) and
// advance_to(horizon), which processes every event with time <= horizon in (time, class, seq)
// order. The SimGrid adapter (sim/simgrid/resource_model.*) calls them from the engine's solve()
// loop; unit tests call them directly. No other code path advances simulated time.
#pragma once

#include <cstdint>

#include "sim/core/event_queue.hpp"
#include "sim/core/time.hpp"

namespace napisim {

class HostModel {
 public:
  HostModel() = default;
  HostModel(const HostModel&) = delete;
  HostModel& operator=(const HostModel&) = delete;

  EventQueue& queue() { return queue_; }
  Nanos now() const { return now_; }

  void schedule(Nanos at, Prio prio, EventSink* sink, std::uint32_t kind, std::uint64_t arg = 0) {
    queue_.push(at, prio, sink, kind, arg);
  }
  void schedule_in(Nanos delay, Prio prio, EventSink* sink, std::uint32_t kind, std::uint64_t arg = 0) {
    queue_.push(now_ + delay, prio, sink, kind, arg);
  }

  /// Earliest pending (non-cancelled) event, or kNever. Drops cancelled events from the top.
  Nanos next_event_time() {
    queue_.skip_stale();
    return queue_.next_time();
  }

  /// Processes every event with time <= horizon, then sets the clock to horizon (unless kNever).
  void advance_to(Nanos horizon);

  /// Order key (EventQueue::reserve()) of the event being processed; outside advance_to()'s
  /// handlers, a key after every other: (now(), current_order()) is the point the run has reached,
  /// and a reserved event with a smaller (time, order) is one that would already have happened.
  std::uint64_t current_order() const { return order_; }
  /// Whether the event (time, order) precedes the point the run has reached (or is the event
  /// being processed).
  bool reached(Nanos time, std::uint64_t order) const { return time < now_ || (time == now_ && order <= order_); }

  std::uint64_t events_processed() const { return events_; }
  /// Running hash of (time, kind) of every processed event (OMNeT++-style trajectory fingerprint).
  std::uint64_t fingerprint() const { return fingerprint_; }

 private:
  EventQueue queue_;
  static constexpr std::uint64_t kAfterAll = ~0ULL;
  Nanos now_ = 0;
  std::uint64_t order_ = kAfterAll;
  std::uint64_t events_ = 0;
  std::uint64_t fingerprint_ = 0x9e3779b97f4a7c15ULL;
};

}  // namespace napisim
