// HostModel (sim/core/host_model.hpp) driven directly through advance_to(), the same call the SimGrid
// adapter makes: inclusive horizons, the clock, and the trajectory fingerprint.
#include "sim/core/host_model.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace napisim {
namespace {

// Records (now, kind, arg) of every delivered event.
class Recorder final : public EventSink {
 public:
  explicit Recorder(HostModel& h) : host_(h) {}
  void on_event(std::uint32_t kind, std::uint64_t arg) override { seen.push_back(Seen{host_.now(), kind, arg}); }
  struct Seen {
    Nanos now;
    std::uint32_t kind;
    std::uint64_t arg;
  };
  std::vector<Seen> seen;

 private:
  HostModel& host_;
};

// Each event reschedules itself `period` later (a self-clocked stream, like a periodic tick).
class Ticker final : public EventSink {
 public:
  Ticker(HostModel& h, Nanos period, std::uint32_t kind) : host_(h), period_(period) {
    host_.schedule(period_, Prio::kTimer, this, kind);
  }
  void on_event(std::uint32_t kind, std::uint64_t) override {
    ++ticks;
    last = host_.now();
    host_.schedule_in(period_, Prio::kTimer, this, kind);
  }
  std::uint64_t ticks = 0;
  Nanos last = -1;

 private:
  HostModel& host_;
  Nanos period_;
};

TEST(HostModelTest, AdvanceToIsInclusiveAndSetsNowToTheHorizon) {
  HostModel h;
  Recorder r(h);
  h.schedule(10, Prio::kCpu, &r, 1);
  h.schedule(20, Prio::kCpu, &r, 2);
  h.schedule(21, Prio::kCpu, &r, 3);
  h.advance_to(20);
  ASSERT_EQ(r.seen.size(), 2u);
  EXPECT_EQ(r.seen[0].now, 10);  // now() inside a handler is the event's time
  EXPECT_EQ(r.seen[1].now, 20);  // the event exactly at the horizon runs
  EXPECT_EQ(h.now(), 20);
  EXPECT_EQ(h.next_event_time(), 21);
  h.advance_to(20);  // same horizon again: nothing new
  EXPECT_EQ(r.seen.size(), 2u);
  h.advance_to(100);
  ASSERT_EQ(r.seen.size(), 3u);
  EXPECT_EQ(r.seen[2].now, 21);
  EXPECT_EQ(h.now(), 100);  // the clock moves to the horizon even with no event there
  EXPECT_EQ(h.events_processed(), 3u);
  EXPECT_EQ(h.next_event_time(), kNever);
}

TEST(HostModelTest, EventsScheduledAtNowDuringAdvanceRunInTheSameCall) {
  HostModel h;
  class Chain final : public EventSink {
   public:
    explicit Chain(HostModel& hm) : h_(hm) {}
    void on_event(std::uint32_t kind, std::uint64_t) override {
      times.push_back(h_.now());
      if (kind < 3) h_.schedule_in(kind == 0 ? 0 : 5, Prio::kCpu, this, kind + 1);
    }
    std::vector<Nanos> times;

   private:
    HostModel& h_;
  } c(h);
  h.schedule(10, Prio::kCpu, &c, 0);
  h.advance_to(15);
  // 10 (kind 0) -> 10 (kind 1, zero delay) -> 15 (kind 2, at the horizon) -> 20 (kind 3, after it)
  EXPECT_EQ(c.times, (std::vector<Nanos>{10, 10, 15}));
  h.advance_to(20);
  EXPECT_EQ(c.times, (std::vector<Nanos>{10, 10, 15, 20}));
}

TEST(HostModelTest, SameTimeEventsFollowClassThenFifo) {
  HostModel h;
  Recorder r(h);
  h.schedule(5, Prio::kControl, &r, 4, 0);
  h.schedule(5, Prio::kCpu, &r, 3, 0);
  h.schedule(5, Prio::kWire, &r, 0, 0);
  h.schedule(5, Prio::kWire, &r, 0, 1);
  h.schedule(5, Prio::kHardirq, &r, 1, 0);
  h.advance_to(5);
  ASSERT_EQ(r.seen.size(), 5u);
  EXPECT_EQ(r.seen[0].kind, 0u);
  EXPECT_EQ(r.seen[0].arg, 0u);
  EXPECT_EQ(r.seen[1].kind, 0u);
  EXPECT_EQ(r.seen[1].arg, 1u);
  EXPECT_EQ(r.seen[2].kind, 1u);
  EXPECT_EQ(r.seen[3].kind, 3u);
  EXPECT_EQ(r.seen[4].kind, 4u);
}

TEST(HostModelTest, ReachedComparesWithTheEventBeingProcessed) {
  // Reserved keys at t=5: w1 (wire) before the processed event p (hardirq), w2 (wire, reserved
  // later, but the class orders it before p too), c (cpu) after p. While p is processed, reached()
  // holds for everything before t=5, for w1, w2 and p itself, not for c or t=6; after
  // advance_to() returns, for everything up to the horizon.
  HostModel h;
  const std::uint64_t w1 = h.queue().reserve(Prio::kWire, 9);
  class Probe final : public EventSink {
   public:
    explicit Probe(HostModel& host) : host_(host) {}
    void on_event(std::uint32_t, std::uint64_t) override {
      got.push_back(host_.reached(4, ~0ULL));
      got.push_back(host_.reached(5, w1));
      got.push_back(host_.reached(5, w2));
      got.push_back(host_.reached(5, host_.current_order()));
      got.push_back(host_.reached(5, c));
      got.push_back(host_.reached(6, 0));
    }
    HostModel& host_;
    std::uint64_t w1 = 0, w2 = 0, c = 0;
    std::vector<bool> got;
  } probe(h);
  probe.w1 = w1;
  h.schedule(5, Prio::kHardirq, &probe, 1);
  probe.w2 = h.queue().reserve(Prio::kWire, 9);
  probe.c = h.queue().reserve(Prio::kCpu, 9);
  h.advance_to(5);
  const std::vector<bool> want{true, true, true, true, false, false};
  EXPECT_EQ(probe.got, want);
  EXPECT_TRUE(h.reached(5, probe.c));
  EXPECT_FALSE(h.reached(6, 0));
}

TEST(HostModelTest, CancelledTimersAreNotDeliveredNorCounted) {
  HostModel h;
  Recorder r(h);
  Timer t;
  t.arm(h.queue(), 10, Prio::kTimer, &r, 7);
  h.schedule(30, Prio::kCpu, &r, 8);
  t.cancel();
  EXPECT_EQ(h.next_event_time(), 30);  // skips the cancelled expiry
  h.advance_to(100);
  ASSERT_EQ(r.seen.size(), 1u);
  EXPECT_EQ(r.seen[0].kind, 8u);
  EXPECT_EQ(h.events_processed(), 1u);
}

TEST(HostModelTest, AdvanceToNeverRunsEverythingAndKeepsTheLastEventTime) {
  HostModel h;
  Recorder r(h);
  h.schedule(123, Prio::kCpu, &r, 1);
  h.schedule(456, Prio::kCpu, &r, 2);
  h.advance_to(kNever);
  EXPECT_EQ(r.seen.size(), 2u);
  EXPECT_EQ(h.now(), 456);
}

TEST(HostModelTest, SelfReschedulingStreamStopsAtTheHorizon) {
  HostModel h;
  Ticker t(h, 7, 1);
  h.advance_to(1000);
  EXPECT_EQ(t.ticks, 142u);  // 7, 14, ..., 994
  EXPECT_EQ(t.last, 994);
  EXPECT_EQ(h.now(), 1000);
  EXPECT_EQ(h.next_event_time(), 1001);
}

TEST(HostModelDeathTest, AdvanceToThePastAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        HostModel h;
        h.advance_to(100);
        h.advance_to(99);
      },
      "advance_to\\(\\) into the past");
}

TEST(HostModelDeathTest, SchedulingAtANegativeTimeAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        HostModel h;
        Recorder r(h);
        h.schedule(-1, Prio::kCpu, &r, 0);
      },
      "negative time");
}

// A small deterministic load: two tickers and a chain whose delays depend on `salt`.
std::uint64_t run_load(Nanos horizon, std::uint64_t salt, std::uint64_t* events = nullptr, bool chop = true) {
  HostModel h;
  Ticker a(h, 13, 1), b(h, 17, 2);
  class Jitter final : public EventSink {
   public:
    Jitter(HostModel& hm, std::uint64_t s) : h_(hm), x_(s * 0x9e3779b97f4a7c15ULL + 1) {
      h_.schedule(1, Prio::kWire, this, 3);
    }
    void on_event(std::uint32_t kind, std::uint64_t) override {
      x_ ^= x_ << 13;
      x_ ^= x_ >> 7;
      x_ ^= x_ << 17;
      h_.schedule_in(1 + static_cast<Nanos>(x_ % 29), Prio::kWire, this, kind);
    }

   private:
    HostModel& h_;
    std::uint64_t x_;
  } j(h, salt);
  // Advance in uneven steps: the fingerprint must not depend on how the horizon is chopped up.
  if (chop) {
    for (Nanos t = 0; t < horizon;) {
      t = std::min(horizon, t + 1 + t % 97);
      h.advance_to(t);
    }
  } else {
    h.advance_to(horizon);
  }
  if (events) *events = h.events_processed();
  return h.fingerprint();
}

TEST(HostModelTest, FingerprintIsIdenticalForIdenticalRuns) {
  std::uint64_t e1 = 0, e2 = 0;
  EXPECT_EQ(run_load(100000, 1, &e1), run_load(100000, 1, &e2));
  EXPECT_EQ(e1, e2);
  EXPECT_GT(e1, 1000u);
}

TEST(HostModelTest, FingerprintDoesNotDependOnHowTheHorizonIsChopped) {
  std::uint64_t e1 = 0, e2 = 0;
  EXPECT_EQ(run_load(100000, 3, &e1, true), run_load(100000, 3, &e2, false));
  EXPECT_EQ(e1, e2);
}

TEST(HostModelTest, FingerprintChangesWhenTheTrajectoryChanges) {
  const std::uint64_t base = run_load(100000, 1);
  EXPECT_NE(base, run_load(100000, 2));  // different event times
  EXPECT_NE(base, run_load(100009, 1));  // a later horizon: more events (a tick at 13 * 7693)
  EXPECT_NE(base, HostModel().fingerprint());
  // Same times, different kinds.
  HostModel h1, h2;
  Recorder r1(h1), r2(h2);
  h1.schedule(10, Prio::kCpu, &r1, 1);
  h2.schedule(10, Prio::kCpu, &r2, 2);
  h1.advance_to(10);
  h2.advance_to(10);
  EXPECT_NE(h1.fingerprint(), h2.fingerprint());
  // Same events, shifted by one nanosecond.
  HostModel h3;
  Recorder r3(h3);
  h3.schedule(11, Prio::kCpu, &r3, 1);
  h3.advance_to(11);
  EXPECT_NE(h1.fingerprint(), h3.fingerprint());
}

}  // namespace
}  // namespace napisim
