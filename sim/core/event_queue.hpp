// napisim: the host model's own event queue.
//
// Per-packet, per-interrupt and per-scheduling events never go through SimGrid actors or timers
// (DESIGN.md): they live here and SimGrid drives this queue through the adapter in sim/simgrid/.
//  * Order is (time_ns, priority class, sequence number). The class makes same-time kernel
//    semantics explicit (wire before hardirq before timers before CPU work before control); the
//    sequence number gives FIFO order within a class. SimGrid's own same-time order is never used.
//  * Timers are cancelled by generation counters (Timer below), never by deleting from the heap.
//  * Events are plain 32-byte structs in one vector-backed binary heap: no allocation per event once
//    the vector has grown to the run's high-water mark.
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

/// A popped event, as delivered: what to call and whether it was cancelled.
struct Event {
  Nanos time;
  std::uint64_t order;  // (prio << 60) | (seq << 16) | kind
  EventSink* sink;
  std::uint64_t arg;
  const std::uint32_t* gen_ptr;  // non-null: cancellable; stale when *gen_ptr != gen
  std::uint32_t kind;
  std::uint32_t gen;
};

class Timer;

class EventQueue {
 public:
  EventQueue() { heap_.reserve(1024); }

  void push(Nanos time, Prio prio, EventSink* sink, std::uint32_t kind, std::uint64_t arg = 0) {
    push_entry(time, prio, kind, reinterpret_cast<std::uintptr_t>(sink), arg);
  }

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  /// Time of the earliest queued event (stale ones included), or kNever.
  Nanos next_time() const { return heap_.empty() ? kNever : heap_.front().time; }
  Event top() const { return resolve(heap_.front()); }

  Event pop() { return resolve(pop_entry()); }

  /// The hot path of HostModel::advance_to(): pops the earliest event if its time is <= horizon
  /// and it is live (stale ones are dropped on the way). False when nothing is due.
  inline bool pop_due(Nanos horizon, Nanos* time, EventSink** sink, std::uint32_t* kind, std::uint64_t* arg);

  /// Drops stale (cancelled) events from the top so next_time() is exact.
  void skip_stale() {
    while (!heap_.empty() && entry_stale(heap_.front())) pop_entry();
  }

  static bool is_stale(const Event& ev) { return ev.gen_ptr != nullptr && *ev.gen_ptr != ev.gen; }

 private:
  friend class Timer;
  // 32 bytes: the (time, order) key compares as one 128-bit number; the kind rides in the order's
  // low bits (below the unique seq, so it never affects the order). A timer's entry points at the
  // Timer (low bit set) and carries its generation instead of the argument.
  struct Entry {
    Nanos time;
    std::uint64_t order;
    std::uintptr_t target;  // EventSink*, or Timer* | 1
    std::uint64_t arg;      // the argument, or the timer's generation
  };
  static constexpr int kSeqShift = 16;
  static constexpr std::uint64_t kSeqMask = (1ULL << 44) - 1;  // 1.7e13 events per run

  static bool less(const Entry& a, const Entry& b) {
    __extension__ using U128 = unsigned __int128;
    return ((static_cast<U128>(static_cast<std::uint64_t>(a.time)) << 64) | a.order) <
           ((static_cast<U128>(static_cast<std::uint64_t>(b.time)) << 64) | b.order);
  }
  inline static bool entry_stale(const Entry& e);
  inline static Event resolve(const Entry& e);

  void push_entry(Nanos time, Prio prio, std::uint32_t kind, std::uintptr_t target, std::uint64_t arg) {
    NAPISIM_ASSERT(time >= 0, "event scheduled at negative time");
    NAPISIM_ASSERT(kind < (1u << kSeqShift), "event kind out of range");
    const std::uint64_t order =
        (static_cast<std::uint64_t>(prio) << 60) | ((seq_++ & kSeqMask) << kSeqShift) | kind;
    heap_.push_back(Entry{time, order, target, arg});
    sift_up(heap_.size() - 1);
  }

  Entry pop_entry() {
    const Entry top = heap_.front();
    const Entry last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down_from_root(last);
    return top;
  }

  void sift_up(std::size_t i) {
    const Entry ev = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!less(ev, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = ev;
  }
  /// Refills the root's hole with `last` bottom-up (Floyd): the hole follows the smaller child to a
  /// leaf (one comparison per level), then `last` moves up from there (usually not at all).
  void sift_down_from_root(const Entry& last) {
    const std::size_t n = heap_.size();
    Entry* h = heap_.data();
    std::size_t i = 0;
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && less(h[child + 1], h[child])) ++child;
      h[i] = h[child];
      i = child;
    }
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!less(last, h[parent])) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = last;
  }

  std::vector<Entry> heap_;
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
    sink_ = sink;
    arg_ = arg;
    q.push_entry(at, prio, kind, reinterpret_cast<std::uintptr_t>(this) | 1, gen_);
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
  friend class EventQueue;
  std::uint32_t gen_ = 0;
  bool armed_ = false;
  Nanos expires_ = kNever;
  EventSink* sink_ = nullptr;
  std::uint64_t arg_ = 0;
};

inline bool EventQueue::entry_stale(const Entry& e) {
  return (e.target & 1) != 0 && reinterpret_cast<const Timer*>(e.target - 1)->gen_ != static_cast<std::uint32_t>(e.arg);
}

inline Event EventQueue::resolve(const Entry& e) {
  const auto kind = static_cast<std::uint32_t>(e.order & ((1u << kSeqShift) - 1));
  if (e.target & 1) {
    const Timer* t = reinterpret_cast<const Timer*>(e.target - 1);
    return Event{e.time, e.order, t->sink_, t->arg_, &t->gen_, kind, static_cast<std::uint32_t>(e.arg)};
  }
  return Event{e.time, e.order, reinterpret_cast<EventSink*>(e.target), e.arg, nullptr, kind, 0};
}

inline bool EventQueue::pop_due(Nanos horizon, Nanos* time, EventSink** sink, std::uint32_t* kind, std::uint64_t* arg) {
  while (!heap_.empty() && heap_.front().time <= horizon) {
    const Entry e = pop_entry();
    if (e.target & 1) {
      const Timer* t = reinterpret_cast<const Timer*>(e.target - 1);
      if (t->gen_ != static_cast<std::uint32_t>(e.arg)) continue;  // cancelled
      *sink = t->sink_;
      *arg = t->arg_;
    } else {
      *sink = reinterpret_cast<EventSink*>(e.target);
      *arg = e.arg;
    }
    *time = e.time;
    *kind = static_cast<std::uint32_t>(e.order & ((1u << kSeqShift) - 1));
    return true;
  }
  return false;
}

}  // namespace napisim
