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
//  * A few timers are re-armed at nearly every event of their owner (a CPU's end of segment):
//    adopt() gives such a timer a fixed leaf in a tournament tree beside the heap. Re-arming
//    rewrites its key in place (no stale entry), and pops take whichever of the heap top and the
//    tree's winner is earlier in the same (time, class, seq) order, so the order is unchanged.
#pragma once

#include <algorithm>
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

  bool empty() const { return heap_.empty() && armed_leaves_ == 0; }
  std::size_t size() const { return heap_.size() + armed_leaves_; }
  /// Time of the earliest queued event (stale ones included), or kNever.
  Nanos next_time() const {
    const Nanos h = heap_.empty() ? kNever : heap_.front().time;
    return tree_first() ? std::min(h, leaves_[win_[1]].time) : h;
  }
  Event top() const { return tree_first() ? resolve_leaf(win_[1]) : resolve(heap_.front()); }

  Event pop() {
    if (!tree_first()) return resolve(pop_entry());
    const std::uint32_t w = win_[1];
    const Event ev = resolve_leaf(w);
    clear_leaf(w);
    return ev;
  }

  /// Gives `t` a permanent leaf in the timer tree (see the header comment). The queue keeps a
  /// pointer to `t`: it must not move and must outlive the queue's use. Setup-time allocation only.
  inline void adopt(Timer& t);

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
  static constexpr std::uint64_t kNoOrder = ~0ULL;             // an unarmed leaf

  std::uint64_t next_order(Prio prio, std::uint32_t kind) {
    NAPISIM_ASSERT(kind < (1u << kSeqShift), "event kind out of range");
    return (static_cast<std::uint64_t>(prio) << 60) | ((seq_++ & kSeqMask) << kSeqShift) | kind;
  }

  static bool less(const Entry& a, const Entry& b) {
    __extension__ using U128 = unsigned __int128;
    return ((static_cast<U128>(static_cast<std::uint64_t>(a.time)) << 64) | a.order) <
           ((static_cast<U128>(static_cast<std::uint64_t>(b.time)) << 64) | b.order);
  }
  inline static bool entry_stale(const Entry& e);
  inline static Event resolve(const Entry& e);

  void push_entry(Nanos time, Prio prio, std::uint32_t kind, std::uintptr_t target, std::uint64_t arg) {
    NAPISIM_ASSERT(time >= 0, "event scheduled at negative time");
    heap_.push_back(Entry{time, next_order(prio, kind), target, arg});
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

  // ---- the timer tree: leaves_[i] is adopted timer i's key (kNoOrder when unarmed); win_ is a
  // winner tree over them (win_[1] the earliest leaf, win_[cap_ + i] == i).
  bool tree_first() const {
    if (armed_leaves_ == 0) return false;
    const Entry& l = leaves_[win_[1]];
    return heap_.empty() || less(l, heap_.front());
  }
  void set_leaf(std::uint32_t i, Nanos time, Prio prio, std::uint32_t kind) {
    NAPISIM_ASSERT(time >= 0, "event scheduled at negative time");
    if (leaves_[i].order == kNoOrder) ++armed_leaves_;
    leaves_[i].time = time;
    leaves_[i].order = next_order(prio, kind);
    replay(i);
  }
  void clear_leaf(std::uint32_t i) {
    if (leaves_[i].order == kNoOrder) return;
    --armed_leaves_;
    leaves_[i].time = kNever;
    leaves_[i].order = kNoOrder;
    replay(i);
  }
  /// Replays the matches on leaf i's path to the root.
  void replay(std::uint32_t i) {
    const Entry* l = leaves_.data();
    std::uint32_t* w = win_.data();
    for (std::size_t n = (cap_ + i) >> 1; n >= 1; n >>= 1) {
      const std::uint32_t a = w[2 * n], b = w[2 * n + 1];
      w[n] = less(l[b], l[a]) ? b : a;
    }
  }
  inline Event resolve_leaf(std::uint32_t i) const;

  std::vector<Entry> heap_;
  std::uint64_t seq_ = 0;
  std::vector<Entry> leaves_;
  std::vector<Timer*> leaf_timers_;
  std::vector<std::uint32_t> win_ = std::vector<std::uint32_t>(2, 0);
  std::size_t cap_ = 1;  // leaves_ capacity of the tree, a power of two
  std::size_t armed_leaves_ = 0;
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
    if (leaf_ >= 0) q.set_leaf(static_cast<std::uint32_t>(leaf_), at, prio, kind);
    else q.push_entry(at, prio, kind, reinterpret_cast<std::uintptr_t>(this) | 1, gen_);
  }
  void cancel() {
    if (armed_) {
      ++gen_;
      if (leaf_ >= 0) q_->clear_leaf(static_cast<std::uint32_t>(leaf_));
    }
    armed_ = false;
  }
  bool adopted() const { return leaf_ >= 0; }

  Timer() = default;
  // A copy is a fresh, unadopted timer with the same state (an adopted leaf belongs to one object).
  Timer(const Timer& o) : gen_(o.gen_), armed_(o.armed_), expires_(o.expires_), sink_(o.sink_), arg_(o.arg_) {}
  Timer& operator=(const Timer& o) {
    gen_ = o.gen_;
    armed_ = o.armed_;
    expires_ = o.expires_;
    sink_ = o.sink_;
    arg_ = o.arg_;
    return *this;
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
  int leaf_ = -1;              // adopted: index in the queue's timer tree
  EventQueue* q_ = nullptr;    // adopted: the queue holding the leaf
};

inline void EventQueue::adopt(Timer& t) {
  NAPISIM_ASSERT(!t.adopted() && !t.armed(), "adopt() a fresh, unarmed timer");
  t.leaf_ = static_cast<int>(leaf_timers_.size());
  t.q_ = this;
  leaf_timers_.push_back(&t);
  while (cap_ < leaf_timers_.size()) cap_ *= 2;
  leaves_.resize(cap_, Entry{kNever, kNoOrder, 0, 0});  // padding leaves stay unarmed
  win_.assign(2 * cap_, 0);
  for (std::size_t i = 0; i < cap_; ++i) win_[cap_ + i] = static_cast<std::uint32_t>(i);
  for (std::size_t n = cap_ - 1; n >= 1; --n) {
    const std::uint32_t a = win_[2 * n], b = win_[2 * n + 1];
    win_[n] = less(leaves_[b], leaves_[a]) ? b : a;
  }
}

inline Event EventQueue::resolve_leaf(std::uint32_t i) const {
  const Entry& l = leaves_[i];
  const Timer* t = leaf_timers_[i];
  return Event{l.time, l.order, t->sink_, t->arg_, nullptr, static_cast<std::uint32_t>(l.order & ((1u << kSeqShift) - 1)), 0};
}

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
  for (;;) {
    if (tree_first()) {
      const std::uint32_t w = win_[1];
      const Entry& l = leaves_[w];
      if (l.time > horizon) return false;
      const Timer* t = leaf_timers_[w];
      *time = l.time;
      *kind = static_cast<std::uint32_t>(l.order & ((1u << kSeqShift) - 1));
      *sink = t->sink_;
      *arg = t->arg_;
      clear_leaf(w);
      return true;
    }
    if (heap_.empty() || heap_.front().time > horizon) return false;
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
}

}  // namespace napisim
