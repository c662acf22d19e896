// napisim: the host model's own event queue.
//
// Per-packet, per-interrupt and per-scheduling events never go through SimGrid actors or timers
// (docs/design.md): they live here and SimGrid drives this queue through the adapter in sim/simgrid/.
//  * Order is (time_ns, priority class, sequence number). The class makes same-time kernel
//    semantics explicit (wire before hardirq before timers before CPU work before control); the
//    sequence number gives FIFO order within a class. SimGrid's own same-time order is never used.
//  * Timers are cancelled by generation counters (Timer below), never by deleting from the queue.
//  * Events are plain 32-byte structs. Almost every event is due within tens of microseconds (a CPU
//    segment's end, a packet's arrival), so the queue is a bucket queue over time (a calendar queue
//    without resizing; Brown, CACM 31(10), 1988): a small sorted array holds the current 128 ns
//    bucket (the event loop takes a bucket's single entry, the common case, without it),
//    a ring of 4096 unsorted buckets (linked lists in one pool) the next 524 us, and a second binary
//    heap anything later (ticks, long timers). An entry is only compared with its bucket's few
//    others, so a push and a pop cost a handful of comparisons instead of a heap's O(log) over the
//    whole queue's ~140 entries on tcp_rr_1B (mostly far ticks and wire arrivals); a bucket that
//    outgrows its array (a burst at one instant) spills into a heap. The pop order is exactly the (time,
//    class, seq) order: same seed, same trajectory.
//  * No allocation per event once the heaps and the pool have grown to the run's high-water mark.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
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
  EventQueue() {
    head_.fill(kNil);
    far_.reserve(256);
    pool_.reserve(1024);
    next_.reserve(1024);
  }

  void push(Nanos time, Prio prio, EventSink* sink, std::uint32_t kind, std::uint64_t arg = 0) {
    push_entry(time, prio, kind, reinterpret_cast<std::uintptr_t>(sink), arg);
  }

  /// Takes the next sequence number for an event that may never be queued: its order key
  /// (class, seq, kind) as push() would give it now. push_reserved() queues it later, in the
  /// place it would have had; a model that can do the event's work without the event (the work
  /// touches nothing anyone reads before some later event) does it once HostModel::reached()
  /// says the event's (time, order) has been passed.
  std::uint64_t reserve(Prio prio, std::uint32_t kind) { return make_order(prio, kind); }
  void push_reserved(Nanos time, std::uint64_t order, EventSink* sink, std::uint64_t arg = 0) {
    place(Entry{time, order, reinterpret_cast<std::uintptr_t>(sink), arg});
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  /// Time of the earliest queued event (stale ones included), or kNever.
  Nanos next_time() { return make_current() ? current_.top().time : kNever; }
  Event top() {
    const bool queued = make_current();
    NAPISIM_ASSERT(queued, "top() of an empty event queue");
    return resolve(current_.top());
  }

  Event pop() {
    const bool queued = make_current();
    NAPISIM_ASSERT(queued, "pop() of an empty event queue");
    return resolve(pop_entry());
  }

  /// The hot path of HostModel::advance_to(): pops the earliest event if its time is <= horizon
  /// and it is live (stale ones are dropped on the way). False when nothing is due.
  inline bool pop_due(Nanos horizon, Nanos* time, std::uint64_t* order, EventSink** sink, std::uint32_t* kind,
                      std::uint64_t* arg);

  /// Drops stale (cancelled) events from the top so next_time() is exact.
  void skip_stale() {
    while (make_current() && entry_stale(current_.top()))
      pop_entry();
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

  /// A vector-backed binary min-heap of entries by (time, order).
  class Heap {
   public:
    void reserve(std::size_t n) { h_.reserve(n); }
    bool empty() const { return h_.empty(); }
    const Entry& top() const { return h_.front(); }
    void push(const Entry& e) {
      h_.push_back(e);
      place_from(h_.size() - 1, e);
    }
    Entry pop() {
      const Entry top = h_.front();
      const Entry last = h_.back();
      h_.pop_back();
      if (!h_.empty()) sift_down_from_root(last);
      return top;
    }

   private:
    /// Puts `ev` into the hole at i, moving it up past larger parents.
    void place_from(std::size_t i, const Entry& ev) {
      Entry* h = h_.data();
      while (i > 0) {
        const std::size_t parent = (i - 1) / 2;
        if (!less(ev, h[parent])) break;
        h[i] = h[parent];
        i = parent;
      }
      h[i] = ev;
    }
    /// Refills the root's hole with `last` bottom-up (Floyd): the hole follows the smaller child to
    /// a leaf (one comparison per level), then `last` moves up from there (usually not at all).
    void sift_down_from_root(const Entry& last) {
      const std::size_t n = h_.size();
      Entry* h = h_.data();
      std::size_t i = 0;
      for (;;) {
        std::size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && less(h[child + 1], h[child])) ++child;
        h[i] = h[child];
        i = child;
      }
      place_from(i, last);
    }

    std::vector<Entry> h_;
  };

  /// The current bucket's entries. Nearly always a handful: kept sorted latest-first in a fixed
  /// array, the earliest is taken from the back and a push shifts the few later ones (cheaper
  /// than a heap's sift at these sizes). A bucket that outgrows the array (a burst at one
  /// instant, such as every flow starting at t = 0) spills into a binary heap until it empties.
  class CurrentBucket {
   public:
    bool empty() const { return n_ == 0 && heap_.empty(); }
    const Entry& top() const { return n_ ? sorted_[n_ - 1] : heap_.top(); }
    void push(const Entry& e) {
      std::size_t i = n_;
      if (i == kSorted || !heap_.empty()) [[unlikely]] {
        spill(e);
        return;
      }
      while (i > 0 && less(sorted_[i - 1], e)) {
        sorted_[i] = sorted_[i - 1];
        --i;
      }
      sorted_[i] = e;
      ++n_;
    }
    Entry pop() { return n_ ? sorted_[--n_] : heap_.pop(); }

   private:
    static constexpr std::size_t kSorted = 16;
    [[gnu::noinline]] void spill(const Entry& e) {
      for (std::size_t i = 0; i < n_; ++i)
        heap_.push(sorted_[i]);
      n_ = 0;
      heap_.push(e);
    }
    std::array<Entry, kSorted> sorted_;
    std::size_t n_ = 0;  // sorted_[0 .. n_) is in use, latest first
    Heap heap_;          // every entry of the bucket once it has spilled (n_ is then 0)
  };

  // Buckets: bucket b holds the times [b << kBucketShift, (b + 1) << kBucketShift). current_ holds
  // every entry of a bucket <= current_bucket_; ring slot b % kBuckets the entries of bucket b for
  // current_bucket_ < b < current_bucket_ + kBuckets; far_ the entries pushed beyond that window.
  // So every entry of current_ precedes every other entry.
  // 128 ns: tcp_rr_1B pushes about 9 M entries per simulated s (3.2 per transaction), 1.1 per
  // bucket; 64 and 256 ns cost the same instructions.
  static constexpr int kBucketShift = 7;
  // 4096 buckets, 524 us: the per-request timers of application workloads (wei2020/app_*, about
  // one per request, hundreds of us ahead) stay out of far_'s O(log n); 512 left them there.
  static constexpr int kBuckets = 4096;
  static constexpr int kWords = kBuckets / 64;
  static constexpr std::uint32_t kNil = 0xffffffffu;
  static constexpr std::int64_t kNoBucket = std::numeric_limits<std::int64_t>::max();

  std::uint64_t make_order(Prio prio, std::uint32_t kind) {
    NAPISIM_ASSERT(kind < (1u << kSeqShift), "event kind out of range");
    return (static_cast<std::uint64_t>(prio) << 60) | ((seq_++ & kSeqMask) << kSeqShift) | kind;
  }
  void push_entry(Nanos time, Prio prio, std::uint32_t kind, std::uintptr_t target, std::uint64_t arg) {
    place(Entry{time, make_order(prio, kind), target, arg});
  }
  // Inline: a ring bucket with a free pool node (nearly every push in steady state).
  void place(const Entry& e) {
    const Nanos time = e.time;
    NAPISIM_ASSERT(time >= 0, "event scheduled at negative time");
    ++size_;
    const std::int64_t bucket = time >> kBucketShift;
    const std::int64_t ahead = bucket - current_bucket_;
    const std::uint32_t n = free_;
    if (ahead <= 0 || ahead >= kBuckets || n == kNil) [[unlikely]] {
      push_elsewhere(e, ahead);
      return;
    }
    free_ = next_[n];
    pool_[n] = e;
    link(n, static_cast<std::size_t>(bucket & (kBuckets - 1)));
  }
  [[gnu::noinline]] void push_elsewhere(const Entry& e, std::int64_t ahead) {
    if (ahead <= 0) {
      current_.push(e);
    } else if (ahead >= kBuckets) {
      far_.push(e);
    } else {  // the pool grows
      const auto n = static_cast<std::uint32_t>(pool_.size());
      pool_.push_back(e);
      next_.push_back(kNil);
      link(n, static_cast<std::size_t>((e.time >> kBucketShift) & (kBuckets - 1)));
    }
  }
  void link(std::uint32_t n, std::size_t slot) {
    next_[n] = head_[slot];
    head_[slot] = n;
    occupied_[slot / 64] |= 1ULL << (slot % 64);
  }

  /// Ensures current_ holds the earliest entry: when it is empty, the earliest non-empty bucket
  /// (the ring's next occupied slot or far_'s first bucket) becomes current. False if the queue is
  /// empty.
  bool make_current() {
    if (!current_.empty()) return true;
    if (size_ == 0) return false;
    fill_current(std::min(next_ring_bucket(), far_bucket()));
    return true;
  }
  /// far_'s first bucket, or kNoBucket.
  std::int64_t far_bucket() const { return far_.empty() ? kNoBucket : far_.top().time >> kBucketShift; }
  /// Makes bucket b, the earliest non-empty one, current: its ring list and far_ entries move into
  /// current_ (empty until then).
  void fill_current(std::int64_t b) {
    NAPISIM_ASSERT(b != kNoBucket, "event queue: size counts an entry in no bucket");
    current_bucket_ = b;
    const auto slot = static_cast<std::size_t>(b & (kBuckets - 1));
    if (occupied_[slot / 64] & (1ULL << (slot % 64))) {
      // The slot can only hold bucket b: ring entries lie within kBuckets of the old current bucket.
      for (std::uint32_t n = head_[slot]; n != kNil;) {
        current_.push(pool_[n]);
        const std::uint32_t after = next_[n];
        free_node(n);
        n = after;
      }
      clear_slot(slot);
    }
    while (!far_.empty() && (far_.top().time >> kBucketShift) == b)
      current_.push(far_.pop());
  }

  /// The hot path's pop: the earliest entry, if its time is <= horizon. A ring bucket that holds a
  /// single entry (most buckets: tcp_rr_1B queues ~1 entry per 128 ns) becomes current and is
  /// emptied at once, its entry never passing through current_.
  bool take_due(Nanos horizon, Entry* out) {
    if (current_.empty()) {
      if (size_ == 0) return false;
      const std::int64_t b = next_ring_bucket();
      const std::int64_t fb = far_bucket();
      if (b < fb) {
        const auto slot = static_cast<std::size_t>(b & (kBuckets - 1));
        const std::uint32_t n = head_[slot];
        if (next_[n] == kNil) {
          if (pool_[n].time > horizon) return false;
          *out = pool_[n];
          current_bucket_ = b;
          free_node(n);
          clear_slot(slot);
          --size_;
          return true;
        }
      }
      fill_current(std::min(b, fb));
    }
    if (current_.top().time > horizon) return false;
    *out = pop_entry();
    return true;
  }

  void free_node(std::uint32_t n) {
    next_[n] = free_;
    free_ = n;
  }
  /// Marks ring slot `slot` empty (the caller has freed its nodes).
  void clear_slot(std::size_t slot) {
    head_[slot] = kNil;
    occupied_[slot / 64] &= ~(1ULL << (slot % 64));
  }

  /// The first occupied ring bucket after current_bucket_, or kNoBucket.
  std::int64_t next_ring_bucket() const {
    const auto start = static_cast<unsigned>((current_bucket_ + 1) & (kBuckets - 1));
    unsigned w = start / 64;
    std::uint64_t bits = occupied_[w] & (~0ULL << (start % 64));
    // kWords + 1 looks: the last one sees the start word again, whose bits below start are the
    // ring's wrap-around (the current bucket's own slot is never occupied).
    for (int i = 0; i <= kWords; ++i) {
      if (bits != 0) {
        const unsigned slot = w * 64 + static_cast<unsigned>(__builtin_ctzll(bits));
        return current_bucket_ + 1 + static_cast<std::int64_t>((slot - start) & (kBuckets - 1));
      }
      w = (w + 1) % kWords;
      bits = occupied_[w];
    }
    return kNoBucket;
  }

  /// Pops current_'s top; make_current() must have returned true.
  Entry pop_entry() {
    --size_;
    return current_.pop();
  }

  CurrentBucket current_;
  std::int64_t current_bucket_ = 0;
  std::array<std::uint32_t, kBuckets> head_;      // each slot's list, through next_
  std::array<std::uint64_t, kWords> occupied_{};  // slots with a non-empty list
  std::vector<Entry> pool_;                       // the ring's entries
  std::vector<std::uint32_t> next_;               // list links; also the free list's
  std::uint32_t free_ = kNil;
  Heap far_;
  std::size_t size_ = 0;
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

inline bool EventQueue::pop_due(Nanos horizon, Nanos* time, std::uint64_t* order, EventSink** sink, std::uint32_t* kind,
                                std::uint64_t* arg) {
  Entry e;
  while (take_due(horizon, &e)) {
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
    *order = e.order;
    *kind = static_cast<std::uint32_t>(e.order & ((1u << kSeqShift) - 1));
    return true;
  }
  return false;
}

}  // namespace napisim
