// Unit tests of the per-CPU cache state (sim/kernel/cache.cpp) against hand-computed timelines, on
// the shared rig (tests/unit/kernel_rig.hpp).
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

// ---- cache state (cache.cpp) ---------------------------------------------------------------

/// cache_refill_ns 2000, cache_evict_ns 2000, every other cost 0 unless a test sets it.
CostParams cache_costs() {
  CostParams c = zero_costs();
  c.cache_refill_ns = 2000;
  c.cache_evict_ns = 2000;
  return c;
}

/// Works `a` ns, then `b` ns, recording when each ended, then sleeps forever.
Proc<void> work_twice(Kernel& k, Task& t, Nanos a, Nanos b, Nanos* done_a, Nanos* done_b, WaitQueue& wq) {
  co_await k.exec(k.task_ctx(t, CpuClass::kUser), a);
  *done_a = k.now();
  co_await k.exec(k.task_ctx(t, CpuClass::kUser), b);
  *done_b = k.now();
  co_await k.sleep_on(t, wq);
}

TEST(CacheTest, ARequestCostsMoreAfterAnotherOwnersSoftirqRoundThanAfterItsOwnRun) {
  // A user task on CPU 0 serves two 10 us requests. It never ran: its first segment pays the whole
  // refill (2 us). The NIC interrupts it at 3 us: hardirq 3-4 us, then NET_RX polls the NAPI (500 +
  // 1000 ns), which never ran either (+2 us): 4-7.5 us. Back on CPU 0 the task finds 4.5 us of
  // other work since it left at 3 us: 2000 * (1 - exp(-4500/2000)) = 1789 ns of refill, so the
  // first request ends at 7.5 + 9 + 1.789 = 18.289 us. The second follows its own run: no refill,
  // 10 us.
  CostParams c = cache_costs();
  c.hardirq_ns = 1000;
  c.napi_poll_ns = 500;
  c.rx_pkt_ns = 1000;
  Rig r(shape(2), KernelParams{}, c);
  r.k.add_nic(one_queue_nic(), "/nic");
  Socket& s = r.k.add_socket(0, 0);
  At at(r.host);
  WaitQueue wq;
  Nanos done_a = -1, done_b = -1;
  Task& t = r.k.create_task("t", TaskKind::kUser, r.only(0));
  start(r.k, t, work_twice(r.k, t, us(10), us(10), &done_a, &done_b, wq));
  at(us(3), [&] { r.k.nic_rx(0, pkt(s.id)); });
  r.run_to(us(60));
  r.settle();
  EXPECT_EQ(done_a, 18289);
  EXPECT_EQ(done_b - done_a, us(10));
  EXPECT_EQ(t.exec_ns, 2000 + us(10) + 1789 + us(10));
  // The softirq paid the NAPI's cold start: 0.5 + 2 + 1 us.
  r.k.update_exec(r.cpu(0));
  EXPECT_EQ(r.cpu(0).time[static_cast<int>(CpuClass::kSoftirq)], 3500);

  // The same run with kernel.cache_model false: no surcharge anywhere, 10 + 1 + 1.5 = 12.5 us.
  KernelParams off;
  off.cache_model = false;
  Rig r2(shape(2), off, c);
  r2.k.add_nic(one_queue_nic(), "/nic");
  Socket& s2 = r2.k.add_socket(0, 0);
  At at2(r2.host);
  Nanos off_a = -1, off_b = -1;
  Task& t2 = r2.k.create_task("t", TaskKind::kUser, r2.only(0));
  start(r2.k, t2, work_twice(r2.k, t2, us(10), us(10), &off_a, &off_b, wq));
  at2(us(3), [&] { r2.k.nic_rx(0, pkt(s2.id)); });
  r2.run_to(us(60));
  EXPECT_EQ(off_a, 12500);
  EXPECT_EQ(off_b, 22500);
}

TEST(CacheTest, AMigratedTaskPaysTheRefillOnceOnItsNewCore) {
  // Two cores in one LLC. The task runs 10 us on CPU 0 (+2 us cold) and sleeps at 12 us. A hog
  // pinned to CPU 0 starts at 20 us, so the wakeup at 30 us (from CPU 0) places the task on idle
  // CPU 1: another core holds none of its lines, 2 us of refill (no LLC or node penalty within
  // the LLC), 5 + 2 us of work. Woken again at 50 us on CPU 1, where nothing ran since: 5 us.
  Rig r(shape(2), KernelParams{}, cache_costs());
  At at(r.host);
  WaitQueue wq, wq_h;
  std::vector<Nanos> got;
  Nanos never = -1;
  Task& t = r.k.create_task("t", TaskKind::kUser, r.all());
  Task& h = r.k.create_task("hog", TaskKind::kUser, r.only(0));
  start(r.k, t, run_then_sleeper(r.k, t, wq, us(10), &got, us(5)), 0);
  at(us(20), [&] { start(r.k, h, work_once(r.k, h, us(100), &never, wq_h), 0); });
  at(us(30), [&] { r.k.wake_up(wq, 0); });
  Nanos exec_after_move = -1;
  at(us(45), [&] {
    r.settle();
    exec_after_move = t.exec_ns;
  });
  at(us(50), [&] { r.k.wake_up(wq, 0); });
  r.run_to(us(70));
  r.settle();
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(t.cpu, 1);
  EXPECT_EQ(t.migrations, 1U);
  EXPECT_EQ(exec_after_move, us(12) + us(7));
  EXPECT_EQ(t.exec_ns, us(12) + us(7) + us(5));
}

TEST(CacheTest, AnotherLlcAddsItsPenaltyToTheRefill) {
  // As above across two LLCs with remote_llc_penalty_ns 3000: the move costs 2 + 3 us of refill.
  TopologyParams tp = shape(1);
  tp.llcs_per_node = 2;
  tp.remote_llc_penalty_ns = 3000;
  Rig r(tp, KernelParams{}, cache_costs());
  At at(r.host);
  WaitQueue wq, wq_h;
  std::vector<Nanos> got;
  Nanos never = -1;
  Task& t = r.k.create_task("t", TaskKind::kUser, r.all());
  Task& h = r.k.create_task("hog", TaskKind::kUser, r.only(0));
  start(r.k, t, run_then_sleeper(r.k, t, wq, us(10), &got, us(5)), 0);
  at(us(20), [&] { start(r.k, h, work_once(r.k, h, us(100), &never, wq_h), 0); });
  // Wakeup placement stays in prev's LLC: sched_setaffinity() to CPU 1 while it sleeps moves it.
  at(us(25), [&] { t.allowed = r.only(1); });
  at(us(30), [&] { r.k.wake_up(wq, 0); });
  r.run_to(us(60));
  r.settle();
  EXPECT_EQ(t.cpu, 1);
  EXPECT_EQ(t.exec_ns, us(12) + us(5) + us(5));
}

TEST(CacheTest, AnSmtSiblingsWorkDisplacesTheCoresLines) {
  // One core, two threads (CPUs 0 and 1). The task runs 10 us on CPU 0 (+2 us cold) and sleeps at
  // 12 us. Another task works 3 us on CPU 1 from 20 us (+2 us cold: busy 20-25 us, the sibling
  // idle so at full speed). Woken at 30 us on CPU 0, the task finds 5 us of its core's work since
  // it left: 2000 * (1 - exp(-2.5)) = 1836 ns of refill.
  Rig r(shape(1, 2), KernelParams{}, cache_costs());
  At at(r.host);
  WaitQueue wq, wq2;
  std::vector<Nanos> got;
  Nanos done2 = -1;
  Task& t = r.k.create_task("t", TaskKind::kUser, r.only(0));
  Task& t2 = r.k.create_task("t2", TaskKind::kUser, r.only(1));
  start(r.k, t, run_then_sleeper(r.k, t, wq, us(10), &got, us(5)), 0);
  at(us(20), [&] { start(r.k, t2, work_once(r.k, t2, us(3), &done2, wq2), 1); });
  at(us(30), [&] { r.k.wake_up(wq, 1); });
  r.run_to(us(60));
  r.settle();
  EXPECT_EQ(done2, us(25));
  EXPECT_EQ(t.exec_ns, us(12) + us(5) + 1836);
}

/// Reads the socket twice, each time as soon as data arrives, then sleeps forever.
Proc<void> reader_twice(Kernel& k, Task& t, Socket& s, WaitQueue& wq) {
  co_await k.sys_recv_wait(t, s, 1 << 20);
  co_await k.sys_recv_wait(t, s, 1 << 20);
  co_await k.sleep_on(t, wq);
}

/// The socket-bounce rig: NET_RX on CPU 0 (the NIC's IRQ CPU) delivers a packet at 5 us and one
/// at 20 us to a reader pinned to CPU 1; every cost is 0 but sk_bounce_ns 400 (no refills).
/// Returns {the reader's CPU time after its first read, after both; CPU 0's softirq time}.
std::tuple<Nanos, Nanos, Nanos> socket_bounces(const TopologyParams& tp, bool cache_model) {
  CostParams c = zero_costs();
  c.sk_bounce_ns = 400;
  KernelParams kp;
  kp.cache_model = cache_model;
  Rig r(tp, kp, c);
  r.k.add_nic(one_queue_nic(), "/nic");
  Socket& s = r.k.add_socket(0, 0);
  At at(r.host);
  WaitQueue wq;
  Nanos first = -1;
  Task& t = r.k.create_task("reader", TaskKind::kUser, r.only(1));
  start(r.k, t, reader_twice(r.k, t, s, wq), 1);
  at(us(5), [&] { r.k.nic_rx(0, pkt(s.id)); });
  at(us(15), [&] {
    r.settle();
    first = t.exec_ns;
  });
  at(us(20), [&] { r.k.nic_rx(0, pkt(s.id)); });
  r.run_to(us(60));
  r.settle();
  r.k.update_exec(r.cpu(0));
  return {first, t.exec_ns, r.cpu(0).time[kSoftirq]};
}

TEST(CacheTest, ASocketWrittenOnAnotherCorePaysForItsLinesEachTimeTheyMove) {
  // Two cores. At 5 us NET_RX on CPU 0 is the socket's first writer: nothing to move. The reader's
  // recvmsg() on CPU 1 then takes the lines from CPU 0's core: 400 ns. At 20 us NET_RX takes them
  // back (400 ns of softirq on CPU 0) and the second read moves them again (400 ns): 800 ns of the
  // reader's. Nothing else is charged: the owners' refills are 0.
  auto [first, both, softirq] = socket_bounces(shape(2), true);
  EXPECT_EQ(first, 400);
  EXPECT_EQ(both, 800);
  EXPECT_EQ(softirq, 400);
  // SMT siblings share L1 and L2: NET_RX on CPU 0 and the reader on CPU 1 of one core move nothing.
  auto [smt_first, smt_both, smt_softirq] = socket_bounces(shape(1, 2), true);
  EXPECT_EQ(smt_first, 0);
  EXPECT_EQ(smt_both, 0);
  EXPECT_EQ(smt_softirq, 0);
  // kernel.cache_model false: no surcharge.
  auto [off_first, off_both, off_softirq] = socket_bounces(shape(2), false);
  EXPECT_EQ(off_first, 0);
  EXPECT_EQ(off_both, 0);
  EXPECT_EQ(off_softirq, 0);
}

}  // namespace
}  // namespace napisim
