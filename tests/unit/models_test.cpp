// Unit tests of the receive-path models (models/*.cpp), reached through the registry as users do.
//
// Each test drives a Kernel directly on a HostModel (no SimGrid), with zero CPU costs except round
// ones under test, so counts and times below are exact and derived in the comments from
// docs/kernel-napi.md (2.5 deferral, 4.1 threaded NAPI, 5.1 workqueue NAPI, 5.2
// TAPI). The run-time switch test runs a whole Scenario through Simulation (tcp_rr).
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/kernel/kernel.hpp"
#include "sim/model/model.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/simulation.hpp"
#include "tests/unit/kernel_rig.hpp"

namespace napisim {
namespace {

constexpr int kKthread = static_cast<int>(CpuClass::kKthread);

/// The kernel rig (tests/unit/kernel_rig.hpp) on `cores` CPUs, with receive-path models attached
/// through the registry as users attach them.
struct ModelRig : Rig {
  std::vector<std::unique_ptr<RxModel>> models;
  ModelRig(std::int64_t cores, const CostParams& costs) : Rig(shape(cores), KernelParams{}, costs) {}
  RxModel& attach(const std::string& name, const Json& params) {
    const ModelInfo& m = builtin_models().get(name, "/models/0/name");
    models.push_back(m.create(m.resolve(params, "/models/0/params"), "/models/0/params"));
    models.back()->attach(k, {0});
    return *models.back();
  }
  Nanos cls_time(int cls, int cpu = -1) {
    Nanos sum = 0;
    for (int i = 0; i < k.nr_cpus(); ++i)
      if (cpu < 0 || cpu == i) sum += k.cpu(i).time[static_cast<std::size_t>(cls)];
    return sum;
  }
  Channel& ch(int q) { return *k.nics()[0]->channels[static_cast<std::size_t>(q)]; }
  /// A socket whose flow RSS maps to queue q.
  Socket& socket_on(int q) {
    for (std::uint32_t h = next_hash_;; ++h) {
      if (k.nics()[0]->rss->queue_of(h) == q) {
        next_hash_ = h + 1;
        return k.add_socket(0, h);
      }
    }
  }

 private:
  std::uint32_t next_hash_ = 1;
};

NicParams nic(std::int64_t queues, const std::string& irq_cpus) {
  NicParams p;
  p.queues = queues;
  p.ring_size = 4096;
  p.rx_usecs = 0;  // an interrupt per completion
  p.rx_frames = 1;
  p.irq_affinity = irq_cpus;
  return p;
}

/// One packet to each socket every `period` from `first` for `count` rounds.
void steady(At& at, Kernel& k, const std::vector<int>& socks, Nanos first, Nanos period, int count) {
  for (int i = 0; i < count; ++i)
    at(first + i * period, [&k, socks] {
      for (int s : socks)
        k.nic_rx(0, pkt(s));
    });
}

Task* find_task(Kernel& k, const std::string& name) {
  for (auto& t : k.tasks())
    if (t->name == name) return t.get();
  return nullptr;
}

// ---- napi_threaded ---------------------------------------------------------------------------

TEST(NapiThreadedTest, PollsRunInTheKthreadWithinItsCpumaskAndNice) {
  // 4 CPUs, 2 queues with IRQs on CPUs 0 and 1, kthreads restricted to CPUs 2-3 at nice 5.
  // Each queue gets one packet every 20 us, 50 rounds; a poll costs 500 + 1000 per packet, so each
  // wakeup polls exactly one packet: kthread time = 100 packets * 1.5 us, all on CPUs 2-3, and no
  // NET_RX softirq or ksoftirqd time anywhere (____napi_schedule() wakes the thread instead).
  CostParams c = zero_costs();
  c.napi_poll_ns = 500;
  c.rx_pkt_ns = 1000;
  ModelRig r(4, c);
  r.k.add_nic(nic(2, "0-1"), "/nic");
  RxModel& m = r.attach("napi_threaded", Json{{"cpumask", "2-3"}, {"nice", 5}});
  Socket& s0 = r.socket_on(0);
  Socket& s1 = r.socket_on(1);
  At at(r.host);
  steady(at, r.k, {s0.id, s1.id}, us(1), us(20), 50);
  r.run_to(ms(2));
  r.settle();
  EXPECT_EQ(r.cls_time(kSoftirq), 0);
  EXPECT_EQ(r.cls_time(kKsoftirqd), 0);
  EXPECT_EQ(r.cls_time(kKthread), 100 * 1500);
  EXPECT_EQ(r.cls_time(kKthread, 0) + r.cls_time(kKthread, 1), 0);
  EXPECT_EQ(s0.rx_skbs + s1.rx_skbs, 100u);
  for (int q = 0; q < 2; ++q) {
    Napi& n = r.ch(q).napi;
    ASSERT_NE(n.thread, nullptr);
    EXPECT_EQ(n.thread->name, "napi/eth0-" + std::to_string(n.id));
    EXPECT_EQ(n.thread->se.nice, 5);
    EXPECT_EQ(n.thread->se.weight, 335);  // sched_prio_to_weight[25]
    EXPECT_EQ(n.thread->exec_ns, 50 * 1500);
    EXPECT_EQ(n.polls, 50u);
    EXPECT_TRUE(n.state & napi_state::kThreaded);
    EXPECT_TRUE(r.ch(q).irq_armed);
  }
  Json rep;
  m.report(rep);
  EXPECT_EQ(rep["threads"].size(), 2u);
}

TEST(NapiThreadedTest, PinToIrqCpuAndFifoPolicy) {
  // pin_to_irq_cpu: the thread of queue q runs only on its IRQ CPU q; SCHED_FIFO priority 10.
  CostParams c = zero_costs();
  c.rx_pkt_ns = 1000;
  ModelRig r(4, c);
  r.k.add_nic(nic(2, "0-1"), "/nic");
  r.attach("napi_threaded", Json{{"pin_to_irq_cpu", true}, {"policy", "fifo"}, {"rt_priority", 10}});
  Socket& s0 = r.socket_on(0);
  Socket& s1 = r.socket_on(1);
  At at(r.host);
  steady(at, r.k, {s0.id, s1.id}, us(1), us(10), 20);
  r.run_to(ms(1));
  r.settle();
  EXPECT_EQ(r.cls_time(kKthread, 0), 20 * 1000);
  EXPECT_EQ(r.cls_time(kKthread, 1), 20 * 1000);
  EXPECT_EQ(r.cls_time(kSoftirq), 0);
  for (int q = 0; q < 2; ++q) {
    const Task& t = *r.ch(q).napi.thread;
    EXPECT_EQ(t.allowed.count(), 1);
    EXPECT_TRUE(t.allowed.test(q));
    EXPECT_EQ(t.se.policy, SchedPolicy::kFifo);
    EXPECT_EQ(t.se.rt_priority, 10);
    EXPECT_TRUE(t.per_cpu_kthread);
  }
}

TEST(NapiThreadedTest, BadCpumaskIsAConfigError) {
  ModelRig r(4, zero_costs());
  r.k.add_nic(nic(1, "0"), "/nic");
  EXPECT_THROW(r.attach("napi_threaded", Json{{"cpumask", "9"}}), ConfigError);
}

// ---- napi_defer_irq --------------------------------------------------------------------------

// One queue (IRQ CPU 0), a packet every 5 us from t = 1 us, 200 packets (last at 996 us). Each
// poll costs napi_poll_ns = 1 ns, so timer expiries drift off the packet grid (no same-instant
// ties): poll k ends at ~1 us + k * 50.001 us.
struct DeferRig {
  ModelRig r;
  Socket* s;
  At at;
  explicit DeferRig(std::int64_t cores = 2)
      : r(cores,
          [] {
            CostParams c = zero_costs();
            c.napi_poll_ns = 1;
            return c;
          }())
      , at(r.host) {
    r.k.add_nic(nic(1, "0"), "/nic");
  }
  void load() {
    s = &r.socket_on(0);
    steady(at, r.k, {s->id}, us(1), us(5), 200);
  }
};

TEST(NapiDeferIrqTest, WithoutDeferralEveryPacketIsAnInterrupt) {
  DeferRig d;
  d.r.attach("napi_defer_irq", Json::object());  // defaults: off
  d.load();
  d.r.run_to(ms(2));
  EXPECT_EQ(d.r.ch(0).irqs, 200u);
  EXPECT_EQ(d.r.ch(0).napi.polls, 200u);
  EXPECT_EQ(d.s->rx_skbs, 200u);
}

TEST(NapiDeferIrqTest, TimerPollingReplacesInterruptsAndReArmsAfterDEmptyPolls) {
  // defer_hard_irqs 2, gro_flush_timeout 50 us. Packet 0 raises the only IRQ; its poll (1 packet)
  // reloads the count to 2, decrements it to 1 and arms the timer instead of unmasking. Timer
  // polls at ~51, 101, ... us each find 10 packets (reload, 1, re-arm); poll 20 (~1001 us) takes
  // the last ones. Poll 21 is empty: count 1 -> 0, timer re-armed. Poll 22 is empty with count 0:
  // napi_complete_done() returns true and the IRQ is re-armed. 23 polls, 22 timer expiries, 1 IRQ
  // instead of 200. A packet at 1.5 ms then raises IRQ number 2.
  DeferRig d;
  d.r.attach("napi_defer_irq", Json{{"defer_hard_irqs", 2}, {"gro_flush_timeout_ns", 50000}});
  d.load();
  Channel& ch = d.r.ch(0);
  d.at(us(1051), [&] {
    EXPECT_EQ(ch.napi.polls, 21u);
    EXPECT_FALSE(ch.irq_armed);
  });
  d.at(us(1101), [&] {
    EXPECT_EQ(ch.napi.polls, 22u);  // first empty poll: still deferred
    EXPECT_FALSE(ch.irq_armed);
  });
  d.r.run_to(us(1400));
  EXPECT_EQ(ch.irqs, 1u);
  EXPECT_EQ(ch.napi.polls, 23u);
  EXPECT_EQ(ch.napi.timer_fires, 22u);
  EXPECT_EQ(d.s->rx_skbs, 200u);
  EXPECT_TRUE(ch.irq_armed);
  EXPECT_EQ(ch.napi.state & napi_state::kSched, 0u);
  EXPECT_EQ(ch.napi.defer_hard_irqs_count, 0);
  d.at(us(1500), [&] { d.r.k.nic_rx(0, pkt(d.s->id)); });
  d.r.run_to(us(1600));
  EXPECT_EQ(ch.irqs, 2u);
}

TEST(NapiDeferIrqTest, ComposesWithThreadedNapiInEitherOrder) {
  // Same load and deferral with the NAPI threaded: napi_watchdog()'s __napi_schedule() wakes the
  // kthread, so the same 23 polls run in it (one wakeup each), none in softirq.
  for (int order = 0; order < 2; ++order) {
    DeferRig d(4);
    const Json defer{{"defer_hard_irqs", 2}, {"gro_flush_timeout_ns", 50000}};
    if (order == 0) {
      d.r.attach("napi_threaded", Json{{"cpumask", "2-3"}});
      d.r.attach("napi_defer_irq", defer);
    } else {
      d.r.attach("napi_defer_irq", defer);
      d.r.attach("napi_threaded", Json{{"cpumask", "2-3"}});
    }
    d.load();
    d.r.run_to(us(1400));
    d.r.settle();
    Channel& ch = d.r.ch(0);
    EXPECT_EQ(ch.irqs, 1u);
    EXPECT_EQ(ch.napi.polls, 23u);
    EXPECT_EQ(ch.napi.timer_fires, 22u);
    EXPECT_EQ(ch.napi.thread->wakeups, 23u);
    EXPECT_EQ(d.r.cls_time(kSoftirq), 0);
    EXPECT_EQ(d.r.cls_time(kKthread), 23);  // 23 polls of 1 ns
    EXPECT_EQ(d.s->rx_skbs, 200u);
    EXPECT_TRUE(ch.irq_armed);
  }
}

TEST(NapiDeferIrqTest, SteadyLoadCutsInterruptsByOrdersOfMagnitude) {
  // 20 ms of one packet per 5 us: 4000 IRQs without deferral; with defer 100 / 20 us one IRQ.
  auto irqs = [](const Json& defer) {
    DeferRig d;
    d.r.attach("napi_defer_irq", defer);
    d.s = &d.r.socket_on(0);
    steady(d.at, d.r.k, {d.s->id}, us(1), us(5), 4000);
    d.r.run_to(ms(21));
    EXPECT_EQ(d.s->rx_skbs, 4000u);
    return d.r.ch(0).irqs;
  };
  const auto base = irqs(Json::object());
  const auto deferred = irqs(Json{{"defer_hard_irqs", 100}, {"gro_flush_timeout_ns", 20000}});
  EXPECT_EQ(base, 4000u);
  EXPECT_LE(deferred * 1000, base);
}

// ---- napi_workqueue --------------------------------------------------------------------------

TEST(NapiWorkqueueTest, PollsRunInHighpriKworkers) {
  // One queue, a packet every 20 us: every poll runs in a kworker "kworker/u<pool>:<n>" at nice
  // -20 (weight 88761), no softirq time; the pool starts with one worker and, the first time it
  // starts working, creates a spare (maybe_create_worker): 2 workers, the first does every poll.
  CostParams c = zero_costs();
  c.rx_pkt_ns = 1000;
  ModelRig r(4, c);
  r.k.add_nic(nic(1, "0"), "/nic");
  RxModel& m = r.attach("napi_workqueue", Json{{"create_worker_ns", 0}});
  Socket& s = r.socket_on(0);
  At at(r.host);
  steady(at, r.k, {s.id}, us(1), us(20), 50);
  r.run_to(ms(2));
  r.settle();
  EXPECT_EQ(r.cls_time(kSoftirq), 0);
  EXPECT_EQ(r.cls_time(kKthread), 50 * 1000);
  EXPECT_EQ(s.rx_skbs, 50u);
  Json rep;
  m.report(rep);
  EXPECT_EQ(rep["nr_workers"], 2);
  EXPECT_EQ(rep["workers_that_polled"], 1);
  Task* w = find_task(r.k, "kworker/u8:0");  // unbound pool id after 2 * 4 per-cpu pools
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->se.nice, -20);
  EXPECT_EQ(w->se.weight, 88761);
  EXPECT_EQ(w->exec_ns, 50 * 1000);
}

TEST(NapiWorkqueueTest, ConcurrentLoadRunsMoreDistinctWorkersThanNapis) {
  // Two queues flooded at once on a 2-CPU workqueue with a nice-0 hog on each CPU. The pool grows
  // on demand (a worker that takes the last idle one creates another), and a worker whose poll
  // loop sees need_resched requeues the NAPI, which the next idle worker picks up. More distinct
  // kworkers poll than there are NAPIs (a kthread per NAPI would be exactly 2 threads).
  CostParams c = zero_costs();
  c.rx_pkt_ns = 1000;
  ModelRig r(2, c);
  r.k.add_nic(nic(2, "0-1"), "/nic");
  RxModel& m = r.attach("napi_workqueue", Json::object());
  for (int i = 0; i < 2; ++i) {
    CpuMask only(2);
    only.set(i);
    Task& t = r.k.create_task("hog" + std::to_string(i), TaskKind::kUser, only);
    t.body = hog(r.k, t);
    r.k.start_task(t, i);
  }
  Socket& s0 = r.socket_on(0);
  Socket& s1 = r.socket_on(1);
  At at(r.host);
  steady(at, r.k, {s0.id, s1.id}, us(1), us(2), 10000);  // 2 packets per 2 us: 100% of both CPUs
  r.run_to(ms(30));
  r.settle();
  Json rep;
  m.report(rep);
  EXPECT_GT(rep["workers_that_polled"].get<int>(), 2);
  EXPECT_GT(rep["nr_workers"].get<int>(), 2);
  EXPECT_GT(rep["requeues"].get<int>(), 0);
  EXPECT_EQ(r.cls_time(kSoftirq), 0);
  // Conservation: every accepted packet was polled or still sits in a ring.
  for (int q = 0; q < 2; ++q)
    EXPECT_EQ(r.ch(q).rx_pkts, r.ch(q).napi.packets + static_cast<std::uint64_t>(r.ch(q).ring_pkts));
}

// ---- napi_tapi -------------------------------------------------------------------------------

TEST(NapiTapiTest, TwoPollersServeFourNapis) {
  // 4 queues (IRQs on CPUs 0-3), 2 pollers on 4 CPUs: every NAPI is polled, only the two pollers
  // consume kthread time (= 1 us per packet), no softirq time, every packet delivered.
  CostParams c = zero_costs();
  c.rx_pkt_ns = 1000;
  ModelRig r(4, c);
  r.k.add_nic(nic(4, "0-3"), "/nic");
  RxModel& m = r.attach("napi_tapi", Json{{"threads", 2}});
  std::vector<int> socks;
  for (int q = 0; q < 4; ++q)
    socks.push_back(r.socket_on(q).id);
  At at(r.host);
  steady(at, r.k, socks, us(1), us(3), 1000);  // 4 packets per 3 us: the pool is saturated
  r.run_to(ms(10));
  r.settle();
  EXPECT_EQ(r.cls_time(kSoftirq), 0);
  std::uint64_t delivered = 0;
  for (int s : socks)
    delivered += r.k.socket(s).rx_skbs;
  EXPECT_EQ(delivered, 4000u);
  EXPECT_EQ(r.cls_time(kKthread), 4000 * 1000);
  Nanos poller_ns = 0;
  for (int i = 0; i < 2; ++i)
    poller_ns += find_task(r.k, "tapi/" + std::to_string(i))->exec_ns;
  EXPECT_EQ(poller_ns, 4000 * 1000);
  for (int q = 0; q < 4; ++q) {
    EXPECT_GT(r.ch(q).napi.polls, 0u);
    EXPECT_TRUE(r.ch(q).irq_armed);
    EXPECT_EQ(r.ch(q).napi.state & napi_state::kSched, 0u);
  }
  Json rep;
  m.report(rep);
  ASSERT_EQ(rep["pollers"].size(), 2u);
  EXPECT_GT(rep["pollers"][0]["polls"].get<int>(), 0);
  EXPECT_GT(rep["pollers"][1]["polls"].get<int>(), 0);
}

TEST(NapiTapiTest, ThrPollKeepsPollingWhileThereIsWork) {
  // One queue, a packet every 1.2 us, poll 500 ns + 1 us per packet, so every poll finds at least
  // one packet. The base pool completes the NAPI whenever a poll drains the ring (< weight), and
  // the packet that arrived meanwhile raises the re-armed IRQ at once: about one IRQ per poll.
  // thr_poll keeps the NAPI (IRQ masked) while polls find packets: one IRQ for the whole burst;
  // after the load stops the first empty poll completes it and re-arms the IRQ.
  auto run = [](bool thr_poll, std::uint64_t* irqs, std::uint64_t* polls) {
    CostParams c = zero_costs();
    c.napi_poll_ns = 500;
    c.rx_pkt_ns = 1000;
    ModelRig r(2, c);
    r.k.add_nic(nic(1, "0"), "/nic");
    r.attach("napi_tapi", Json{{"threads", 1}, {"thr_poll", thr_poll}, {"cpumask", "1"}});
    Socket& s = r.socket_on(0);
    At at(r.host);
    steady(at, r.k, {s.id}, us(1), 1200, 1000);
    r.run_to(ms(3));
    EXPECT_EQ(s.rx_skbs, 1000u);
    EXPECT_TRUE(r.ch(0).irq_armed);
    EXPECT_EQ(r.ch(0).napi.state & (napi_state::kSched | napi_state::kInBusyPoll), 0u);
    *irqs = r.ch(0).irqs;
    *polls = r.ch(0).napi.polls;
  };
  std::uint64_t irq_base = 0, irq_thr = 0, polls_base = 0, polls_thr = 0;
  run(false, &irq_base, &polls_base);
  run(true, &irq_thr, &polls_thr);
  EXPECT_GT(irq_base, 100u);
  EXPECT_EQ(irq_base, polls_base);
  EXPECT_EQ(irq_thr, 1u);
  EXPECT_GT(polls_thr, 100u);
}

// ---- run-time switch -------------------------------------------------------------------------

TEST(RuntimeSwitchTest, NapiOwnedBySoftirqFinishesThereNextScheduleGoesToTheThread) {
  // 1000 packets at t = 0 on one queue (softirq entry 500 ns, 1 us per packet). With a single
  // NAPI each net_rx_action() pass polls it once (64 packets), finds the list empty with the NAPI
  // on repoll, and re-raises NET_RX: __do_softirq restarts 9 times (MAX_SOFTIRQ_RESTART 10), so
  // 10 passes = 640 packets run as softirq (10 * 0.5 + 640 us = 645 us), then ksoftirqd/0 does the
  // remaining 6 passes (360 packets + 6 * 0.5 us; the 16th poll, 40 < 64, completes at ~1.008 ms).
  // napi_threaded is attached at 100 us, while the NAPI is SCHED on CPU 0's poll_list: nothing
  // takes it from there (the poll_list/repoll path does not go through ____napi_schedule()), so no
  // kthread time; the IRQ is re-armed at completion. A packet at 1.5 ms then wakes the kthread.
  CostParams c = zero_costs();
  c.softirq_entry_ns = 500;
  c.rx_pkt_ns = 1000;
  ModelRig r(2, c);
  r.k.add_nic(nic(1, "0"), "/nic");
  r.attach("napi_irq", Json::object());
  Socket& s = r.socket_on(0);
  At at(r.host);
  at(0, [&] {
    for (int i = 0; i < 1000; ++i)
      r.k.nic_rx(0, pkt(s.id));
  });
  at(us(100), [&] { r.attach("napi_threaded", Json::object()); });
  r.run_to(ms(1));
  EXPECT_EQ(r.ch(0).napi.polls, 15u);
  EXPECT_FALSE(r.ch(0).irq_armed);
  r.run_to(us(1400));
  r.settle();
  Channel& ch = r.ch(0);
  EXPECT_EQ(ch.napi.polls, 16u);
  EXPECT_EQ(r.cls_time(kSoftirq), 10 * 500 + 640 * 1000);
  EXPECT_EQ(r.cls_time(kKsoftirqd), 6 * 500 + 360 * 1000);
  EXPECT_EQ(r.cls_time(kKthread), 0);
  EXPECT_TRUE(ch.irq_armed);
  EXPECT_TRUE(ch.napi.state & napi_state::kThreaded);
  EXPECT_EQ(ch.napi.thread->wakeups, 0u);
  at(us(1500), [&] { r.k.nic_rx(0, pkt(s.id)); });
  r.run_to(ms(2));
  r.settle();
  EXPECT_EQ(ch.napi.thread->wakeups, 1u);
  EXPECT_EQ(r.cls_time(kKthread), 1000);
  EXPECT_EQ(r.cls_time(kSoftirq), 10 * 500 + 640 * 1000);
  EXPECT_EQ(s.rx_skbs, 1001u);
}

/// 16 flows of 5000-byte requests; the load stops after `ntx` measured transactions (0 = never).
// The server's strategy switch, with the idealised client: the load stops after ntx
// transactions and drains within the run.
Json switch_scenario(int ntx = 0) {
  std::string text = R"({
    "name": "switch", "seed": 3, "warmup_s": 0.005, "duration_s": 0.03,
    "topology": {"numa_nodes": 1, "llcs_per_node": 1, "cores_per_llc": 4, "threads_per_core": 1},
    "nics": [{"name": "eth0", "queues": 2, "irq_affinity": "0-1"}],
    "models": [{"name": "napi_irq"}],
    "platform": {"clients": [{"stack": "idealised"}]},
    "changes": [{"at_s": 0.015, "model": {"name": "napi_threaded", "params": {"cpumask": "2-3"}}}],
    "workload": {"type": "tcp_rr", "params": {"num_flows": 16, "num_threads": 2, "request_size": 5000,
                                              "response_size": 100, "num_transactions": NTX}}
  })";
  text.replace(text.find("NTX"), 3, std::to_string(ntx));
  return Json::parse(text);
}

// Measured transactions after which the load stops (reached well before 30 ms), so that the rings are
// drained at the end of the 35 ms run and packet counts balance exactly.
constexpr int kStopAfter = 5000;

TEST(RuntimeSwitchTest, ScenarioChangesParseAndValidate) {
  const Scenario s = parse_scenario(switch_scenario());
  ASSERT_EQ(s.changes.size(), 1u);
  EXPECT_EQ(s.changes[0].model.name, "napi_threaded");
  EXPECT_EQ(s.changes[0].model.params["pin_to_irq_cpu"], false);  // resolved
  Json bad = switch_scenario();
  bad["changes"][0]["model"]["name"] = "no_such_model";
  EXPECT_THROW(parse_scenario(bad), ConfigError);
  bad = switch_scenario();
  bad["changes"].push_back(Json{{"at_s", 0.001}, {"model", Json{{"name", "napi_irq"}}}});
  EXPECT_THROW(parse_scenario(bad), ConfigError);  // not in time order
  bad = switch_scenario();
  bad["changes"][0]["at"] = 1;
  EXPECT_THROW(parse_scenario(bad), ConfigError);  // unknown key
}

TEST(RuntimeSwitchTest, SoftirqToThreadedHandsOverWithoutLoss) {
  // Before t = 15 ms every poll is NET_RX softirq work; from the switch on the next napi_schedule()
  // wakes the kthread: after a short hand-over (a NAPI owned by softirq finishes there) there is no
  // softirq time and the polls are kthread time on CPUs 2-3. Requests are conserved and no packet
  // is dropped or left behind.
  const Scenario s = parse_scenario(switch_scenario(kStopAfter));
  Simulation sim(s, {ClientPath{}});
  Kernel& k = sim.kernel();
  auto cls_total = [&](const Kernel::Snapshot& a, int cls) {
    Nanos t = 0;
    for (const auto& c : a.cpu_time)
      t += c[static_cast<std::size_t>(cls)];
    return t;
  };
  sim.start();
  sim.host().advance_to(ms(5));
  sim.begin_measurement();
  sim.host().advance_to(ms(15));
  const Kernel::Snapshot before = k.snapshot();
  EXPECT_GT(cls_total(before, kSoftirq), 0);
  EXPECT_EQ(cls_total(before, kKthread), 0);
  sim.apply_change(0);
  sim.host().advance_to(ms(17));
  const Kernel::Snapshot handed = k.snapshot();
  sim.host().advance_to(ms(35));
  const Kernel::Snapshot after = k.snapshot();
  EXPECT_EQ(cls_total(after, kSoftirq) - cls_total(handed, kSoftirq), 0);
  EXPECT_GT(cls_total(after, kKthread) - cls_total(handed, kKthread), 0);
  EXPECT_EQ(after.cpu_time[0][kKthread] + after.cpu_time[1][kKthread], 0);
  EXPECT_GT(after.cpu(2, Counter::kProcessed) + after.cpu(3, Counter::kProcessed), 0u);
  EXPECT_GT(sim.workload().completed(), 100u);
  const Json cons = sim.workload().conservation();
  EXPECT_EQ(cons["sent"].get<std::uint64_t>(),
            cons["answered"].get<std::uint64_t>() + cons["in_flight"].get<std::uint64_t>());
  EXPECT_EQ(cons["in_flight"], 0);  // the load stopped and drained
  EXPECT_EQ(cons["ring_drop_segments"], 0);
  for (auto& ch : k.nics()[0]->channels) {
    EXPECT_EQ(ch->drops, 0u);
    EXPECT_EQ(ch->rx_pkts, ch->napi.packets + static_cast<std::uint64_t>(ch->ring_pkts));
    EXPECT_TRUE(ch->napi.state & napi_state::kThreaded);
  }
}

TEST(RuntimeSwitchTest, RunStandaloneAppliesChangesAndThreadedToSoftirqHandsBack) {
  // Softirq -> threaded at 15 ms -> softirq at 25 ms, through run_standalone(); the kthreads own
  // NAPIs at the second switch must finish them (SCHED_THREADED is not cleared under them).
  Json doc = switch_scenario(kStopAfter);
  doc["changes"].push_back(Json{{"at_s", 0.025}, {"model", Json{{"name", "napi_irq"}}}});
  const Scenario s = parse_scenario(doc);
  Simulation sim(s, {ClientPath{}});
  sim.run_standalone();
  Kernel& k = sim.kernel();
  const Json cons = sim.workload().conservation();
  EXPECT_EQ(cons["sent"].get<std::uint64_t>(),
            cons["answered"].get<std::uint64_t>() + cons["in_flight"].get<std::uint64_t>());
  EXPECT_GT(sim.workload().completed(), 100u);
  EXPECT_EQ(cons["in_flight"], 0);
  for (auto& ch : k.nics()[0]->channels) {
    EXPECT_EQ(ch->drops, 0u);
    EXPECT_FALSE(ch->napi.state & napi_state::kThreaded);
    EXPECT_EQ(ch->rx_pkts, ch->napi.packets + static_cast<std::uint64_t>(ch->ring_pkts));
  }
  const Json res = sim.result(Json::object());
  EXPECT_TRUE(res.contains("models"));
}

}  // namespace
}  // namespace napisim
