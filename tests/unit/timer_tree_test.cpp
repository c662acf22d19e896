// Adopted timers (sim/core/event_queue.hpp): a timer given a leaf in the queue's tournament tree
// must be delivered in exactly the (time, class, seq) order it would have had in the heap, with
// re-arm and cancel taking effect in place.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/event_queue.hpp"
#include "sim/core/host_model.hpp"

namespace napisim {
namespace {

class NullSink final : public EventSink {
 public:
  void on_event(std::uint32_t, std::uint64_t) override {}
};

struct Fired {
  Nanos time;
  std::uint32_t kind;
  std::uint64_t arg;
  bool operator==(const Fired&) const = default;
};

std::vector<Fired> drain(EventQueue& q) {
  std::vector<Fired> out;
  while (!q.empty()) {
    const Event ev = q.pop();
    if (EventQueue::is_stale(ev)) continue;
    out.push_back(Fired{ev.time, ev.kind, ev.arg});
  }
  return out;
}

TEST(TimerTreeTest, AdoptedTimersInterleaveWithHeapEventsInClassThenSeqOrder) {
  EventQueue q;
  NullSink s;
  Timer a, b;
  q.adopt(a);
  q.adopt(b);
  q.push(100, Prio::kCpu, &s, 1);             // seq 0
  a.arm(q, 100, Prio::kCpu, &s, 2);           // seq 1: after the plain event (same class, later seq)
  q.push(100, Prio::kHardirq, &s, 3);         // seq 2: first (lower class)
  b.arm(q, 50, Prio::kControl, &s, 4);        // earliest time wins regardless of class
  q.push(100, Prio::kCpu, &s, 5);             // seq 4: after a
  EXPECT_EQ(q.size(), 5u);
  EXPECT_EQ(q.next_time(), 50);
  const auto got = drain(q);
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].kind, 4u);
  EXPECT_EQ(got[1].kind, 3u);
  EXPECT_EQ(got[2].kind, 1u);
  EXPECT_EQ(got[3].kind, 2u);
  EXPECT_EQ(got[4].kind, 5u);
  EXPECT_TRUE(q.empty());
}

TEST(TimerTreeTest, RearmAndCancelTakeEffectInPlace) {
  EventQueue q;
  NullSink s;
  Timer t;
  q.adopt(t);
  t.arm(q, 300, Prio::kCpu, &s, 1, 7);
  t.arm(q, 200, Prio::kCpu, &s, 2, 8);  // replaces the first expiry: no stale entry
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(t.expires(), 200);
  t.cancel();
  EXPECT_FALSE(t.armed());
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.next_time(), kNever);
  t.arm(q, 400, Prio::kCpu, &s, 3, 9);
  const auto got = drain(q);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], (Fired{400, 3, 9}));
}

// The same pseudo-random load of re-armed timers and plain events gives the same delivery sequence
// whether the timers are adopted or live in the heap (stale entries and all).
TEST(TimerTreeTest, SameOrderAsHeapTimersOnARandomLoad) {
  auto run = [](bool adopt) {
    EventQueue q;
    NullSink s;
    std::vector<Timer> timers(37);  // not a power of two: padding leaves
    if (adopt)
      for (Timer& t : timers) q.adopt(t);
    std::uint64_t x = 0x9e3779b97f4a7c15ULL;
    auto rnd = [&x] {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      return x;
    };
    std::vector<Fired> out;
    Nanos now = 0;
    for (int step = 0; step < 20000; ++step) {
      const std::uint64_t r = rnd();
      const std::size_t i = r % timers.size();
      const Nanos at = now + static_cast<Nanos>((r >> 8) % 64);  // many same-time ties
      const auto prio = static_cast<Prio>((r >> 16) % 5);
      switch ((r >> 24) % 4) {
        case 0: timers[i].arm(q, at, prio, &s, 1, i); break;
        case 1: timers[i].cancel(); break;
        case 2: q.push(at, prio, &s, 2, r % 1000); break;
        default: {
          q.skip_stale();
          if (q.empty()) break;
          const Event ev = q.pop();
          if (EventQueue::is_stale(ev)) break;
          if (ev.kind == 1) timers[ev.arg].fired();
          now = ev.time;
          out.push_back(Fired{ev.time, ev.kind, ev.arg});
        }
      }
    }
    for (const Fired& f : drain(q)) out.push_back(f);
    return out;
  };
  const auto heap = run(false);
  const auto tree = run(true);
  ASSERT_GT(heap.size(), 5000u);
  EXPECT_EQ(heap, tree);
}

TEST(TimerTreeTest, HostModelDeliversAdoptedTimersUpToTheHorizon) {
  struct Sink final : EventSink {
    std::vector<Fired> got;
    HostModel* h = nullptr;
    void on_event(std::uint32_t kind, std::uint64_t arg) override { got.push_back(Fired{h->now(), kind, arg}); }
  } sink;
  HostModel h;
  sink.h = &h;
  Timer t;
  h.queue().adopt(t);
  t.arm(h.queue(), 10, Prio::kCpu, &sink, 1, 5);
  h.schedule(10, Prio::kWire, &sink, 2);
  h.advance_to(9);
  EXPECT_TRUE(sink.got.empty());
  EXPECT_EQ(h.next_event_time(), 10);
  h.advance_to(10);
  ASSERT_EQ(sink.got.size(), 2u);
  EXPECT_EQ(sink.got[0], (Fired{10, 2, 0}));  // kWire before kCpu at the same time
  EXPECT_EQ(sink.got[1], (Fired{10, 1, 5}));
  EXPECT_EQ(h.next_event_time(), kNever);
}

}  // namespace
}  // namespace napisim
