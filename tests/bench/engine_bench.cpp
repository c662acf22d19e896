// napisim engine benchmark (issue 2): events/s of the host model's queue driven through SimGrid's
// engine (the HostResourceModel adapter), against a bare binary-heap loop and the same queue driven
// directly, all measured in this one process on the same synthetic load: K independent streams,
// each event rescheduling itself 1..2 us later (like per-packet work), plus, on the SimGrid path,
// a control actor waking every 100 us (the low-rate control plane).
//
// Usage: napisim_engine_bench [events=20000000] [streams=64]
// Prints one line per path and the ratio SimGrid/bare (goal >= 0.6). Not a timed test.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <queue>
#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/core/host_model.hpp"
#include "sim/simgrid/resource_model.hpp"

namespace {

using napisim::Nanos;

double wall_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Deterministic per-event delay in [1000, 2000) ns.
inline Nanos next_delay(std::uint64_t& x) {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return 1000 + static_cast<Nanos>(x % 1000);
}

double bare_heap(std::uint64_t events, int streams) {
  struct Ev {
    Nanos t;
    std::uint64_t seq;
    bool operator>(const Ev& o) const { return t > o.t || (t == o.t && seq > o.seq); }
  };
  std::vector<Ev> storage;
  storage.reserve(static_cast<std::size_t>(streams) * 2);
  std::priority_queue<Ev, std::vector<Ev>, std::greater<>> heap(std::greater<>{}, std::move(storage));
  std::uint64_t seq = 0, x = 88172645463325252ULL, sink = 0;
  for (int i = 0; i < streams; ++i)
    heap.push({next_delay(x), seq++});
  const double t0 = wall_now();
  for (std::uint64_t n = 0; n < events; ++n) {
    Ev e = heap.top();
    heap.pop();
    sink += static_cast<std::uint64_t>(e.t);
    heap.push({e.t + next_delay(x), seq++});
  }
  const double dt = wall_now() - t0;
  if (sink == 42) std::puts("");
  return static_cast<double>(events) / dt;
}

class Streams : public napisim::EventSink {
 public:
  Streams(napisim::HostModel& h, int n) : host_(h) {
    for (int i = 0; i < n; ++i)
      host_.schedule(next_delay(x_), napisim::Prio::kCpu, this, 0, static_cast<std::uint64_t>(i));
  }
  void on_event(std::uint32_t kind, std::uint64_t arg) override {
    host_.schedule_in(next_delay(x_), napisim::Prio::kCpu, this, kind, arg);
  }

 private:
  napisim::HostModel& host_;
  std::uint64_t x_ = 88172645463325252ULL;
};

double direct(std::uint64_t events, int streams) {
  napisim::HostModel host;
  Streams s(host, streams);
  const double t0 = wall_now();
  while (host.events_processed() < events)
    host.advance_to(host.now() + 100000);
  return static_cast<double>(host.events_processed()) / (wall_now() - t0);
}

double through_simgrid(std::uint64_t events, int streams, int argc, char** argv, std::uint64_t* solve_calls) {
  simgrid::s4u::Engine engine(&argc, argv);
  auto* zone = simgrid::s4u::create_full_zone("bench");
  auto* server = zone->create_host("server", 1e9);
  zone->seal();
  napisim::HostModel host;
  Streams s(host, streams);
  auto model = std::make_shared<napisim::HostResourceModel>(host);
  engine.add_model(model, {});
  // Expected simulated duration: events / (streams / 1.5us).
  const double sim_seconds = static_cast<double>(events) * 1.5e-6 / streams;
  simgrid::s4u::Actor::create("control", server, [sim_seconds] {
    while (simgrid::s4u::Engine::get_clock() < sim_seconds)
      simgrid::s4u::this_actor::sleep_for(100e-6);
  });
  const double t0 = wall_now();
  engine.run();
  const double dt = wall_now() - t0;
  *solve_calls = model->solve_calls();
  return static_cast<double>(host.events_processed()) / dt;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t events = 20000000;
  int streams = 64;
  if (argc > 1) events = std::strtoull(argv[1], nullptr, 10);
  if (argc > 2) streams = std::atoi(argv[2]);
  int sg_argc = 1;
  const double bare = bare_heap(events, streams);
  const double dir = direct(events, streams);
  std::uint64_t calls = 0;
  const double sg = through_simgrid(events, streams, sg_argc, argv, &calls);
  std::printf("bare_heap_events_per_s=%.3e\n", bare);
  std::printf("host_model_direct_events_per_s=%.3e\n", dir);
  std::printf("simgrid_path_events_per_s=%.3e (engine solve calls: %llu)\n", sg,
              static_cast<unsigned long long>(calls));
  std::printf("ratio_simgrid_over_bare=%.2f (goal >= 0.6)\n", sg / bare);
  return 0;
}
