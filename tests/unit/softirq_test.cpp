// Unit tests of __do_softirq()'s limits and ksoftirqd (sim/kernel/softirq.cpp) against
// hand-computed timelines, on the shared rig (tests/unit/kernel_rig.hpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/kernel_rig.hpp"

namespace napisim {
namespace {

// ---- __do_softirq limits and ksoftirqd -----------------------------------------------------

TEST(KernelTest, DoSoftirqHandsOffToKsoftirqdAfterTenRestarts) {
  // 10000 packets land on one queue of an idle CPU at t=0 (rx_pkt_ns 100, other costs 0).
  // net_rx_action() polls the snapshot of poll_list; a NAPI that used its whole weight goes to
  // the local repoll list, which is only spliced back at the end. With a single NAPI every
  // net_rx_action therefore does exactly ONE poll of 64 packets (6.4 us), with budget left (no
  // time_squeeze), and re-raises NET_RX. handle_softirqs() restarts while --max_restart: 10
  // passes = 640 packets = 0..64 us inline, then wakeup_softirqd(). ksoftirqd processes the
  // other 9360 packets = 936 us on its own vruntime: 64..1000 us.
  CostParams c = zero_costs();
  c.rx_pkt_ns = 100;
  Rig r(shape(1), KernelParams{}, c);
  r.k.add_nic(one_queue_nic(16384), "/nic");
  Socket& s = r.k.add_socket(0, 0);
  Napi& n = r.k.nics()[0]->channels[0]->napi;
  At at(r.host);
  at(0, [&] { flood(r.k, s.id, 10000); });
  at(us(6) + 450, [&] {
    // Inside pass 2 (6.4 .. 12.8 us): pass 1 did one full poll and re-queued the NAPI.
    EXPECT_EQ(n.polls, 1u);
    EXPECT_EQ(n.full_polls, 1u);
    EXPECT_EQ(r.cpu(0).sd.time_squeeze, 0u);
    EXPECT_EQ(r.cpu(0).softirq_runs, 1u);
  });
  Task& ksd = *r.cpu(0).ksoftirqd;
  r.run_to(us(64));
  r.settle();
  EXPECT_EQ(r.cpu(0).time[kSoftirq], us(64));
  EXPECT_EQ(r.cpu(0).sd.processed, 640u);
  EXPECT_EQ(n.polls, 10u);
  EXPECT_EQ(r.cpu(0).sd.time_squeeze, 0u);
  EXPECT_EQ(r.cpu(0).softirq_runs, 1u);
  EXPECT_EQ(r.cpu(0).ksoftirqd_wakeups, 1u);
  EXPECT_EQ(r.cpu(0).curr, &ksd);
  r.run_to(ms(3));
  r.settle();
  const Cpu& c0 = r.cpu(0);
  EXPECT_EQ(c0.sd.processed, 10000u);
  EXPECT_EQ(c0.time[kSoftirq], us(64));
  EXPECT_EQ(c0.time[kKsoftirqd], us(936));
  EXPECT_EQ(c0.softirq_runs, 1u);
  EXPECT_EQ(ksd.exec_ns, us(936));
  EXPECT_EQ(ksd.se.sum_exec_runtime, us(936));
  // Alone on an empty run queue it was placed at vruntime 0 (nice 0: virtual == real time).
  EXPECT_EQ(ksd.se.vruntime, us(936));
  EXPECT_EQ(ksd.state, TaskState::kSleeping);
  EXPECT_EQ(c0.time[kIdle] + c0.time[kSoftirq] + c0.time[kKsoftirqd], ms(3));
  EXPECT_TRUE(r.k.nics()[0]->channels[0]->irq_armed);
}

TEST(KernelTest, DoSoftirqHandsOffToKsoftirqdAtTwoJiffies) {
  // MAX_SOFTIRQ_TIME = msecs_to_jiffies(2) = 2 jiffies, compared in jiffies. The flood (one
  // queue, 1000 packets, rx_pkt_ns 5000: a pass = one 64-packet poll = 320 us) starts at 0.9 ms
  // (jiffies 0): end = jiffy 2 = 2.0 ms wall. Passes end at 1.22, 1.54, 1.86 ms (jiffies 1:
  // restart) and 2.18 ms (jiffies 2: hand off), well before the 10-restart limit. Only 1.28 ms of
  // wall time ran inline: the limit is 1-2 jiffies depending on the tick phase.
  CostParams c = zero_costs();
  c.rx_pkt_ns = 5000;
  Rig r(shape(1), KernelParams{}, c);
  r.k.add_nic(one_queue_nic(4096), "/nic");
  Socket& s = r.k.add_socket(0, 0);
  At at(r.host);
  at(us(900), [&] { flood(r.k, s.id, 1000); });
  r.run_to(us(2180));
  r.settle();
  EXPECT_EQ(r.cpu(0).time[kSoftirq], us(1280));
  EXPECT_EQ(r.cpu(0).sd.processed, 256u);
  EXPECT_EQ(r.cpu(0).ksoftirqd_wakeups, 1u);
  EXPECT_EQ(r.cpu(0).curr, r.cpu(0).ksoftirqd);
  // ksoftirqd: 744 packets * 5 us = 3.72 ms, 2.18 .. 5.90 ms.
  r.run_to(ms(7));
  r.settle();
  EXPECT_EQ(r.cpu(0).time[kKsoftirqd], us(3720));
  EXPECT_EQ(r.cpu(0).ksoftirqd->se.sum_exec_runtime, us(3720));
  EXPECT_EQ(r.cpu(0).sd.processed, 1000u);
}

/// The ksoftirqd-mode scenario: a user hog on CPU 0 from t=0, 5000 packets on one queue at
/// 10 us, rx_pkt_ns 100. Inline softirq on top of the hog: 10 passes of one 64-packet poll,
/// 10..74 us, then ksoftirqd is woken. It does not wake-preempt the hog (EEVDF, 1 CPU: the hog's
/// vruntime is 10 us, interrupt time excluded; ksoftirqd is placed at V = 10 us with lag 0; the
/// hog is eligible and still protected by RUN_TO_PARITY: deadline 375 us = half a 750 us slice,
/// vlag == deadline). At the 1 ms tick the hog's vruntime (10 + 926 us) passes its deadline:
/// resched; V = (936 + 10) / 2 us < 936 us, so ksoftirqd runs next.
struct KsoftirqdModeResult {
  std::uint64_t softirq_runs;
  Nanos softirq, ksoftirqd, hog;
  std::uint64_t processed;
};
KsoftirqdModeResult run_ksoftirqd_mode(const std::string& mode) {
  CostParams c = zero_costs();
  c.rx_pkt_ns = 100;
  KernelParams kp;
  kp.ksoftirqd_mode = mode;
  Rig r(shape(1), kp, c);
  r.k.add_nic(one_queue_nic(8192), "/nic");
  Socket& s = r.k.add_socket(0, 0);
  At at(r.host);
  Task& h = r.k.create_task("hog", TaskKind::kUser, r.only(0));
  start(r.k, h, hog(r.k, h));
  at(us(10), [&] { flood(r.k, s.id, 5000); });
  bool ksoftirqd_waiting_at_900us = false;
  at(us(900),
     [&] { ksoftirqd_waiting_at_900us = r.cpu(0).ksoftirqd->state == TaskState::kRunnable && r.cpu(0).curr == &h; });
  r.run_to(ms(2));
  r.settle();
  EXPECT_TRUE(ksoftirqd_waiting_at_900us) << mode;
  EXPECT_EQ(r.cpu(0).time[kUser] + r.cpu(0).time[kSoftirq] + r.cpu(0).time[kKsoftirqd], ms(2)) << mode;
  return {r.cpu(0).softirq_runs, r.cpu(0).time[kSoftirq], r.cpu(0).time[kKsoftirqd], h.exec_ns, r.cpu(0).sd.processed};
}

TEST(KernelTest, LetKsoftirqdDoItsJobModeSuppressesInlineSoftirq) {
  // 4.9-6.4: at the 1 ms tick's irq_exit NET_RX is pending but ksoftirqd is runnable, so
  // invoke_softirq() leaves it to ksoftirqd: 4360 packets = 436 us of ksoftirqd time.
  const auto old = run_ksoftirqd_mode("4.9-6.4");
  EXPECT_EQ(old.softirq_runs, 1u);
  EXPECT_EQ(old.softirq, us(64));
  EXPECT_EQ(old.ksoftirqd, us(436));
  EXPECT_EQ(old.hog, ms(2) - us(500));
  EXPECT_EQ(old.processed, 5000u);
  // v6.5 (reverted): the tick's irq_exit runs softirq inline; need_resched is already set by the
  // tick, so handle_softirqs stops after one pass (6.4 us) and ksoftirqd does the other 429.6 us.
  const auto now = run_ksoftirqd_mode("v6.5");
  EXPECT_EQ(now.softirq_runs, 2u);
  EXPECT_EQ(now.softirq, 70400);
  EXPECT_EQ(now.ksoftirqd, 429600);
  EXPECT_EQ(now.hog, ms(2) - us(500));
  EXPECT_EQ(now.processed, 5000u);
}

/// A task alternating 20 us in a BH-disabled kernel section and 20 us of user code, on CPU 0
/// alone. 5000 packets arrive at 10 us: the IRQ's irq_exit() cannot run softirq (BH disabled);
/// local_bh_enable() at 20 us runs it inline: 10 passes of 64 packets = 64 us, then
/// wakeup_softirqd(). ksoftirqd does not preempt the task (parity), so until the 1 ms tick the
/// task keeps calling local_bh_enable() with NET_RX pending.
Proc<void> bh_task(Kernel& k, Task& t) {
  for (;;) {
    k.local_bh_disable(t);
    co_await k.exec(k.task_ctx(t, CpuClass::kSystem), us(20));
    co_await k.local_bh_enable(t);
    co_await k.exec(k.task_ctx(t, CpuClass::kUser), us(20));
  }
}
std::uint64_t bh_enable_softirq_runs_before_tick(const std::string& mode) {
  CostParams c = zero_costs();
  c.rx_pkt_ns = 100;
  KernelParams kp;
  kp.ksoftirqd_mode = mode;
  Rig r(shape(1), kp, c);
  r.k.add_nic(one_queue_nic(8192), "/nic");
  Socket& s = r.k.add_socket(0, 0);
  At at(r.host);
  Task& t = r.k.create_task("bh", TaskKind::kUser, r.only(0));
  start(r.k, t, bh_task(r.k, t));
  at(us(10), [&] { flood(r.k, s.id, 5000); });
  r.run_to(us(999));
  EXPECT_EQ(r.cpu(0).ksoftirqd_wakeups, 1u) << mode;
  EXPECT_EQ(r.cpu(0).ksoftirqd->state, TaskState::kRunnable) << mode;
  return r.cpu(0).softirq_runs;
}

TEST(KernelTest, LetKsoftirqdDoItsJobModeAlsoDefersLocalBhEnable) {
  // 4.9-6.4: do_softirq() from local_bh_enable() also checks ksoftirqd_running(): after the
  // first inline run (20 .. 84 us) nothing runs inline until ksoftirqd gets the CPU.
  EXPECT_EQ(bh_enable_softirq_runs_before_tick("4.9-6.4"), 1u);
  // v6.5: every later local_bh_enable() with NET_RX pending runs it inline again.
  EXPECT_GT(bh_enable_softirq_runs_before_tick("v6.5"), 5u);
}

}  // namespace
}  // namespace napisim
