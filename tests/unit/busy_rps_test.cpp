// Defining behaviour of the busy-polling family (epoll_busy_poll, threaded_busy_poll,
// irq_suspend, epoll_event_poll / the userspace busy loop) and of RPS/RFS (rps_rfs, with Kirill
// Tkhai's idle_sibling knob), each on a tiny tcp_rr scenario run on the host model alone
// (Simulation, no SimGrid). Expectations come from docs/kernel-napi.md 3.3-3.4, 6, 7
// and validation-targets.md 3; numbers quoted in comments are what the simulator produced when
// the test was written, the assertions keep a wide margin around them. BUSY_RPS_DUMP=1 in the
// environment prints each run's summary and per-CPU figures.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/scenario/scenario.hpp"
#include "sim/scenario/simulation.hpp"

namespace napisim {
namespace {

// ---- harness ----

/// A small server: 8 CPUs in one LLC, one 4-queue NIC with IRQs on CPUs 0-3, tcp_rr with 1-byte
/// requests/responses (RTT ~25 us: 3 + 5 us each way plus the server), 5 ms warm-up, 20 ms window.
// The server's receive path in isolation: the idealised client (ClientSpec "stack") keeps the
// load the same whatever the server's strategy does to the client host.
Json base_doc() {
  return Json{
      {"name", "busy_rps_test"},
      {"seed", 1},
      {"warmup_s", 0.005},
      {"duration_s", 0.02},
      {"topology", {{"numa_nodes", 1}, {"llcs_per_node", 1}, {"cores_per_llc", 8}, {"threads_per_core", 1}}},
      {"nics", Json::array({Json{{"name", "eth0"}, {"queues", 4}, {"irq_affinity", "0-3"}}})},
      {"models", Json::array({Json{{"name", "napi_irq"}}})},
      {"workload", {{"type", "tcp_rr"}, {"params", {{"num_flows", 4}, {"num_threads", 4}}}}},
      {"platform", {{"clients", Json::array({Json{{"stack", "idealised"}}})}}},
  };
}

Json model(const std::string& name, const Json& params = Json::object()) {
  return Json{{"name", name}, {"params", params}};
}

struct TaskCounters {
  std::string name;
  TaskKind kind;
  std::uint64_t wakeups;
  Nanos exec_ns;
};

std::vector<TaskCounters> task_counters(Kernel& k) {
  std::vector<TaskCounters> v;
  for (auto& t : k.tasks())
    v.push_back({t->name, t->kind, t->wakeups, t->exec_ns});
  return v;
}

/// One scenario run. The phases are driven as Simulation::run_standalone() drives them (these
/// scenarios have no `changes`), so per-task counters can be read at the warm-up end too.
struct SimRun {
  std::unique_ptr<Simulation> sim;
  Json r;
  std::vector<TaskCounters> t0, t1;  // per task, at the warm-up end and at the end

  Kernel& k() { return sim->kernel(); }
  const Json& summary() const { return r["summary"]; }
  double cls_pct(int cpu, const char* cls) const { return r["per_cpu"][cpu]["by_class_pct"][cls].get<double>(); }
  double busy_pct(int cpu) const { return r["per_cpu"][cpu]["busy_pct"].get<double>(); }
  std::uint64_t processed(int cpu) const { return r["per_cpu"][cpu]["processed"].get<std::uint64_t>(); }
  double p50() const { return r["summary"]["latency_ns"]["p50"].get<double>(); }
  double throughput() const { return r["summary"]["throughput"].get<double>(); }
  std::uint64_t irqs() const { return r["summary"]["irqs"].get<std::uint64_t>(); }
  std::uint64_t rx() const { return r["summary"]["rx_packets"].get<std::uint64_t>(); }
  /// Wakeups of the tcp_rr server threads inside the measurement window.
  std::uint64_t server_wakeups() const {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < t1.size(); ++i)
      if (t1[i].name.rfind("tcp_rr/", 0) == 0) n += t1[i].wakeups - t0[i].wakeups;
    return n;
  }
  void expect_conservation() const {
    const Json& c = r["conservation"];
    EXPECT_EQ(c["sent"].get<std::uint64_t>(), c["answered"].get<std::uint64_t>() + c["in_flight"].get<std::uint64_t>())
        << c.dump();
  }
};

SimRun run(const Json& doc) {
  const Scenario s = parse_scenario(doc);
  const std::vector<ClientPath> paths = Simulation::standalone_paths(s);
  SimRun out;
  out.sim = std::make_unique<Simulation>(s, paths);
  Simulation& sim = *out.sim;
  EXPECT_TRUE(s.changes.empty());
  sim.start();
  sim.host().advance_to(sim.warmup_end());
  out.t0 = task_counters(sim.kernel());
  sim.begin_measurement();
  sim.host().advance_to(sim.run_end());
  sim.end_measurement();
  out.t1 = task_counters(sim.kernel());
  out.r = sim.result(Json::object());
  if (std::getenv("BUSY_RPS_DUMP")) {
    std::printf("---- %s\n%s\n", doc["models"].dump().c_str(), out.r["summary"].dump().c_str());
    for (const Json& pc : out.r["per_cpu"])
      std::printf("  %s\n", pc.dump().c_str());
    if (out.r.contains("models")) std::printf("  models %s\n", out.r["models"].dump().c_str());
  }
  return out;
}

/// The RX queues that carry at least one flow.
std::set<int> used_queues(Kernel& k, int nsockets) {
  std::set<int> q;
  for (int i = 0; i < nsockets; ++i)
    q.insert(k.socket(i).rx_queue);
  return q;
}

double sum_cls(const SimRun& r, const char* cls) {
  double s = 0;
  for (std::size_t c = 0; c < r.r["per_cpu"].size(); ++c)
    s += r.cls_pct(static_cast<int>(c), cls);
  return s;
}

/// Busy polling's own classes, polls and spins.
double busy_pct(const SimRun& r, int cpu) {
  return r.cls_pct(cpu, "busy_poll") + r.cls_pct(cpu, "busy_spin");
}
double sum_busy(const SimRun& r) {
  return sum_cls(r, "busy_poll") + sum_cls(r, "busy_spin");
}

// ---- epoll_busy_poll: prefer_busy_poll + napi_defer_irq (Karsten's "napibusy") ----

// kernel-napi.md 3.4 / 7.2-7.3: with prefer_busy_poll the application owns the NAPI while it
// polls (IN_BUSY_POLL: napi_complete_done() returns false, the IRQ stays masked), and
// busy_poll_stop() with defer_hard_irqs + gro_flush_timeout arms the watchdog instead of
// re-enabling IRQs. At low load (4 flows, RTT ~25 us < busy_poll_usecs 64) the threads never stop
// polling: their CPUs are busy in system time and the NIC almost never interrupts.
TEST(BusyPollTest, PreferBusyPollMasksIrqsAndBurnsCpuAtLowLoad) {
  Json doc = base_doc();
  doc["workload"]["params"]["flow_steering"] = "rx_queue";  // one NAPI per epoll
  SimRun base = run(doc);
  doc["models"] = Json::array(
      {model("napi_irq"), model("napi_defer_irq", {{"defer_hard_irqs", 100}, {"gro_flush_timeout_ns", 200000}}),
       model("epoll_busy_poll", {{"busy_poll_usecs", 64}, {"busy_poll_budget", 64}, {"prefer_busy_poll", true}})});
  SimRun bp = run(doc);
  base.expect_conservation();
  bp.expect_conservation();
  ASSERT_GT(base.rx(), 500u);
  ASSERT_GT(bp.rx(), 500u);

  // One busy-polling thread per RX queue that carries a flow.
  // (Written with: 2 queues used; baseline CPUs 2-3 37% busy / 21% system, busy-poll CPUs 2-3
  // 100% busy: 30% system, 24% busy_poll, 42% busy_spin; IRQs per packet 0.75 -> 0.)
  const auto queues = static_cast<int>(used_queues(bp.k(), 4).size());
  int spinning = 0;
  for (int c = 0; c < 8; ++c) {
    EXPECT_LT(base.busy_pct(c), 60.0) << "baseline cpu " << c << " should be mostly idle";
    if (bp.busy_pct(c) > 99.0 && busy_pct(bp, c) > 50.0) ++spinning;
  }
  EXPECT_GE(spinning, queues) << "one spinning CPU per busy-polled NAPI";
  EXPECT_EQ(sum_busy(base), 0.0);
  EXPECT_GT(sum_cls(bp, "busy_poll"), 0.0) << "the pollers process the packets";
  EXPECT_GT(sum_cls(bp, "busy_spin"), sum_cls(bp, "busy_poll")) << "at low load they mostly spin";
  EXPECT_GT(sum_cls(bp, "system") + sum_busy(bp), 3.0 * sum_cls(base, "system")) << "what top calls system%";

  // IRQs per packet: baseline interrupts for most packets; with the pledge IRQs stay masked.
  const double ipp_base = static_cast<double>(base.irqs()) / static_cast<double>(base.rx());
  const double ipp_bp = static_cast<double>(bp.irqs()) / static_cast<double>(bp.rx());
  EXPECT_GT(ipp_base, 0.3);
  EXPECT_LT(ipp_bp * 20.0, ipp_base) << "base " << ipp_base << " busy " << ipp_bp;
  // Softirq hardly runs NET_RX any more: the application polls.
  EXPECT_LT(sum_cls(bp, "softirq"), 0.2 * sum_cls(base, "softirq"));
}

// ---- SO_BUSY_POLL on a blocking recv() (net.core.busy_read; sk_busy_loop in tcp_recvmsg) ----

// kernel-napi.md 7.1: a blocking reader with sk_ll_usec polls its socket's NAPI from task context
// before sleeping in sk_wait_data(). super_netperf's netserver children block in recv(): with
// busy_read 50 us (longer than the ~25 us RTT) each child spins instead of sleeping, so its CPU
// is busy in system time, NET_RX softirq work mostly moves into the readers' busy loops and the
// children are no longer woken per request.
TEST(BusyPollTest, BusyReadPollsFromTheBlockedReader) {
  Json doc = base_doc();
  doc["workload"] = Json{{"type", "super_netperf"}, {"params", {{"num_instances", 4}}}};
  SimRun base = run(doc);
  doc["kernel"]["net"]["busy_read"] = 50;
  SimRun br = run(doc);
  base.expect_conservation();
  br.expect_conservation();
  ASSERT_GT(base.rx(), 500u);
  ASSERT_GT(br.rx(), 500u);
  EXPECT_EQ(sum_busy(base), 0.0);
  EXPECT_GT(sum_cls(br, "busy_poll"), 0.0);
  EXPECT_GT(sum_cls(br, "system") + sum_busy(br), 2.0 * sum_cls(base, "system")) << "readers spin in system time";
  EXPECT_LT(sum_cls(br, "softirq"), 0.5 * sum_cls(base, "softirq")) << "polls move to the readers";
  EXPECT_LT(br.summary()["wakeups"].get<double>(), 0.2 * base.summary()["wakeups"].get<double>());
  EXPECT_LT(br.p50(), base.p50()) << "no wakeup on the request path";
}

// ---- threaded_busy_poll: a kthread per NAPI spinning forever ----

// kernel-napi.md 4.3: the kthread sets IN_BUSY_POLL, napi_complete_done() returns false, so the
// IRQ is never re-armed after the first one and SCHED_THREADED stays set: the kthread's CPU is
// 100% busy (kthread class) even with almost no traffic, and NET_RX never runs in softirq.
TEST(ThreadedBusyPollTest, KthreadSpinsAtFullCpuAndIrqsStop) {
  Json doc = base_doc();
  doc["nics"][0]["queues"] = 2;
  doc["nics"][0]["irq_affinity"] = "0-1";
  doc["workload"]["params"]["num_flows"] = 8;
  doc["workload"]["params"]["num_threads"] = 2;
  doc["models"] = Json::array({model("threaded_busy_poll")});
  SimRun r = run(doc);
  r.expect_conservation();
  ASSERT_GT(r.rx(), 500u);
  EXPECT_EQ(r.irqs(), 0u) << "NIC IRQs over the window";
  int active = 0;
  for (auto& ch : r.k().nics()[0]->channels) {
    if (ch->rx_pkts == 0) continue;  // a queue that never got a packet never woke its kthread
    ++active;
    EXPECT_EQ(ch->irqs, 1u) << "queue " << ch->id << ": only the first IRQ";
    EXPECT_GT(busy_pct(r, ch->irq_cpu), 99.0) << "cpu " << ch->irq_cpu;
    EXPECT_GT(r.cls_pct(ch->irq_cpu, "busy_spin"), r.cls_pct(ch->irq_cpu, "busy_poll")) << "cpu " << ch->irq_cpu;
  }
  EXPECT_GE(active, 1);
  EXPECT_EQ(sum_cls(r, "softirq"), 0.0);
  EXPECT_EQ(sum_cls(r, "ksoftirqd"), 0.0);
}

// ---- irq_suspend (v6.13) ----

Json irq_suspend_doc(const std::string& steering) {
  Json doc = base_doc();
  doc["workload"]["params"]["num_flows"] = 16;
  doc["workload"]["params"]["flow_steering"] = steering;
  doc["models"] = Json::array({model("napi_irq"),
                               model("napi_defer_irq", {{"defer_hard_irqs", 100}, {"gro_flush_timeout_ns", 20000}}),
                               model("irq_suspend")});
  return doc;
}

// kernel-napi.md 3.3: with IRQ suspension each epoll_wait that returns events pushes the NAPI
// timer out by irq_suspend_timeout (20 ms); a busy loop that finds nothing resumes IRQs
// (napi_schedule) and the defer_hard_irqs/gro_flush_timeout loop takes over. Under steady load
// the device IRQ stays masked: orders of magnitude fewer IRQs than classic NAPI. (At this load
// the threads idle between requests, so busy_poll_usecs 0 busy loops mostly find nothing and the
// 20 us gro_flush_timeout watchdog (Loop 2) does much of the polling -- still without IRQs.
// Written with: 4314 IRQs -> 0.)
TEST(IrqSuspendTest, SteadyLoadSuppressesIrqs) {
  Json doc = base_doc();
  doc["workload"]["params"]["num_flows"] = 16;
  doc["workload"]["params"]["flow_steering"] = "rx_queue";
  SimRun base = run(doc);
  SimRun sus = run(irq_suspend_doc("rx_queue"));
  base.expect_conservation();
  sus.expect_conservation();
  ASSERT_GT(base.irqs(), 1000u);
  ASSERT_GT(sus.rx(), base.rx() / 2);
  EXPECT_LT(sus.irqs() * 100, base.irqs()) << "baseline " << base.irqs() << " suspend " << sus.irqs();
}

// NAPI-RST: "During busy periods, irq-suspend-timeout is used as timer in Loop 2, which
// essentially tilts network processing in favour of Loop 3." A saturated server thread pinned to
// its queue's IRQ CPU: with prefer_busy_poll + defer 100 / 20 us but no suspension ("napibusy"
// with busy_poll_usecs 0) the 20 us watchdog keeps polling in softirq (Loop 2) next to the
// application; with irq_suspend the application's own polls (Loop 3) do nearly all the work.
// (Written with: softirq 24% -> 0.15% of CPU 0, watchdog fires 924 -> 4.)
TEST(IrqSuspendTest, BusyPeriodTiltsProcessingToTheApplication) {
  Json doc = base_doc();
  doc["nics"][0]["queues"] = 1;
  doc["nics"][0]["irq_affinity"] = "0";
  doc["workload"]["params"] = {{"num_flows", 32},    {"num_threads", 1},       {"pin_cpu", true},
                               {"server_cpus", "0"}, {"server_user_ns", 2000}, {"flow_steering", "rx_queue"}};
  const Json defer = model("napi_defer_irq", {{"defer_hard_irqs", 100}, {"gro_flush_timeout_ns", 20000}});
  doc["models"] = Json::array(
      {model("napi_irq"), defer,
       model("epoll_busy_poll", {{"busy_poll_usecs", 0}, {"busy_poll_budget", 64}, {"prefer_busy_poll", true}})});
  SimRun napibusy = run(doc);
  doc["models"] = Json::array({model("napi_irq"), defer, model("irq_suspend")});
  SimRun sus = run(doc);
  napibusy.expect_conservation();
  sus.expect_conservation();
  EXPECT_LT(napibusy.cls_pct(0, "idle"), 1.0) << "the server must be saturated";
  EXPECT_LT(sus.cls_pct(0, "idle"), 1.0);
  const auto fires = [](const SimRun& r) {
    return r.r["models"]["napi_defer_irq"]["timer_fires"].get<std::uint64_t>();
  };
  EXPECT_GT(fires(napibusy), 200u);
  EXPECT_LT(fires(sus) * 20, fires(napibusy));
  EXPECT_GT(napibusy.cls_pct(0, "softirq"), 10.0);
  EXPECT_LT(sus.cls_pct(0, "softirq"), 0.1 * napibusy.cls_pct(0, "softirq"));
  EXPECT_LE(sus.irqs(), 2u);
  EXPECT_GE(sus.throughput(), napibusy.throughput());
}

// Only napi_suspend_irqs() uses irq_suspend_timeout. "net: Suspend softirq when prefer_busy_poll
// is set" (v6 2/7), which made napi_complete_done() and busy_poll_stop() arm it while
// PREFER_BUSY_POLL was set, was dropped in v7 (the version karsten2024's numbers come from) and is
// not in mainline: napi_complete_done() arms gro_flush_timeout, with the flag or without.
TEST(IrqSuspendTest, NapiCompleteDoneArmsGroFlushTimeoutEvenWhilePreferBusy) {
  Json doc = irq_suspend_doc("rx_queue");
  doc["duration_s"] = 0.001;
  doc["warmup_s"] = 0.001;
  SimRun r = run(doc);
  Kernel& k = r.k();
  Napi& n = k.nics()[0]->channels[0]->napi;
  ASSERT_EQ(n.irq_suspend_timeout, 20000000);
  ASSERT_EQ(n.gro_flush_timeout, 20000);
  n.timer.cancel();
  n.state = napi_state::kSched | napi_state::kPreferBusyPoll;
  EXPECT_FALSE(k.napi_complete_done(k.cpu(0), n, 1));
  EXPECT_EQ(n.timer.expires(), k.now() + 20000);
  EXPECT_FALSE(n.state & (napi_state::kSched | napi_state::kPreferBusyPoll));
  n.timer.cancel();
  n.state = napi_state::kSched;
  EXPECT_FALSE(k.napi_complete_done(k.cpu(0), n, 1));
  EXPECT_EQ(n.timer.expires(), k.now() + 20000);
  n.timer.cancel();
}

// With reuseport steering the sockets of one epoll arrive on every NAPI, which napi.rst says
// busy polling does not support ("all file descriptors ... have the same NAPI ID"): ep->napi_id
// is whatever NAPI delivered last, so each thread suspends/busy-polls a changing NAPI while the
// others' IRQs are left to the defer_hard_irqs/gro_flush_timeout loop. No direction is asserted;
// the run must stay sane (conservation, progress) and the numbers are printed for the record.
// What the simulator shows (written with 16 flows, 4 threads, 4 queues): the NIC IRQs vanish
// (4577 -> 0) but throughput halves (476k -> 236k/s) and p99.9 latency becomes ~20 ms: a thread
// suspends the NAPI of the socket that was ready last, then its next events come from another
// NAPI, so nobody busy-polls or resumes the first one and its flows wait for the 20 ms
// irq_suspend_timeout watchdog. That the watchdog bounds the stall is the one thing asserted.
TEST(IrqSuspendTest, ReuseportSpreadsEpollsOverNapis) {
  Json doc = base_doc();
  doc["workload"]["params"]["num_flows"] = 16;
  SimRun base = run(doc);
  SimRun sus = run(irq_suspend_doc("reuseport"));
  sus.expect_conservation();
  EXPECT_GT(sus.rx(), base.rx() / 4);
  EXPECT_LT(sus.r["summary"]["latency_ns"]["max"].get<double>(), 20e6 + 1e6) << "bounded by irq_suspend_timeout";
  std::printf("[ irq_suspend reuseport ] irqs base %llu suspend %llu, p50 base %.0f suspend %.0f ns, tput %.0f/%.0f\n",
              static_cast<unsigned long long>(base.irqs()), static_cast<unsigned long long>(sus.irqs()), base.p50(),
              sus.p50(), base.throughput(), sus.throughput());
}

// ---- epoll_event_poll (Gulati 2024) and the userspace busy loop (epoll_timeout 0) ----

// kernel-napi.md 7.4: both keep the server threads on CPU: ep_poll spins on the ready list for
// busy_poll_usecs (event_poll_only), or the application calls epoll_wait(timeout 0) in a loop.
// The threads are never woken (they never sleep), and the median latency is no worse than with
// blocking epoll_wait (the published data: 57.2 -> 44.7 / 55.4 us at 15 flows).
TEST(BusyPollTest, EventPollAndUserspaceLoopNeverSleep) {
  Json doc = base_doc();
  doc["workload"]["params"]["num_flows"] = 8;
  doc["workload"]["params"]["server_cpus"] = "4-7";
  SimRun base = run(doc);
  Json ev = doc;
  ev["models"] = Json::array({model("napi_irq"), model("epoll_event_poll", {{"busy_poll_usecs", 1000}})});
  SimRun event = run(ev);
  Json us = doc;
  us["workload"]["params"]["epoll_timeout"] = 0;
  SimRun user = run(us);
  for (SimRun* r : {&base, &event, &user}) {
    r->expect_conservation();
    ASSERT_GT(r->rx(), 500u);
  }
  EXPECT_GT(base.server_wakeups(), 1000u);
  EXPECT_EQ(event.server_wakeups(), 0u);
  EXPECT_EQ(user.server_wakeups(), 0u);
  // Where the spinning shows: busy_spin in ep_poll, and in the empty epoll_wait(0) calls of the
  // application's loop (syscall entry/exit and ep_poll each time; neper's user work stays small).
  // Neither polls a NAPI: no busy_poll.
  double ev_spin = 0, us_spin = 0, us_user = 0, base_busy = 0;
  for (int c = 4; c < 8; ++c) {
    ev_spin += event.cls_pct(c, "busy_spin");
    us_spin += user.cls_pct(c, "busy_spin");
    us_user += user.cls_pct(c, "user");
    base_busy += base.busy_pct(c);
  }
  EXPECT_GT(ev_spin, 100.0);
  EXPECT_GT(us_spin, 100.0);
  EXPECT_EQ(sum_cls(event, "busy_poll") + sum_cls(user, "busy_poll") + sum_busy(base), 0.0);
  EXPECT_LT(us_user, 50.0);
  EXPECT_LT(base_busy, 150.0);
  EXPECT_LE(event.p50(), base.p50()) << "event poll p50";
  EXPECT_LE(user.p50(), base.p50()) << "userspace loop p50";
}

// The patch's loop is "while (!ep_busy_loop_end(ep, start)) cond_resched();": need_resched only
// makes the spinner yield, and it goes on spinning once it runs again; it never sleeps before
// busy_poll_usecs pass. Two event-poll threads on one CPU share it by EEVDF slices (the tick sets
// need_resched when the 3 ms slice is used up and the other is runnable): involuntary switches,
// no wakeup. (Before this rule a preempted spinner went to sleep on the epoll and was woken later.)
TEST(BusyPollTest, EventPollYieldsOnNeedReschedAndKeepsSpinning) {
  Json doc = base_doc();
  doc["workload"]["params"]["num_flows"] = 4;
  doc["workload"]["params"]["num_threads"] = 2;
  doc["workload"]["params"]["server_cpus"] = "5";
  doc["models"] = Json::array({model("napi_irq"), model("epoll_event_poll", {{"busy_poll_usecs", 100000}})});
  SimRun event = run(doc);
  event.expect_conservation();
  ASSERT_GT(event.rx(), 50u);
  EXPECT_EQ(event.server_wakeups(), 0u);
  std::uint64_t preempted = 0;
  for (const auto& t : event.k().tasks())
    if (t->name.rfind("tcp_rr/", 0) == 0) preempted += t->nivcsw;
  EXPECT_GE(preempted, 4u) << "the two spinners should share CPU 5 by 3 ms slices";
  EXPECT_GT(event.cls_pct(5, "busy_spin"), 70.0);
  EXPECT_GT(event.cls_pct(5, "busy_spin") + event.cls_pct(5, "system"), 90.0);
}

// ---- RPS / RFS ----

Json rps_doc(const std::string& rps_cpus, std::int64_t entries) {
  Json doc = base_doc();
  doc["workload"]["params"]["num_flows"] = 16;
  doc["models"] =
      Json::array({model("napi_irq"), model("rps_rfs", {{"rps_cpus", rps_cpus}, {"rps_sock_flow_entries", entries}})});
  return doc;
}

// kernel-napi.md 6.3-6.5: with RPS on CPUs 4-7 and RFS off, the IRQ CPUs (0-3) only run the
// driver poll and enqueue to the target CPU's backlog; the target gets an IPI
// (rps_trigger_softirq, received_rps) and does protocol processing in its NET_RX softirq.
// With HLT idle every trigger is an IPI; with polling idle (the default) a trigger that finds the
// target idle sets its need_resched flag instead, and the target runs the call from its idle loop.
TEST(RpsTest, RpsProcessesOnTargetCpusAfterIpi) {
  for (const bool polling : {false, true}) {
    SCOPED_TRACE(polling ? "idle_polling" : "HLT idle");
    Json doc = rps_doc("4-7", 0);
    doc["kernel"]["idle_polling"] = polling;
    SimRun r = run(doc);
    r.expect_conservation();
    ASSERT_GT(r.rx(), 500u);
    for (auto& ch : r.k().nics()[0]->channels)
      EXPECT_LT(ch->irq_cpu, 4);
    EXPECT_GT(r.summary()["received_rps"].get<std::uint64_t>(), 0u);
    std::uint64_t target_processed = 0, polled = 0;
    double target_softirq = 0;
    for (int c = 4; c < 8; ++c) {
      target_processed += r.processed(c);
      target_softirq += r.cls_pct(c, "softirq") + r.cls_pct(c, "ksoftirqd");
      EXPECT_GT(r.k().cpu(c).sd.received_rps, 0u) << "cpu " << c;
      EXPECT_GT(r.k().cpu(c).ipis + r.k().cpu(c).polled_wakeups, 0u) << "cpu " << c;
      if (!polling) {
        EXPECT_GT(r.k().cpu(c).ipis, 0u) << "cpu " << c;
      }
      polled += r.k().cpu(c).polled_wakeups;
    }
    if (polling) {
      EXPECT_GT(polled, 0u);
    } else {
      EXPECT_EQ(polled, 0u);
    }
    EXPECT_GT(target_softirq, 0.0);
    // Every packet is processed once more on a target CPU (backlog), i.e. as many as were polled.
    EXPECT_NEAR(static_cast<double>(target_processed), static_cast<double>(r.rx()),
                0.02 * static_cast<double>(r.rx()) + 20);
  }
}

// napi_threaded_poll_loop() (v6.4+) polls with sd->in_napi_threaded_poll set, so
// enqueue_to_backlog() raises no NET_RX for a remote backlog; the kthread sends the pending RPS
// IPIs itself after each poll (net_rps_action_and_irq_enable). Without that, nothing ever tells
// the targets (threaded NAPI raises no softirq on the IRQ CPUs) and their backlogs stall.
TEST(RpsTest, ThreadedNapiSendsItsRpsIpis) {
  Json doc = rps_doc("4-7", 0);
  // RPS only (RFS off, as rps_doc()): every packet is steered to CPUs 4-7, wherever the NAPI
  // kthreads run.
  doc["models"] =
      Json::array({model("napi_threaded"), model("rps_rfs", {{"rps_cpus", "4-7"}, {"rps_sock_flow_entries", 0}})});
  SimRun thr = run(doc);
  SimRun irq = run(rps_doc("4-7", 0));
  thr.expect_conservation();
  ASSERT_GT(irq.rx(), 500u);
  EXPECT_GT(thr.rx(), irq.rx() / 2) << "threaded " << thr.rx() << " softirq " << irq.rx();
  std::uint64_t target_processed = 0;
  for (int c = 4; c < 8; ++c) {
    EXPECT_GT(thr.k().cpu(c).sd.received_rps, 0u) << "cpu " << c;
    target_processed += thr.processed(c);
  }
  EXPECT_NEAR(static_cast<double>(target_processed), static_cast<double>(thr.rx()),
              0.02 * static_cast<double>(thr.rx()) + 20);
  EXPECT_EQ(thr.summary()["backlog_drops"].get<std::uint64_t>(), 0u);
}

// Willem de Bruijn (validation-targets.md 3): RPS must never select a CPU outside rps_cpus.
TEST(RpsTest, GetRpsCpuStaysInsideRpsCpusWithoutRfs) {
  Json doc = rps_doc("1,3,6", 0);
  doc["duration_s"] = 0.002;
  SimRun r = run(doc);
  Kernel& k = r.k();
  const std::set<int> allowed{1, 3, 6};
  std::set<int> seen;
  std::uint32_t h = 0x9e3779b9u;
  for (int i = 0; i < 2000; ++i) {
    h = h * 1664525u + 1013904223u;  // any hash, any queue
    Socket& s = k.add_socket(0, h);
    const Channel& ch = *k.nics()[0]->channels[static_cast<std::size_t>(i % 4)];
    const int cpu = k.get_rps_cpu(i % 8, ch, Skb{s.id, 1, 1, false, ch.napi.id, -1, {}});
    EXPECT_TRUE(allowed.count(cpu)) << "hash " << h << " -> cpu " << cpu;
    seen.insert(cpu);
  }
  EXPECT_EQ(seen, allowed);
}

// kernel-napi.md 6.3: RFS steers each flow to the CPU where the application last called
// recvmsg/sendmsg. Server threads pinned to CPUs 4-7: protocol processing lands on exactly the
// CPUs whose threads own flows.
TEST(RpsTest, RfsFollowsPinnedApplicationThreads) {
  Json doc = rps_doc("", 32768);
  doc["workload"]["params"]["pin_cpu"] = true;
  doc["workload"]["params"]["server_cpus"] = "4-7";
  SimRun r = run(doc);
  r.expect_conservation();
  ASSERT_GT(r.rx(), 500u);
  Kernel& k = r.k();
  std::set<int> app_cpus;
  for (int i = 0; i < 16; ++i) {
    const int c = k.socket(i).rfs_cpu;
    EXPECT_GE(c, 4);
    app_cpus.insert(c);
  }
  std::uint64_t on_app = 0;
  for (int c = 4; c < 8; ++c) {
    if (app_cpus.count(c)) {
      EXPECT_GT(r.processed(c), 0u) << "cpu " << c;
      EXPECT_GT(r.cls_pct(c, "softirq") + r.cls_pct(c, "ksoftirqd"), 0.0) << "cpu " << c;
      on_app += r.processed(c);
    } else {
      EXPECT_EQ(r.processed(c), 0u) << "cpu " << c << " runs no server thread that owns a flow";
    }
  }
  EXPECT_NEAR(static_cast<double>(on_app), static_cast<double>(r.rx()), 0.02 * static_cast<double>(r.rx()) + 20);
}

// kernel-napi.md 6.4: netdev_max_backlog tiny (2): a burst of 64 flows steered to one CPU
// overflows its backlog; the drops are counted (softnet_stat dropped) and the client retransmits,
// so every request is still answered or in flight.
TEST(RpsTest, BacklogOverflowDropsAndConserves) {
  Json doc = rps_doc("7", 0);
  doc["kernel"] = {{"net", {{"netdev_max_backlog", 2}}}};
  doc["workload"]["params"]["num_flows"] = 64;
  doc["workload"]["params"]["rto_ns"] = 1000000;
  SimRun r = run(doc);
  r.expect_conservation();
  EXPECT_GT(r.k().cpu(7).sd.dropped, 0u);
  EXPECT_GT(r.summary()["backlog_drops"].get<std::uint64_t>(), 0u);
  EXPECT_GT(r.r["conservation"]["retransmitted_trains"].get<std::uint64_t>(), 0u);
  EXPECT_GT(r.summary()["transactions"].get<std::uint64_t>(), 100u);
  for (int c = 0; c < 7; ++c)
    EXPECT_EQ(r.k().cpu(c).sd.dropped, 0u);
}

// ---- Kirill Tkhai's 2018 RFC: RFS to an idle CPU in the consumer's LLC ----

// validation-targets.md 3: a polling consumer keeps its CPU busy, so plain RFS interrupts it with
// the flow's protocol processing; idle_sibling moves that processing to an idle CPU of the same
// LLC, in parallel with the consumer. Two LLCs (CPUs 0-3, 4-7), one queue IRQ on CPU 0, one
// server thread pinned to CPU 5 busy-looping on epoll_wait(timeout 0) over 32 flows.
Json tkhai_doc(bool idle_sibling) {
  Json doc = base_doc();
  doc["topology"]["llcs_per_node"] = 2;
  doc["topology"]["cores_per_llc"] = 4;
  doc["nics"][0]["queues"] = 1;
  doc["nics"][0]["irq_affinity"] = "0";
  doc["workload"]["params"] = {
      {"num_flows", 32}, {"num_threads", 1}, {"pin_cpu", true}, {"server_cpus", "5"}, {"epoll_timeout", 0}};
  doc["models"] = Json::array(
      {model("napi_irq"), model("rps_rfs", {{"rps_sock_flow_entries", 32768}, {"idle_sibling", idle_sibling}})});
  return doc;
}

TEST(TkhaiTest, IdleSiblingSteersToIdleLlcCpuAndKeepsThroughput) {
  SimRun rfs = run(tkhai_doc(false));
  SimRun idle = run(tkhai_doc(true));
  rfs.expect_conservation();
  idle.expect_conservation();
  ASSERT_GT(rfs.rx(), 500u);
  // Plain RFS: the consumer's CPU does the protocol processing.
  EXPECT_NEAR(static_cast<double>(rfs.processed(5)), static_cast<double>(rfs.rx()),
              0.02 * static_cast<double>(rfs.rx()) + 20);
  // idle_sibling: the consumer's CPU is busy, so processing moves to idle CPUs of its LLC (4, 6,
  // 7) -- never to the other LLC's idle CPUs 1-3.
  std::uint64_t sib = idle.processed(4) + idle.processed(6) + idle.processed(7);
  EXPECT_GT(sib, 0u);
  EXPECT_LT(static_cast<double>(idle.processed(5)), 0.1 * static_cast<double>(sib));
  for (int c = 1; c < 4; ++c)
    EXPECT_EQ(idle.processed(c), 0u) << "cpu " << c;
  double sib_softirq = 0;
  for (int c : {4, 6, 7})
    sib_softirq += idle.cls_pct(c, "softirq") + idle.cls_pct(c, "ksoftirqd");
  EXPECT_GT(sib_softirq, 0.0);
  EXPECT_LT(idle.cls_pct(5, "softirq"), 0.2 * rfs.cls_pct(5, "softirq"));
  EXPECT_GE(idle.throughput(), rfs.throughput()) << "idle_sibling vs plain RFS";
}

// ---- determinism ----

TEST(BusyPollTest, SameScenarioTwiceGivesIdenticalResults) {
  for (const Json& doc : {irq_suspend_doc("rx_queue"), tkhai_doc(true)}) {
    const SimRun a = run(doc);
    const SimRun b = run(doc);
    EXPECT_EQ(a.r["fingerprint"], b.r["fingerprint"]);
    EXPECT_EQ(a.r.dump(), b.r.dump());
  }
}

}  // namespace
}  // namespace napisim
