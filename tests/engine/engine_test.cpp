// The host model driven through SimGrid's engine (sim/simgrid/): exact event times, actors and host
// events interleaving, the end of a run, and run_scenario()'s one-engine-per-process rule.
//
// SimGrid allows one engine per process, so every TEST below creates exactly one engine, and CTest
// runs each TEST in its own process (gtest_discover_tests in tests/CMakeLists.txt). Running this
// binary without a --gtest_filter that selects a single test is not supported.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <simgrid/s4u.hpp>

#include "sim/core/host_model.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simgrid/resource_model.hpp"
#include "sim/simgrid/run.hpp"

namespace sg4 = simgrid::s4u;

namespace napisim {
namespace {

// An engine with one host and the host model registered, SimGrid's logging silenced.
struct Harness {
  HostModel host;  // declared first: outlives the engine, which holds the adapter
  std::vector<std::string> args{"engine_test", "--log=root.thres:critical"};
  std::vector<char*> argv;
  int argc = 0;
  std::unique_ptr<sg4::Engine> engine;
  sg4::Host* server = nullptr;
  std::shared_ptr<HostResourceModel> model;

  Harness() {
#if defined(__SANITIZE_ADDRESS__)
    args.emplace_back("--cfg=contexts/factory:thread");
#endif
    for (auto& a : args)
      argv.push_back(a.data());
    argc = static_cast<int>(argv.size());
    engine = std::make_unique<sg4::Engine>(&argc, argv.data());
    auto* zone = sg4::create_full_zone("test");
    server = zone->create_host("server", 1e9);
    zone->seal();
    model = std::make_shared<HostResourceModel>(host);
    engine->add_model(model, {});
  }
};

// Records host.now() at every event it receives.
class Recorder final : public EventSink {
 public:
  explicit Recorder(HostModel& h) : host_(h) {}
  void on_event(std::uint32_t, std::uint64_t) override { times.push_back(host_.now()); }
  std::vector<Nanos> times;

 private:
  HostModel& host_;
};

// A self-rescheduling stream: never runs out of events.
class Ticker final : public EventSink {
 public:
  Ticker(HostModel& h, Nanos first, Nanos period) : host_(h), period_(period) {
    host_.schedule(first, Prio::kTimer, this, 0);
  }
  void on_event(std::uint32_t, std::uint64_t) override {
    ++ticks;
    last = host_.now();
    host_.schedule_in(period_, Prio::kTimer, this, 0);
  }
  std::uint64_t ticks = 0;
  Nanos last = -1;

 private:
  HostModel& host_;
  Nanos period_;
};

TEST(EngineTest, HostEventsLandAtExactSimulatedTimes) {
  Harness h;
  Recorder r(h.host);
  const std::vector<Nanos> at = {1, 1500, kNsPerSec, kNsPerSec + 1, sec(1000) + 1};
  for (Nanos t : at)
    h.host.schedule(t, Prio::kCpu, &r, 0);
  // The control actor wakes exactly at some of the events' times and once after the last.
  std::vector<Nanos> seen_at_wakeup;
  std::vector<std::size_t> count_at_wakeup;
  sg4::Actor::create("control", h.server, [&] {
    for (double t : {1e-9, 1.5e-6, 1.0, 1001.0}) {
      sg4::this_actor::sleep_until(t);
      seen_at_wakeup.push_back(h.host.now());
      count_at_wakeup.push_back(r.times.size());
    }
  });
  h.engine->run();
  EXPECT_EQ(r.times, at);
  EXPECT_EQ(seen_at_wakeup, (std::vector<Nanos>{1, 1500, kNsPerSec, sec(1001)}));
  EXPECT_EQ(count_at_wakeup, (std::vector<std::size_t>{1, 2, 3, 5}));
  EXPECT_DOUBLE_EQ(sg4::Engine::get_clock(), 1001.0);
}

TEST(EngineTest, ControlActorSeesEveryEventUpToItsWakeupAndNoneAfter) {
  Harness h;
  Ticker tick(h.host, 7, 7000);  // 7 ns, 7.007 us, ...: never exactly on the actor's wake-ups
  Recorder r(h.host);
  h.host.schedule(ms(1) - 1, Prio::kWire, &r, 0);
  h.host.schedule(ms(1), Prio::kControl, &r, 1);  // exactly at the wake-up: runs before the actor
  h.host.schedule(ms(1) + 1, Prio::kWire, &r, 2);
  struct Seen {
    Nanos now;
    std::uint64_t ticks;
    Nanos last_tick;
    std::size_t recorded;
  };
  std::vector<Seen> seen;
  std::vector<Nanos> actor_event_times;
  Recorder from_actor(h.host);
  sg4::Actor::create("control", h.server, [&] {
    sg4::this_actor::sleep_until(1e-3);
    seen.push_back({h.host.now(), tick.ticks, tick.last, r.times.size()});
    // The actor changes host state at its own wake-up time: an event 500 ns later.
    h.host.schedule_in(500, Prio::kControl, &from_actor, 0);
    sg4::this_actor::sleep_for(1e-3);
    seen.push_back({h.host.now(), tick.ticks, tick.last, r.times.size()});
  });
  h.engine->run();
  ASSERT_EQ(seen.size(), 2u);
  // At t = 1 ms: ticks at 7 + 7000 k <= 1e6, i.e. k = 0..142; the events at 1 ms - 1 and 1 ms, not 1 ms + 1.
  EXPECT_EQ(seen[0].now, ms(1));
  EXPECT_EQ(seen[0].ticks, 143u);
  EXPECT_EQ(seen[0].last_tick, 7 + 7000 * 142);
  EXPECT_EQ(seen[0].recorded, 2u);
  // At t = 2 ms: ticks up to 7 + 7000 * 285 = 1995007.
  EXPECT_EQ(seen[1].now, ms(2));
  EXPECT_EQ(seen[1].ticks, 286u);
  EXPECT_EQ(seen[1].last_tick, 7 + 7000 * 285);
  EXPECT_EQ(seen[1].recorded, 3u);
  EXPECT_EQ(r.times, (std::vector<Nanos>{ms(1) - 1, ms(1), ms(1) + 1}));
  EXPECT_EQ(from_actor.times, (std::vector<Nanos>{ms(1) + 500}));
}

TEST(EngineTest, RunEndsWhenTheControlActorEndsDespitePendingHostEvents) {
  Harness h;
  Ticker tick(h.host, 1000, 1000);  // one event per simulated microsecond, forever
  sg4::Actor::create("control", h.server, [] { sg4::this_actor::sleep_until(1e-3); });
  h.engine->run();  // must return (ctest's timeout catches a hang)
  EXPECT_DOUBLE_EQ(sg4::Engine::get_clock(), 1e-3);
  EXPECT_EQ(h.host.now(), ms(1));
  EXPECT_EQ(tick.ticks, 1000u);  // 1 us .. 1000 us inclusive, nothing after
  EXPECT_EQ(tick.last, ms(1));
  EXPECT_EQ(h.host.next_event_time(), ms(1) + 1000);  // the stream is still pending
  EXPECT_LT(h.model->solve_calls(), 100u);            // the engine did not step event by event
}

TEST(EngineTest, RunScenarioReturnsAResultOnceAndRefusesASecondRun) {
  Json doc = default_scenario();
  RunOptions opt;
  opt.sets = {"warmup_s=0.001", "duration_s=0.004", "workload.params.num_flows=8"};
  const Json result = run_scenario(doc, opt);
  ASSERT_TRUE(result.is_object());
  EXPECT_TRUE(result.contains("summary"));
  EXPECT_TRUE(result.contains("fingerprint"));
  EXPECT_GT(result["events"].get<std::uint64_t>(), 0u);
  EXPECT_DOUBLE_EQ(result["summary"]["measured_s"].get<double>(), 0.004);
  EXPECT_EQ(result["context"]["seed"], 1);
  const Json& c = result["conservation"];
  EXPECT_EQ(c["sent"].get<std::uint64_t>(), c["answered"].get<std::uint64_t>() + c["in_flight"].get<std::uint64_t>());
  EXPECT_THROW((void)run_scenario(doc, opt), std::logic_error);
}

TEST(EngineTest, RunScenarioRejectsBadInputBeforeStartingTheEngine) {
  // A ConfigError does not use up the process's one engine.
  Json doc = default_scenario();
  RunOptions bad;
  bad.sets = {"nics.0.queues=0"};
  EXPECT_THROW((void)run_scenario(doc, bad), ConfigError);
  RunOptions ok;
  ok.sets = {"warmup_s=0.001", "duration_s=0.002", "workload.params.num_flows=4"};
  EXPECT_NO_THROW((void)run_scenario(doc, ok));
}

}  // namespace
}  // namespace napisim
