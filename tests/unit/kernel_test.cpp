// Unit tests of the kernel's CPU levels (sim/kernel/cpu.cpp: hardirq, softirq and task context,
// SMT sharing, chained segments, CPU-time accounting, PSI) against hand-computed timelines, on the
// shared rig (tests/unit/kernel_rig.hpp).
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

// ---- hardirq / softirq / task levels -------------------------------------------------------

TEST(KernelTest, HardirqPreemptsTaskAndSegmentResumesWithRemainingWork) {
  // A task starts 10 us of user work at t=0. A resched IPI (handler 1000 ns) arrives at 3 us:
  // the hardirq runs 3..4 us, the task resumes with its remaining 7 us and finishes at
  // 0 + 10 + 1 = 11 us. The IPI's need_resched re-picks the same (only) task: no switch.
  CostParams c = zero_costs();
  c.ipi_handler_ns = 1000;
  Rig r(shape(1), KernelParams{}, c);
  WaitQueue wq;
  Nanos done = -1;
  Task& t = r.k.create_task("t", TaskKind::kUser, r.only(0));
  start(r.k, t, work_once(r.k, t, us(10), &done, wq));
  r.k.raise_irq(0, Kernel::irq_code(Kernel::kIrqIpiResched, 0), us(3));
  r.run_to(us(50));
  r.settle();
  EXPECT_EQ(done, us(11));
  EXPECT_EQ(r.cpu(0).time[kHardirq], 1000);
  EXPECT_EQ(r.cpu(0).time[kUser], us(10));
  EXPECT_EQ(t.exec_ns, us(10));          // IRQ_TIME_ACCOUNTING: the interrupt is not the task's time
  EXPECT_EQ(r.cpu(0).ctx_switches, 2u);  // idle -> t, t -> idle when it sleeps
}

TEST(KernelTest, SmtSiblingsShareTheCoreThroughput) {
  // One core, two threads (CPUs 0 and 1), smt_speed 0.62: while both siblings are busy each runs
  // at 620/1000 of full speed, and a segment's end is rounded up to the next ns (exec_ns()).
  //  * A: 1240 ns of work on CPU 0, B: 310 ns on CPU 1, both from t = 0. Both run at 0.62 until B
  //    ends at 310 / 0.62 = 500 ns; A has done 310 by then and its other 930 at full speed: 1430.
  //  * From 10 us, C: 1000 ns on CPU 0 and D: 5000 ns on CPU 1. C ends at ceil(1000 / 0.62) =
  //    1613 ns; D has done 1000 by then and its other 4000 at full speed: 10 us + 5613.
  TopologyParams tp = shape(1, 2);
  tp.smt_speed = 0.62;
  Rig r(tp, KernelParams{}, zero_costs());
  At at(r.host);
  WaitQueue wq;
  Nanos a_done = -1, b_done = -1, c_done = -1, d_done = -1;
  Task& a = r.k.create_task("a", TaskKind::kUser, r.only(0));
  Task& b = r.k.create_task("b", TaskKind::kUser, r.only(1));
  Task& c = r.k.create_task("c", TaskKind::kUser, r.only(0));
  Task& d = r.k.create_task("d", TaskKind::kUser, r.only(1));
  start(r.k, a, work_once(r.k, a, 1240, &a_done, wq));
  start(r.k, b, work_once(r.k, b, 310, &b_done, wq));
  at(us(10), [&] {
    start(r.k, c, work_once(r.k, c, 1000, &c_done, wq));
    start(r.k, d, work_once(r.k, d, 5000, &d_done, wq));
  });
  r.run_to(us(30));
  EXPECT_EQ(b_done, 500);
  EXPECT_EQ(a_done, 1430);
  EXPECT_EQ(c_done, us(10) + 1613);
  EXPECT_EQ(d_done, us(10) + 5613);
  r.settle();
  EXPECT_EQ(r.cpu(0).time[kUser], 1430 + 1613);
  EXPECT_EQ(r.cpu(1).time[kUser], 500 + 5613);
}

TEST(KernelTest, SendsSplitIntoTsoTrainsOfWholeSegments) {
  // mss 1448, tso_max_bytes 65536: a super-packet carries 45 whole segments (65160 bytes). Each row:
  // bytes left to send, the next super-packet's payload, its wire segments, TSO super-packets of
  // a send of `bytes`.
  struct Row {
    std::int64_t bytes, train, segs, tso;
  };
  const NetParams n;
  EXPECT_EQ(n.max_train_bytes(), 65160);
  for (const Row& r : {Row{1, 1, 1, 1}, Row{1448, 1448, 1, 1}, Row{1449, 1449, 2, 1}, Row{65160, 65160, 45, 1},
                       Row{65161, 65160, 45, 2}, Row{65537, 65160, 45, 2}, Row{1 << 20, 65160, 45, 17}}) {
    EXPECT_EQ(n.train_bytes(r.bytes), r.train) << r.bytes;
    EXPECT_EQ(n.segs_of(n.train_bytes(r.bytes)), r.segs) << r.bytes;
    EXPECT_EQ(n.tso_count(r.bytes), r.tso) << r.bytes;
    // send_cost() charges tso_count() super-packets: exactly the trains nic_transmit() sends.
    std::int64_t trains = 0;
    for (std::int64_t left = r.bytes; left > 0; left -= n.train_bytes(left))
      ++trains;
    EXPECT_EQ(trains, r.tso) << r.bytes;
  }
  EXPECT_EQ(n.tso_count(0), 1);  // a pure ACK still goes out as one
  NetParams small;
  small.tso_max_bytes = 1000;  // below one MSS: still one whole segment per super-packet
  EXPECT_EQ(small.train_bytes(5000), 1448);
}

TEST(KernelTest, HardirqPreemptsTaskAndSoftirqRunsAtIrqExit) {
  // Same task (10 us from t=0). One packet reaches a 1-queue NIC at 3 us (rx-usecs 0: IRQ at
  // once). hardirq 1000 ns: 3..4 us; it schedules the NAPI and raises NET_RX, which irq_exit()
  // runs before returning to the task: napi_poll 500 + 1 packet * 1000 = 1500 ns: 4..5.5 us.
  // The task resumes with 7 us left: done at 12.5 us = 0 + 10 + 1 + 1.5.
  CostParams c = zero_costs();
  c.hardirq_ns = 1000;
  c.napi_poll_ns = 500;
  c.rx_pkt_ns = 1000;
  Rig r(shape(1), KernelParams{}, c);
  r.k.add_nic(one_queue_nic(), "/nic");
  Socket& s = r.k.add_socket(0, 0);
  At at(r.host);
  WaitQueue wq;
  Nanos done = -1;
  Task& t = r.k.create_task("t", TaskKind::kUser, r.only(0));
  start(r.k, t, work_once(r.k, t, us(10), &done, wq));
  Nanos task_slot_remaining_at_softirq = -1;
  at(us(3), [&] { r.k.nic_rx(0, pkt(s.id)); });
  at(us(4) + 700, [&] {
    // Inside the softirq: the softirq level is active and the task's segment is frozen at 7 us.
    EXPECT_TRUE(r.cpu(0).softirq_active);
    EXPECT_FALSE(r.cpu(0).hardirq_active);
    r.k.update_exec(r.cpu(0));
    task_slot_remaining_at_softirq = t.slot.remaining;
  });
  r.run_to(us(50));
  r.settle();
  EXPECT_EQ(task_slot_remaining_at_softirq, us(7));
  EXPECT_EQ(done, us(12) + 500);
  const Cpu& c0 = r.cpu(0);
  EXPECT_EQ(c0.time[kHardirq], 1000);
  EXPECT_EQ(c0.time[kSoftirq], 1500);
  EXPECT_EQ(c0.time[kUser], us(10));
  EXPECT_EQ(c0.irqs, 1u);
  EXPECT_EQ(c0.softirq_runs, 1u);
  EXPECT_EQ(c0.sd.processed, 1u);
  EXPECT_EQ(c0.ksoftirqd_wakeups, 0u);
  EXPECT_EQ(t.exec_ns, us(10));
  EXPECT_TRUE(r.k.nics()[0]->channels[0]->irq_armed);  // napi_complete_done re-armed the CQ
}

TEST(KernelTest, GroNormalBatchCountsSegmentsNotSkbs) {
  // gro_normal_one() (v6.6): napi->rx_count += segs. Three 4-segment trains (4000 bytes each) reach
  // an idle 1-CPU host's 1-queue NIC at 3 us (IRQ at once). Every cost is 0 but rx_pkt_ns, 1000 per
  // segment: the poll works 3..15 us. With gro_normal_batch 8 the first two trains (8 segments) go
  // up the stack at 11 us and the third at the poll's end, 15 us; counting skbs, all three would
  // wait until 15 us.
  CostParams c = zero_costs();
  c.rx_pkt_ns = 1000;
  Rig r(shape(1), KernelParams{}, c);
  r.k.add_nic(one_queue_nic(), "/nic");
  Socket& s = r.k.add_socket(0, 0);
  At at(r.host);
  at(us(3), [&] {
    for (int i = 0; i < 3; ++i)
      r.k.nic_rx(0, pkt(s.id, 4));
  });
  std::int64_t before_11 = -1, after_11 = -1, before_15 = -1;
  at(us(11) - 1, [&] { before_11 = s.rx_avail; });
  at(us(11) + 1, [&] { after_11 = s.rx_avail; });
  at(us(15) - 1, [&] { before_15 = s.rx_avail; });
  r.run_to(us(50));
  EXPECT_EQ(before_11, 0);
  EXPECT_EQ(after_11, 8000);
  EXPECT_EQ(before_15, 8000);
  EXPECT_EQ(s.rx_avail, 12000);
  EXPECT_EQ(r.cpu(0).time[kSoftirq], us(12));
}

TEST(KernelTest, FullTxCompletionReapKeepsTheNapiScheduled) {
  // mlx5e_napi_poll(): a TX CQ poll that reaps its whole budget (MLX5E_TX_CQ_POLL_BUDGET, 128)
  // makes the poll "busy": it returns the full budget and does not complete. 200 TX completions
  // wait when one packet arrives at 3 us (IRQ at once, hardirq 1000 ns: 3..4 us). Poll 1 reaps
  // 128 (100 ns each) and the packet (1000 ns): 4..17.8 us, busy, so net_rx_action() repolls
  // (a full poll); poll 2 reaps the other 72: 17.8..25 us, completes and re-arms the IRQ with
  // nothing pending. One interrupt in all (without the busy rule, poll 1 would complete and the
  // re-armed CQ would interrupt again for the 72).
  CostParams c = zero_costs();
  c.hardirq_ns = 1000;
  c.rx_pkt_ns = 1000;
  c.tx_completion_ns = 100;
  Rig r(shape(1), KernelParams{}, c);
  r.k.add_nic(one_queue_nic(), "/nic");
  Socket& s = r.k.add_socket(0, 0);
  r.k.nics()[0]->channels[0]->tx_pending = 200;
  At at(r.host);
  at(us(3), [&] { r.k.nic_rx(0, pkt(s.id)); });
  r.run_to(us(50));
  const Cpu& c0 = r.cpu(0);
  const Napi& n = *r.k.napis()[0];
  EXPECT_EQ(c0.irqs, 1u);
  EXPECT_EQ(n.polls, 2u);
  EXPECT_EQ(n.full_polls, 1u);
  EXPECT_EQ(c0.time[kHardirq], 1000);
  EXPECT_EQ(c0.time[kSoftirq], us(21));
  EXPECT_EQ(r.k.nics()[0]->channels[0]->tx_pending, 0);
  EXPECT_EQ(s.rx_avail, 1000);
  EXPECT_TRUE(r.k.nics()[0]->channels[0]->irq_armed);
}

TEST(KernelTest, NetdevBudgetUsecsDefaultsToTwoJiffies) {
  // net/core/dev.c (v5.7+): netdev_budget_usecs = 2 * USEC_PER_SEC / HZ; 0 in the scenario asks for it.
  for (const auto& [hz, set, want] :
       {std::tuple{1000, 0, 2000}, std::tuple{250, 0, 8000}, std::tuple{100, 0, 20000}, std::tuple{250, 3000, 3000}}) {
    KernelParams kp;
    kp.hz = hz;
    kp.net.netdev_budget_usecs = set;
    Rig r(shape(1), kp, zero_costs());
    EXPECT_EQ(r.k.params().net.netdev_budget_usecs, want) << hz << " " << set;
    EXPECT_EQ(r.k.usecs_to_jiffies(r.k.params().net.netdev_budget_usecs), set ? 1 : 2) << hz;
  }
}
// ---- chained segments (Kernel::exec_chain) -------------------------------------------------

/// At `when`, records the class of the part task `t` runs on CPU 0 (its accounting brought up to then).
void class_at(At& at, Rig& r, Task& t, Nanos when, CpuClass* out) {
  at(when, [&r, &t, out] {
    r.k.update_exec(r.cpu(0));
    *out = t.slot.cls;
  });
}

/// A syscall, user work and a syscall, once, chained or as three exec() calls; records the end
/// and, chained, when the last part began (Slot::part_begun).
Proc<void> syscall_user_syscall(Kernel& k, Task& t, bool chained, Nanos* done, WaitQueue& wq,
                                Nanos* last_begun = nullptr) {
  if (chained) {
    co_await k.exec_chain(t, {CpuClass::kSystem, us(2)}, {CpuClass::kUser, us(3)}, {CpuClass::kSystem, us(5)});
    if (last_begun) *last_begun = t.slot.part_begun;
  } else {
    co_await k.exec(k.task_ctx(t, CpuClass::kSystem), us(2));
    co_await k.exec(k.task_ctx(t, CpuClass::kUser), us(3));
    co_await k.exec(k.task_ctx(t, CpuClass::kSystem), us(5));
  }
  *done = k.now();
  co_await k.sleep_on(t, wq);
}

TEST(KernelTest, ChainedSegmentChargesEachPartToItsClassInOneEvent) {
  // sys 2 us + user 3 us + sys 5 us from t=0 on an idle CPU: done at 10 us, 7 us system and 3 us
  // user, exactly as three exec() calls, with two CPU events fewer. The class in force is the
  // part's: user between 2 and 5 us. A resched IPI (handler 1 us) at 3.5 us, inside the user
  // part, delays the end by 1 us and leaves the split unchanged. The chain's last part began at
  // 5 us (6 us with the IPI), where the third exec() would have started.
  for (const bool irq : {false, true}) {
    std::uint64_t events[2];
    for (const bool chained : {false, true}) {
      CostParams c = zero_costs();
      c.ipi_handler_ns = 1000;
      Rig r(shape(1), KernelParams{}, c);
      At at(r.host);
      WaitQueue wq;
      Nanos done = -1, last_begun = -1;
      CpuClass at_1us = CpuClass::kIdle, at_4us = CpuClass::kIdle, at_9us = CpuClass::kIdle;
      Task& t = r.k.create_task("t", TaskKind::kUser, r.only(0));
      start(r.k, t, syscall_user_syscall(r.k, t, chained, &done, wq, &last_begun));
      class_at(at, r, t, us(1), &at_1us);
      class_at(at, r, t, us(4), &at_4us);
      class_at(at, r, t, us(9), &at_9us);
      if (irq) r.k.raise_irq(0, Kernel::irq_code(Kernel::kIrqIpiResched, 0), us(3) + 500);
      r.run_to(us(50));
      r.settle();
      SCOPED_TRACE(std::string(chained ? "chained" : "three exec()") + (irq ? " + IPI" : ""));
      EXPECT_EQ(done, irq ? us(11) : us(10));
      EXPECT_EQ(r.cpu(0).time[kSystem], us(7));
      EXPECT_EQ(r.cpu(0).time[kUser], us(3));
      EXPECT_EQ(r.cpu(0).time[kHardirq], irq ? 1000 : 0);
      EXPECT_EQ(t.exec_ns, us(10));
      EXPECT_EQ(at_1us, CpuClass::kSystem);
      EXPECT_EQ(at_4us, CpuClass::kUser);
      EXPECT_EQ(at_9us, CpuClass::kSystem);
      if (chained) {
        EXPECT_EQ(last_begun, irq ? us(6) : us(5));
      }
      events[chained] = r.host.events_processed();
    }
    EXPECT_EQ(events[0] - events[1], 2u) << "irq " << irq;
  }
}

/// Two chains back to back, the second without work; records when each one's last part began.
Proc<void> chain_then_empty_chain(Kernel& k, Task& t, Nanos* first, Nanos* second, WaitQueue& wq) {
  co_await k.exec_chain(t, {CpuClass::kSystem, us(2)}, {CpuClass::kSystem, us(3)});
  *first = t.slot.part_begun;
  co_await k.exec_chain(t, {CpuClass::kUser, 0}, {CpuClass::kSystem, 0});
  *second = t.slot.part_begun;
  co_await k.sleep_on(t, wq);
}

TEST(KernelTest, ChainPartBegunIsNowForAChainWithoutWork) {
  // sys 2 us + sys 3 us from t=0: the last part began at 2 us. A chain with no work that follows
  // at 5 us does not suspend, and its last part (the send() a caller times) begins then, at 5 us.
  Rig r(shape(1), KernelParams{}, zero_costs());
  WaitQueue wq;
  Nanos first = -1, second = -1;
  Task& t = r.k.create_task("t", TaskKind::kUser, r.only(0));
  start(r.k, t, chain_then_empty_chain(r.k, t, &first, &second, wq));
  r.run_to(us(50));
  r.settle();
  EXPECT_EQ(first, us(2));
  EXPECT_EQ(second, us(5));
}

/// One chain: sys 2 us then user 5 us, alone (form 0) or with zero-cost parts before and between
/// them (form 1), or four zero-cost parts (form 2); records when it ends.
Proc<void> chain_with_gaps(Kernel& k, Task& t, int form, Nanos* done, WaitQueue& wq) {
  if (form == 0) {
    co_await k.exec_chain(t, {CpuClass::kSystem, us(2)}, {CpuClass::kUser, us(5)});
  } else if (form == 1) {
    co_await k.exec_chain(t, {CpuClass::kSystem, 0}, {CpuClass::kSystem, us(2)}, {CpuClass::kUser, 0},
                          {CpuClass::kUser, us(5)});
  } else {
    co_await k.exec_chain(t, {CpuClass::kSystem, 0}, {CpuClass::kUser, 0}, {CpuClass::kSystem, 0},
                          {CpuClass::kUser, 0});
  }
  *done = k.now();
  co_await k.sleep_on(t, wq);
}

TEST(KernelTest, ChainedSegmentSkipsZeroCostParts) {
  // From t=0 on an idle CPU, (sys 0, sys 2 us, user 0, user 5 us) runs as (sys 2 us, user 5 us):
  // done at 7 us, 2 us system then 5 us user (user from 2 us on), in as many events. With cost
  // variability (cost_cv 0.3) the skipped parts draw no factor (a zero-cost part that ran would
  // take at least 1 ns and shift every later draw), so both chains end at the same instant. A
  // chain with no work does not suspend: done at 0, no CPU time, one event fewer (its end).
  for (const double cv : {0.0, 0.3}) {
    Nanos done[3], sys[3], user[3];
    std::uint64_t events[3];
    for (const int form : {0, 1, 2}) {
      CostParams c = zero_costs();
      c.cost_cv = cv;
      Rig r(shape(1), KernelParams{}, c);
      At at(r.host);
      WaitQueue wq;
      done[form] = -1;
      CpuClass at_1us = CpuClass::kIdle, at_3us = CpuClass::kIdle;
      Task& t = r.k.create_task("t", TaskKind::kUser, r.only(0));
      start(r.k, t, chain_with_gaps(r.k, t, form, &done[form], wq));
      class_at(at, r, t, us(1), &at_1us);
      class_at(at, r, t, us(3), &at_3us);
      r.run_to(us(50));
      r.settle();
      SCOPED_TRACE("cost_cv " + std::to_string(cv) + ", form " + std::to_string(form));
      sys[form] = r.cpu(0).time[kSystem];
      user[form] = r.cpu(0).time[kUser];
      EXPECT_EQ(t.exec_ns, done[form]);
      if (form != 2) {
        EXPECT_EQ(at_1us, CpuClass::kSystem);
        EXPECT_EQ(at_3us, CpuClass::kUser);
      }
      events[form] = r.host.events_processed();
    }
    SCOPED_TRACE("cost_cv " + std::to_string(cv));
    if (cv == 0) {
      EXPECT_EQ(done[0], us(7));
      EXPECT_EQ(sys[0], us(2));
      EXPECT_EQ(user[0], us(5));
    } else {
      EXPECT_NE(done[0], us(7));  // the factors were drawn
    }
    EXPECT_EQ(done[1], done[0]);
    EXPECT_EQ(sys[1], sys[0]);
    EXPECT_EQ(user[1], user[0]);
    EXPECT_EQ(events[1], events[0]);
    EXPECT_EQ(done[2], 0);
    EXPECT_EQ(sys[2] + user[2], 0);
    EXPECT_EQ(events[0] - events[2], 1u);
  }
}
// ---- accounting ----------------------------------------------------------------------------

TEST(KernelTest, PerCpuTimeSumsToElapsedTimeInBusyMixedScenario) {
  // SMT (2 cores x 2 threads), default (non-zero) costs, a 2-queue NIC with IRQs on CPUs 0 and 1,
  // 8 flows, an epoll server, hogs of two classes, a FIFO task woken periodically, traffic bursts
  // that overflow into ksoftirqd. Every CPU's per-class time must add up to the elapsed time.
  Rig r(shape(2, 2), KernelParams{}, CostParams{});
  NicParams np;
  np.queues = 2;
  np.ring_size = 256;
  np.irq_affinity = "0-1";
  r.k.add_nic(np, "/nic");
  TestPeer peer;
  r.k.set_peer(&peer);
  Epoll& ep = r.k.add_epoll();
  std::vector<int> socks;
  for (std::uint32_t i = 0; i < 8; ++i) {
    Socket& s = r.k.add_socket(0, i);
    r.k.epoll_ctl_add(ep, s);
    socks.push_back(s.id);
  }
  Task& srv = r.k.create_task("srv", TaskKind::kUser, r.all());
  start(r.k, srv, epoll_server(r.k, srv, ep, us(3)), 2);
  Task& h1 = r.k.create_task("h1", TaskKind::kUser, r.all());
  Task& h2 = r.k.create_task("h2", TaskKind::kUser, r.all(), SchedPolicy::kNormal, 5);
  Task& h3 = r.k.create_task("h3", TaskKind::kKthread, r.only(1), SchedPolicy::kBatch);
  start(r.k, h1, hog(r.k, h1), 0);
  start(r.k, h2, kernel_hog(r.k, h2, CpuClass::kSystem, us(37)), 3);
  start(r.k, h3, kernel_hog(r.k, h3, CpuClass::kKthread, us(250)), 1);
  WaitQueue fq;
  std::vector<Nanos> fgot;
  Task& f = r.k.create_task("f", TaskKind::kUser, r.all(), SchedPolicy::kFifo, 0, 10);
  start(r.k, f, sleeper(r.k, f, fq, &fgot, us(40)), 3);
  At at(r.host);
  Rng rng(42);
  for (int i = 0; i < 4000; ++i) {
    const Nanos t = us(5) * i + static_cast<Nanos>(rng.uniform01() * 4000);
    const int sock = socks[static_cast<std::size_t>(i % 8)];
    const auto segs = static_cast<std::uint32_t>(1 + (i % 5 == 0 ? 40 : i % 3));
    at(t, [&r, sock, segs] { r.k.nic_rx(0, pkt(sock, segs)); });
  }
  for (int i = 1; i < 100; ++i)
    at(us(200) * i + 7, [&r, &fq] { r.k.wake_up(fq, 2); });
  for (Nanos t : {ms(5) + 3, ms(11) + 999, ms(17) + 1, ms(20)}) {
    r.run_to(t);
    for (int i = 0; i < r.k.nr_cpus(); ++i) {
      Cpu& c = r.cpu(i);
      r.k.update_exec(c);
      Nanos sum = 0;
      for (Nanos v : c.time)
        sum += v;
      EXPECT_EQ(sum, t) << "cpu " << i << " at " << t;
    }
  }
  std::uint64_t processed = 0;
  for (int i = 0; i < r.k.nr_cpus(); ++i)
    processed += r.cpu(i).sd.processed;
  EXPECT_GT(processed, 10000u);
  EXPECT_GT(fgot.size(), 50u);
  EXPECT_GT(srv.exec_ns, 0);
  EXPECT_GT(r.cpu(0).time[kSoftirq] + r.cpu(0).time[kKsoftirqd], 0);
}
// ---- PSI -----------------------------------------------------------------------------------

TEST(KernelTest, PsiCpuSomeCountsWaitingRunnableTasks) {
  // psi.c test_state(): CPU_SOME <=> nr_running > oncpu. Two hogs on one CPU: one always waits,
  // some = 100 % of non-idle time. One hog: 0.
  for (int hogs : {1, 2}) {
    Rig r(shape(1), KernelParams{}, zero_costs());
    std::vector<Task*> ts;
    for (int i = 0; i < hogs; ++i) {
      Task& t = r.k.create_task("h" + std::to_string(i), TaskKind::kUser, r.only(0));
      start(r.k, t, hog(r.k, t));
    }
    r.run_to(ms(100));
    r.settle();
    EXPECT_EQ(r.cpu(0).psi_nonidle_ns, ms(100)) << hogs;
    EXPECT_EQ(r.cpu(0).psi_some_ns, hogs == 2 ? ms(100) : 0) << hogs;
  }
}

}  // namespace
}  // namespace napisim
