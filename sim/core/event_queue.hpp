// napisim: the host model's own event queue.
//
// Per-packet, per-interrupt and per-scheduling events never go through SimGrid actors or timers
// (DESIGN.md): they live here and SimGrid drives this queue through the adapter in sim/simgrid/.
//  * Order is (time_ns, priority class, sequence number). The class makes same-time kernel
//    semantics explicit (wire before hardirq before timers before CPU work before control); the
//    sequence number gives FIFO order within a class. SimGrid's own same-time order is never used.
//  * Timers are cancelled by generation counters (Timer below), never by deleting from the heap.
//  * Events are plain structs in one vector-backed binary heap: no allocation per event once the
//    vector has grown to the run's high-water mark.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/time.hpp"

namespace napisim {

/// Same-time ordering classes, lowest first.
enum class Prio : std::uint8_t {
  kWire = 0,     ///< packet arrivals at a NIC or a client
  kHardirq = 1,  ///< interrupt delivery (MSI-X, IPI)
  kTimer = 2,    ///< hrtimers and ticks
  kCpu = 3,      ///< end of a CPU execution segment
  kControl = 4,  ///< phase changes, samplers
};

/// Anything that receives events implements this: one virtual call per event, no std::function.
class EventSink {
 public:
  virtual void on_event(std::uint32_t kind, std::uint64_t arg) = 0;

 protected:
  ~EventSink() = default;
};

struct Event {
  Nanos time;
  std::uint64_t order;  // (prio << 56) | seq
  EventSink* sink;
  std::uint64_t arg;
  const std::uint32_t* gen_ptr;  // non-null: cancellable; stale when *gen_ptr != gen
  std::uint32_t kind;
  std::uint32_t gen;

  bool before(const Event& o) const { return time < o.time || (time == o.time && order < o.order); }
};

class EventQueue {
 public:
  EventQueue() { heap_.reserve(1024); }

  void push(Nanos time, Prio prio, EventSink* sink, std::uint32_t kind, std::uint64_t arg = 0,
            const std::uint32_t* gen_ptr = nullptr, std::uint32_t gen = 0) {
    NAPISIM_ASSERT(time >= 0, "event scheduled at negative time");
    const std::uint64_t order = (static_cast<std::uint64_t>(prio) << 56) | (seq_++ & ((1ULL << 56) - 1));
    heap_.push_back(Event{time, order, sink, arg, gen_ptr, kind, gen});
    sift_up(heap_.size() - 1);
  }

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  /// Time of the earliest queued event (stale ones included), or kNever.
  Nanos next_time() const { return heap_.empty() ? kNever : heap_.front().time; }
  const Event& top() const { return heap_.front(); }

  Event pop() {
    Event ev = heap_.front();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    return ev;
  }

  /// Drops stale (cancelled) events from the top so next_time() is exact.
  void skip_stale() {
    while (!heap_.empty() && is_stale(heap_.front())) pop();
  }

  static bool is_stale(const Event& ev) { return ev.gen_ptr != nullptr && *ev.gen_ptr != ev.gen; }

 private:
  void sift_up(std::size_t i) {
    Event ev = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!ev.before(heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = ev;
  }
  void sift_down(std::size_t i) {
    const std::size_t n = heap_.size();
    Event ev = heap_[i];
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && heap_[child + 1].before(heap_[child])) ++child;
      if (!heap_[child].before(ev)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = ev;
  }

  std::vector<Event> heap_;
  std::uint64_t seq_ = 0;
};

/// A cancellable one-shot timer (hrtimer-like). Re-arming cancels the previous expiry. The Timer
/// must outlive the events it queued (it is a member of a long-lived kernel object).
class Timer {
 public:
  void arm(EventQueue& q, Nanos at, Prio prio, EventSink* sink, std::uint32_t kind, std::uint64_t arg = 0) {
    ++gen_;
    armed_ = true;
    expires_ = at;
    q.push(at, prio, sink, kind, arg, &gen_, gen_);
  }
  void cancel() {
    if (armed_) ++gen_;
    armed_ = false;
  }
  /// Call at the start of the handler: marks the timer as no longer pending.
  void fired() { armed_ = false; }
  bool armed() const { return armed_; }
  Nanos expires() const { return armed_ ? expires_ : kNever; }

 private:
  std::uint32_t gen_ = 0;
  bool armed_ = false;
  Nanos expires_ = kNever;
};

}  // namespace napisim
