// Unit tests of epoll (sim/kernel/socket.cpp: ep_poll, epoll_pwait2, the userspace busy loop,
// epoll_ctl's ep_modify) against hand-computed timelines, on the shared rig
// (tests/unit/kernel_rig.hpp).
#include <algorithm>
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

/// The epoll_wait tests' costs: syscall 100 + epoll_wait 250 ns entry, 40 ns per event.
CostParams epoll_costs() {
  CostParams c = zero_costs();
  c.syscall_ns = 100;
  c.epoll_wait_ns = 250;
  c.epoll_event_ns = 40;
  return c;
}

/// What ep_poll_callback() queues: `s`, with data to read, on `ep`'s ready list.
void make_ready(Epoll& ep, Socket& s) {
  s.rx_avail = std::max<std::int64_t>(s.rx_avail, 1);  // ep_send_events() re-polls it
  ep.ready.push_back(s.id);
  s.on_ready_list = true;
}

/// One epoll_wait() on `ep` (events already queued or arriving later); records when it returned,
/// how many events and the owed transfer time (owed == nullptr: the transfer is executed).
Proc<void> epoll_once(Kernel& k, Task& t, Epoll& ep, Nanos* owed, Nanos* returned, int* n, WaitQueue& wq) {
  std::vector<int> ev;
  *n = co_await k.epoll_wait(t, ep, 16, ev, -1, owed);
  *returned = k.now();
  co_await k.sleep_on(t, wq);
}

/// Two CPUs with epoll_costs(), one epoll and a one-queue NIC for its sockets; run() makes one
/// epoll_once() call on CPU 0 and keeps what it recorded.
struct EpollRig {
  Rig r{shape(2), KernelParams{}, epoll_costs()};
  At at{r.host};
  Epoll& ep = r.k.add_epoll();
  WaitQueue wq;
  Nanos owed = -1, returned = -1;
  int n = -1;
  EpollRig() { r.k.add_nic(one_queue_nic(), "/nic"); }
  Socket& add_socket(std::uint32_t hash) { return r.k.add_socket(0, hash); }
  /// Runs the call for 50 us; `owe`: the transfer is left owed.
  Task& run(bool owe) {
    Task& t = r.k.create_task("t", TaskKind::kUser, r.only(0));
    start(r.k, t, epoll_once(r.k, t, ep, owe ? &owed : nullptr, &returned, &n, wq));
    r.run_to(us(50));
    r.settle();
    return t;
  }
};

TEST(KernelTest, EpSendEventsRequeuesLevelTriggeredItemsAndDisarmsOneshotOnes) {
  // Three sockets with data, added in the order a, b, c (c with EPOLLONESHOT): the ready list is
  // [a, b, c]. ep_send_events() with maxevents 2 reports a and b (2 x 40 ns) and puts them back
  // at once (level-triggered), behind c, which the scan did not reach: [c, a, b]. The next call
  // reports c, a, b; c is disarmed (its events cleared, unlinked), a and b go back again. Once a's
  // data is read, the scan an epoll_wait() starts with drops a, at the head, and finds b; with b
  // read as well nothing is available, and a packet for the disarmed c queues nothing.
  EpollRig e;
  Socket& a = e.add_socket(1);
  Socket& b = e.add_socket(2);
  Socket& c = e.add_socket(3);
  for (Socket* s : {&a, &b, &c})
    s->rx_avail = 100;
  e.r.k.epoll_ctl_add(e.ep, a);
  e.r.k.epoll_ctl_add(e.ep, b);
  e.r.k.epoll_ctl_add(e.ep, c, kEpollIn | kEpollOneshot);
  Task& t = e.r.k.create_task("t", TaskKind::kUser, e.r.only(0));
  auto list = [&] {
    std::vector<int> ids;
    for (std::size_t i = 0; i < e.ep.ready.size(); ++i) {
      ids.push_back(e.ep.ready.front());
      e.ep.ready.push_back(e.ep.ready.front());
      e.ep.ready.pop_front();
    }
    return ids;
  };
  std::vector<int> out;
  EXPECT_EQ(e.r.k.ep_send_events(t, e.ep, 2, out), 80);
  EXPECT_EQ(out, (std::vector<int>{a.id, b.id}));
  EXPECT_EQ(list(), (std::vector<int>{c.id, a.id, b.id}));
  EXPECT_EQ(e.r.k.ep_send_events(t, e.ep, 16, out), 120);
  EXPECT_EQ(out, (std::vector<int>{c.id, a.id, b.id}));
  EXPECT_EQ(list(), (std::vector<int>{a.id, b.id}));
  EXPECT_EQ(c.ep_events, kEpollOneshot);
  EXPECT_FALSE(c.on_ready_list);
  a.rx_avail = 0;
  EXPECT_TRUE(e.r.k.ep_events_available(e.ep));
  EXPECT_EQ(list(), (std::vector<int>{b.id}));
  EXPECT_FALSE(a.on_ready_list);
  b.rx_avail = 0;
  EXPECT_FALSE(e.r.k.ep_events_available(e.ep));
  EXPECT_FALSE(b.on_ready_list);
  e.r.k.sk_data_ready(Ctx{}, c);
  EXPECT_TRUE(e.ep.ready.empty());
}

TEST(KernelTest, EpollWaitLeavesTheTransferOwedWhenAsked) {
  // syscall 100 + epoll_wait 250 ns entry, 40 ns per event. Two sockets already ready at t=0: one
  // stretch of entry + transfer, 430 ns, returned after it, or owed at once (t=0). With the ready
  // list empty the entry runs (0..350), the task sleeps, a socket becomes ready at 5 us (woken
  // from CPU 1; IPI, handler and ctx_switch 0): the transfer (40 ns) is executed (returns at
  // 5040) or owed.
  for (const bool queued : {true, false}) {
    for (const bool owe : {false, true}) {
      EpollRig e;
      Socket& s1 = e.add_socket(1);
      Socket& s2 = e.add_socket(2);
      if (queued) {
        make_ready(e.ep, s1);
        make_ready(e.ep, s2);
      } else {
        e.at(us(5), [&] {
          make_ready(e.ep, s1);
          EXPECT_TRUE(e.r.k.wake_up(e.ep.wq, 1));
        });
      }
      e.run(owe);
      SCOPED_TRACE(std::string(queued ? "queued" : "woken") + (owe ? ", owed" : ""));
      EXPECT_EQ(e.n, queued ? 2 : 1);
      if (queued) {
        EXPECT_EQ(e.returned, owe ? 0 : 430);
        EXPECT_EQ(e.r.cpu(0).time[kSystem], owe ? 0 : 430);
      } else {
        EXPECT_EQ(e.returned, owe ? us(5) : us(5) + 40);
        EXPECT_EQ(e.r.cpu(0).time[kSystem], owe ? 350 : 390);
      }
      if (owe) {
        EXPECT_EQ(e.owed, queued ? 430 : 40);
      }
    }
  }
}

TEST(KernelTest, EpollWaitRechecksTheReadyListAfterTheEntryAndEachWakeup) {
  // ep_poll()'s loop, with the same costs as above (entry 350 ns, 40 ns per event), for both the
  // awaiter's own path (owed) and ep_poll_proc() (not owed):
  //  * "entry": a socket becomes ready at 200 ns, during the entry: no sleep; the call returns at
  //    the entry's end (350) owing 40 ns, or after the transfer (390).
  //  * "spurious": a wakeup at 5 us finds the list still empty: the task sleeps again (a second
  //    voluntary switch) and returns only after the socket is ready and woken at 8 us.
  // The final sleep_on() in epoll_once() adds one more voluntary switch in each case.
  for (const bool spurious : {false, true}) {
    for (const bool owe : {false, true}) {
      EpollRig e;
      Socket& s1 = e.add_socket(1);
      if (spurious) {
        e.at(us(5), [&] { EXPECT_TRUE(e.r.k.wake_up(e.ep.wq, 1)); });
        e.at(us(8), [&] {
          make_ready(e.ep, s1);
          EXPECT_TRUE(e.r.k.wake_up(e.ep.wq, 1));
        });
      } else {
        e.at(200, [&] {
          make_ready(e.ep, s1);
          EXPECT_FALSE(e.r.k.wake_up(e.ep.wq, 1));  // nobody waits yet: the task is in the entry
        });
      }
      const Task& t = e.run(owe);
      SCOPED_TRACE(std::string(spurious ? "spurious" : "entry") + (owe ? ", owed" : ""));
      EXPECT_EQ(e.n, 1);
      if (spurious) {
        EXPECT_EQ(e.returned, owe ? us(8) : us(8) + 40);
        EXPECT_EQ(t.nvcsw, 3u);
        EXPECT_EQ(t.wakeups, 2u);
      } else {
        EXPECT_EQ(e.returned, owe ? 350 : 390);
        EXPECT_EQ(t.nvcsw, 1u);
        EXPECT_EQ(t.wakeups, 0u);
      }
      EXPECT_EQ(e.r.cpu(0).time[kSystem], owe ? 350 : 390);
      if (owe) {
        EXPECT_EQ(e.owed, 40);
      }
      EXPECT_EQ(t.ep_poll, nullptr);
    }
  }
}

/// The application's busy loop: epoll_wait(timeout 0) until it returns events; records when.
Proc<void> epoll_busy_loop_once(Kernel& k, Task& t, Epoll& ep, Nanos* returned, int* n, WaitQueue& wq) {
  std::vector<int> ev;
  *n = co_await k.epoll_wait(t, ep, 16, ev, 0);
  if (*n == 0) *n = co_await k.epoll_wait_busy_loop(t, ep, 16, ev);
  *returned = k.now();
  co_await k.sleep_on(t, wq);
}

TEST(KernelTest, UserspaceBusyLoopFindsAnEventAtTheNextEpollWaitCall) {
  // The first epoll_wait(0) runs 0..350 and finds nothing; then calls of 350 ns at 350, 700,
  // 1050, 1400, each reading the ready list halfway: at 525, 875, 1225, 1575. An event is taken
  // by the next read, then the 40 ns transfer and the call's last 175 ns: queued at 1000 or at
  // 1225 -> read at 1225, returned at 1440; at 1226 -> read at 1575, returned at 1790. From 350
  // until the event is queued the calls find nothing: busy_spin; the rest is system time.
  for (const auto& [queued, returns] : {std::pair<Nanos, Nanos>{1000, 1440}, {1225, 1440}, {1226, 1790}}) {
    EpollRig e;
    Socket& s = e.add_socket(1);
    e.r.k.epoll_ctl_add(e.ep, s, kEpollIn);                         // nothing to read: not ready
    e.at(queued, [&] { e.r.k.ep_modify(e.ep, s, kEpollOut, 1); });  // writable at once: queued
    Task& t = e.r.k.create_task("t", TaskKind::kUser, e.r.only(0));
    start(e.r.k, t, epoll_busy_loop_once(e.r.k, t, e.ep, &e.returned, &e.n, e.wq));
    e.r.run_to(us(50));
    e.r.settle();
    SCOPED_TRACE("queued at " + std::to_string(queued));
    EXPECT_EQ(e.n, 1);
    EXPECT_EQ(e.returned, returns);
    EXPECT_EQ(e.r.cpu(0).time[kBusySpin], queued - 350);
    EXPECT_EQ(e.r.cpu(0).time[kSystem], returns - (queued - 350));
    EXPECT_EQ(e.r.cpu(0).time[kUser], 0);
  }
}

/// One epoll_pwait2() of `timeout` ns on `ep`; records when it returned and how many events.
Proc<void> epoll_pwait2_once(Kernel& k, Task& t, Epoll& ep, Nanos timeout, Nanos* returned, int* n, WaitQueue& wq) {
  std::vector<int> ev;
  *n = co_await k.epoll_pwait2(t, ep, 16, ev, timeout);
  *returned = k.now();
  co_await k.sleep_on(t, wq);
}

TEST(KernelTest, SelectEstimateAccuracyIsTheTimerSlackOrATenthOfAPercent) {
  Task t;
  EXPECT_EQ(Kernel::select_estimate_accuracy(t, us(100)), 50000);            // timer_slack_ns wins
  EXPECT_EQ(Kernel::select_estimate_accuracy(t, 200000000), 200000);         // 200 ms / 1000
  EXPECT_EQ(Kernel::select_estimate_accuracy(t, 1000000000000), 100000000);  // MAX_SLACK
  set_sched_attr(t.se, SchedPolicy::kNormal, 5);
  EXPECT_EQ(Kernel::select_estimate_accuracy(t, 200000000), 1000000);  // nice > 0: / 200
  t.timer_slack_ns = 1;
  EXPECT_EQ(Kernel::select_estimate_accuracy(t, us(100)), 500);
  set_sched_attr(t.se, SchedPolicy::kFifo, 0, 10);
  EXPECT_EQ(Kernel::select_estimate_accuracy(t, 200000000), 0);  // rt: no slack
}

TEST(KernelTest, EpollPwait2TimesOutAtTheEndOfTheSlackRange) {
  // epoll_pwait2(100 us) at t=0: entry 0..350, then the task sleeps with its hrtimer at 100 us +
  // 50 us slack = 150 us. Nothing arrives: the timer interrupt on CPU 0 (hardirq 500 ns) wakes it
  // at 150.5 us and the call returns 0 (no transfer). An rt task has no slack: 100.5 us. A socket
  // made ready at 20 us (from CPU 1) ends the wait first: the transfer (40 ns) and return at
  // 20.04 us, and the timer is cancelled: CPU 0 takes no interrupt.
  struct Case {
    bool rt;
    Nanos ready_at, returns;
    int n;
    std::uint64_t irqs;
  };
  for (const Case& c :
       {Case{false, -1, 150500, 0, 1}, Case{true, -1, 100500, 0, 1}, Case{false, us(20), 20040, 1, 0}}) {
    SCOPED_TRACE(std::string(c.rt ? "rt" : "normal") + (c.ready_at >= 0 ? ", event" : ", timeout"));
    CostParams costs = epoll_costs();
    costs.hardirq_ns = 500;
    Rig r{shape(2), KernelParams{}, costs};
    r.k.add_nic(one_queue_nic(), "/nic");
    At at{r.host};
    Epoll& ep = r.k.add_epoll();
    WaitQueue wq;
    Socket& s = r.k.add_socket(0, 1);
    r.k.epoll_ctl_add(ep, s, kEpollIn);
    if (c.ready_at >= 0) at(c.ready_at, [&] { r.k.ep_modify(ep, s, kEpollOut, 1); });
    Task& t = c.rt ? r.k.create_task("t", TaskKind::kUser, r.only(0), SchedPolicy::kFifo, 0, 10)
                   : r.k.create_task("t", TaskKind::kUser, r.only(0));
    Nanos returned = -1;
    int n = -1;
    start(r.k, t, epoll_pwait2_once(r.k, t, ep, us(100), &returned, &n, wq));
    r.run_to(us(300));
    r.settle();
    EXPECT_EQ(n, c.n);
    EXPECT_EQ(returned, c.returns);
    EXPECT_EQ(r.cpu(0).irqs, c.irqs);
  }
}

// ---- epoll_ctl(EPOLL_CTL_MOD): ep_modify() ----------------------------------------------------

/// epoll_costs() plus epoll_ctl 200 ns: an epoll_ctl() call is syscall 100 + 200 = 300 ns.
CostParams epoll_ctl_costs() {
  CostParams c = epoll_costs();
  c.epoll_ctl_ns = 200;
  return c;
}

/// epoll_ctl(MOD, `mask`) of `s`, then one epoll_wait() (its transfer executed); records when
/// the wait returned and what, then sleeps on `wq`.
Proc<void> mod_then_wait(Kernel& k, Task& t, Epoll& ep, Socket& s, std::uint8_t mask, Nanos* returned, int* n,
                         int* first, WaitQueue& wq) {
  co_await k.epoll_ctl_mod(t, ep, s, mask);
  std::vector<int> ev;
  *n = co_await k.epoll_wait(t, ep, 16, ev);
  *returned = k.now();
  *first = ev.empty() ? -1 : ev[0];
  co_await k.sleep_on(t, wq);
}

TEST(KernelTest, EpollCtlModToEpolloutQueuesAWritableSocketAtOnce) {
  // A socket added for EPOLLIN with no data is not ready. epoll_ctl(MOD, EPOLLOUT) runs 0..300
  // (syscall 100 + ep_modify 200); ep_modify() finds it writable (no send-buffer limit) and not
  // linked: list_add_tail() at 300. The epoll_wait() after it finds the event queued: entry 350 +
  // one event 40 = 390, so it returns the socket at 690 with 690 ns of system time. Back to
  // EPOLLIN instead (still no data): nothing is queued, the wait's entry runs 300..650 and the task
  // sleeps for good.
  for (const bool out : {true, false}) {
    SCOPED_TRACE(out ? "EPOLLOUT" : "EPOLLIN");
    Rig r{shape(2), KernelParams{}, epoll_ctl_costs()};
    r.k.add_nic(one_queue_nic(), "/nic");
    Epoll& ep = r.k.add_epoll();
    Socket& s = r.k.add_socket(0, 1);
    r.k.epoll_ctl_add(ep, s);
    EXPECT_FALSE(s.on_ready_list);
    WaitQueue wq;
    Nanos returned = -1;
    int n = -1, first = -1;
    Task& t = r.k.create_task("t", TaskKind::kUser, r.only(0));
    start(r.k, t, mod_then_wait(r.k, t, ep, s, out ? kEpollOut : kEpollIn, &returned, &n, &first, wq));
    r.run_to(us(50));
    r.settle();
    EXPECT_EQ(s.ep_events, out ? kEpollOut : kEpollIn);
    if (out) {
      EXPECT_EQ(returned, 690);
      EXPECT_EQ(n, 1);
      EXPECT_EQ(first, s.id);
      EXPECT_EQ(r.cpu(0).time[kSystem], 690);
    } else {
      EXPECT_EQ(returned, -1);
      EXPECT_EQ(r.cpu(0).time[kSystem], 650);
    }
    EXPECT_EQ(r.cpu(0).time[kUser], 0);
  }
}

/// Works `work` ns in user mode, then epoll_ctl(MOD, `mask`) of `s`, then sleeps on `wq`.
Proc<void> work_then_mod(Kernel& k, Task& t, Epoll& ep, Socket& s, std::uint8_t mask, Nanos work, WaitQueue& wq) {
  co_await k.exec(k.task_ctx(t, CpuClass::kUser), work);
  co_await k.epoll_ctl_mod(t, ep, s, mask);
  co_await k.sleep_on(t, wq);
}

TEST(KernelTest, EpollCtlModWakesATaskWaitingOnTheEpoll) {
  // ep_modify()'s "if (waitqueue_active(&ep->wq)) wake_up(&ep->wq)": a task on CPU 0 blocks in
  // epoll_wait() (entry 0..350, then asleep); a task on CPU 1 works 1000 ns and calls
  // epoll_ctl(MOD, EPOLLOUT), 1000..1300, which queues the writable socket and wakes the waiter
  // (IPI, handler and context switch cost 0): it resumes at 1300 and returns after the 40 ns
  // transfer, at 1340 (system time on CPU 0: 350 + 40; on CPU 1: 300).
  Rig r{shape(2), KernelParams{}, epoll_ctl_costs()};
  r.k.add_nic(one_queue_nic(), "/nic");
  Epoll& ep = r.k.add_epoll();
  Socket& s = r.k.add_socket(0, 1);
  r.k.epoll_ctl_add(ep, s);
  WaitQueue wq;
  Nanos returned = -1;
  int n = -1;
  Task& waiter = r.k.create_task("waiter", TaskKind::kUser, r.only(0));
  start(r.k, waiter, epoll_once(r.k, waiter, ep, nullptr, &returned, &n, wq), 0);
  Task& modder = r.k.create_task("modder", TaskKind::kUser, r.only(1));
  start(r.k, modder, work_then_mod(r.k, modder, ep, s, kEpollOut, 1000, wq), 1);
  r.run_to(us(50));
  r.settle();
  EXPECT_EQ(returned, 1340);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(r.cpu(0).time[kSystem], 390);
  EXPECT_EQ(r.cpu(1).time[kSystem], 300);
  EXPECT_EQ(r.cpu(1).time[kUser], 1000);
}

/// One epoll_wait() (transfer executed), then a sleep on `wq` until the test wakes it; then
/// epoll_ctl(MOD, EPOLLIN) of `s` and a second epoll_wait(). Records both returns.
Proc<void> out_then_in(Kernel& k, Task& t, Epoll& ep, Socket& s, Nanos* ret1, int* n1, Nanos* ret2, int* n2,
                       WaitQueue& wq) {
  std::vector<int> ev;
  *n1 = co_await k.epoll_wait(t, ep, 16, ev);
  *ret1 = k.now();
  co_await k.sleep_on(t, wq);
  co_await k.epoll_ctl_mod(t, ep, s, kEpollIn);
  *n2 = co_await k.epoll_wait(t, ep, 16, ev);
  *ret2 = k.now();
  co_await k.sleep_on(t, wq);
}

TEST(KernelTest, EpolloutOnlyItemIgnoresDataUntilModBackToEpollin) {
  // The socket is added for EPOLLOUT: writable, so ep_insert() queues it, and the first
  // epoll_wait() returns it at once (entry 350 + event 40: at 390) and re-queues it
  // (level-triggered). The task then sleeps on a test wait queue. A 1000-byte packet arrives at
  // 5 us (interrupt, NAPI and protocol costs 0): the data is queued on the socket, but
  // ep_poll_callback() leaves the EPOLLOUT-only item alone (pollflags & epi->event.events == 0):
  // still where ep_send_events() put it at 6 us, and no epoll wakeup. At 10 us the test wakes the
  // task (from CPU 1, costs 0); epoll_ctl(MOD, EPOLLIN) runs 10000..10300 and finds the item
  // linked, and the second epoll_wait()'s scan re-polls it under EPOLLIN: the data is there, so
  // it returns it at 10300 + 390 = 10690. System time 390 + 300 + 390 = 1080. Without the packet
  // the scan drops the item: the second wait's entry runs 10300..10650 and the task sleeps
  // (system time 390 + 300 + 350 = 1040).
  for (const bool data : {true, false}) {
    SCOPED_TRACE(data ? "data queued" : "no data");
    Rig r{shape(2), KernelParams{}, epoll_ctl_costs()};
    r.k.add_nic(one_queue_nic(), "/nic");
    At at(r.host);
    Epoll& ep = r.k.add_epoll();
    Socket& s = r.k.add_socket(0, 1);
    r.k.epoll_ctl_add(ep, s, kEpollOut);
    EXPECT_TRUE(s.on_ready_list);
    WaitQueue wq;
    Nanos ret1 = -1, ret2 = -1;
    int n1 = -1, n2 = -1;
    Task& t = r.k.create_task("t", TaskKind::kUser, r.only(0));
    start(r.k, t, out_then_in(r.k, t, ep, s, &ret1, &n1, &ret2, &n2, wq), 0);
    if (data) at(us(5), [&] { r.k.nic_rx(0, pkt(s.id)); });
    bool queued_at_6us = true, empty_at_6us = false;
    std::int64_t avail_at_6us = -1;
    at(us(6), [&] {
      queued_at_6us = s.on_ready_list;
      empty_at_6us = ep.ready.empty();
      avail_at_6us = s.rx_avail;
    });
    at(us(10), [&] { EXPECT_TRUE(r.k.wake_up(wq, 1)); });
    r.run_to(us(50));
    r.settle();
    EXPECT_EQ(ret1, 390);
    EXPECT_EQ(n1, 1);
    // ep_send_events() re-queued the level-triggered item as it reported it (still writable);
    // the packet's ep_poll_callback() found it linked and left it alone.
    EXPECT_TRUE(queued_at_6us);
    EXPECT_FALSE(empty_at_6us);
    EXPECT_EQ(avail_at_6us, data ? 1000 : 0);
    EXPECT_EQ(s.ep_events, kEpollIn);
    if (data) {
      EXPECT_EQ(ret2, 10690);
      EXPECT_EQ(n2, 1);
      EXPECT_EQ(r.cpu(0).time[kSystem], 1080);
    } else {
      EXPECT_EQ(ret2, -1);
      EXPECT_EQ(r.cpu(0).time[kSystem], 1040);
    }
  }
}

}  // namespace
}  // namespace napisim
