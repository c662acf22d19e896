// Unit tests of listening sockets (sim/kernel/inet_csk.cpp): EPOLLEXCLUSIVE waking one waiter where
// plain epoll items wake every one, the accept backlog overflowing, blocked accept() callers woken
// in FIFO order, and futex_wake; hand-computed timelines on the shared rig (tests/unit/kernel_rig.hpp).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/kernel_rig.hpp"

namespace napisim {
namespace {

/// HLT idle (kernel.idle_polling false): a wakeup of an idle CPU is an IPI.
KernelParams hlt_idle() {
  KernelParams kp;
  kp.idle_polling = false;
  return kp;
}

/// syscall 100 ns, accept_ns 500, IPI delivery 1000 ns; everything else 0.
CostParams listen_costs() {
  CostParams c = zero_costs();
  c.syscall_ns = 100;
  c.accept_ns = 500;
  c.ipi_latency_ns = 1000;
  return c;
}

/// A CPUs host whose one-queue NIC interrupts CPU 0, a listener with `backlog`, and its
/// connections: sockets in SYN_RECV whose next packet completes the handshake.
struct ListenRig {
  Rig r;
  At at{r.host};
  TestPeer peer;
  Listener& l;
  ListenRig(int cpus, std::int64_t backlog) : r(shape(cpus), hlt_idle(), listen_costs()), l(r.k.listen(backlog)) {
    r.k.add_nic(one_queue_nic(), "/nic");
    peer.host = &r.host;
    r.k.set_peer(&peer);
  }
  Socket& conn(TcpState st = TcpState::kSynRecv) {
    Socket& s = r.k.add_socket(0, static_cast<std::uint32_t>(r.k.napis().size()));
    r.k.listen_child(l, s);
    s.tcp_state = st;
    return s;
  }
  /// The client's handshake-completing ACK carrying 100 bytes of request.
  void complete(Socket& s) {
    RxEntry e = pkt(s.id);
    e.bytes = 100;
    r.k.nic_rx(0, e);
  }
};

/// An nginx-like worker: epoll_wait(); for each event, a non-blocking accept(). Records when
/// epoll_wait() returned with events and what each accept() gave.
struct Acceptor {
  std::vector<Nanos> returned;
  std::vector<int> accepted;  // child socket id or -1 (EAGAIN)
};
Proc<void> epoll_acceptor(Kernel& k, Task& t, Epoll& ep, Listener& l, Acceptor& a) {
  std::vector<int> ev;
  for (;;) {
    const int n = co_await k.epoll_wait(t, ep, 16, ev);
    a.returned.push_back(k.now());
    for (int i = 0; i < n; ++i) {
      a.accepted.push_back(co_await k.sys_accept(t, l, nullptr));
    }
  }
}

TEST(ListenTest, EpollExclusiveWakesOneWaiterWherePlainItemsWakeAll) {
  // Three workers on CPUs 1-3, each with its own epoll holding the listen fd, all asleep in
  // epoll_wait(). A connection completes at t = 10 us (its ACK's interrupt and poll on CPU 0 cost
  // nothing). Plain items: ep_poll_callback() links the listen fd on all three ready lists and
  // wakes all three; each wakeup's IPI arrives at 11 us, so all three return with the event at
  // 11 us and call accept(): its entry (100 ns) ends at 11.1 us for all three; the first one takes
  // the child and pays accept_ns (500), the other two get EAGAIN: the thundering herd.
  // EPOLLEXCLUSIVE: the first item with a waiter (the first added: worker 1's) reports the wakeup
  // and the walk stops: one worker returns at 11 us, the others sleep on.
  for (const bool exclusive : {false, true}) {
    ListenRig g(4, 16);
    Socket& child = g.conn();
    Acceptor a[3];
    Task* tasks[3];
    for (int i = 0; i < 3; ++i) {
      Epoll& ep = g.r.k.add_epoll();
      g.r.k.listen_epoll_add(g.l, ep, exclusive);
      Task& t = g.r.k.create_task("w" + std::to_string(i), TaskKind::kUser, g.r.only(i + 1));
      tasks[i] = &start(g.r.k, t, epoll_acceptor(g.r.k, t, ep, g.l, a[i]), i + 1);
    }
    g.at(us(10), [&] { g.complete(child); });
    g.r.run_to(us(50));
    int returned = 0, got = 0, eagain = 0;
    for (int i = 0; i < 3; ++i) {
      for (Nanos t : a[i].returned) {
        EXPECT_EQ(t, us(11));
        ++returned;
      }
      for (int c : a[i].accepted)
        (c == child.id ? got : eagain) += 1;
      EXPECT_EQ(tasks[i]->wakeups, (exclusive && i > 0) ? 0u : 1u) << "worker " << i;
    }
    EXPECT_EQ(returned, exclusive ? 1 : 3);
    EXPECT_EQ(got, 1);
    EXPECT_EQ(eagain, exclusive ? 0 : 2);
    EXPECT_EQ(g.l.wakeups, exclusive ? 1u : 3u);
    if (exclusive) {
      EXPECT_EQ(a[0].accepted, std::vector<int>{child.id});  // the first item added
    }
    EXPECT_EQ(g.l.accepted, 1u);
    EXPECT_TRUE(g.l.accept_queue.empty());
  }
}

TEST(ListenTest, PlainWaiterWokenAfterTheChildIsTakenSleepsAgain) {
  // Two plain items. Worker A (CPU 1) waits in epoll_wait(); worker B (CPU 2) is busy in user mode
  // until 30 us, then calls epoll_wait(). The connection completes at 10 us: both items are
  // linked; A wakes (IPI, 11 us), returns and accepts (11.1 us, + 500 = 11.6 us). The accept
  // queue is then empty, but B's item stays on B's ready list (as in the kernel) until B's
  // epoll_wait() at 30 us re-polls it, finds nothing to accept and drops it: B sleeps and never
  // returns.
  ListenRig g(3, 16);
  Socket& child = g.conn();
  Acceptor a, b;
  Epoll& ea = g.r.k.add_epoll();
  Epoll& eb = g.r.k.add_epoll();
  g.r.k.listen_epoll_add(g.l, ea, false);
  g.r.k.listen_epoll_add(g.l, eb, false);
  Task& ta = g.r.k.create_task("a", TaskKind::kUser, g.r.only(1));
  start(g.r.k, ta, epoll_acceptor(g.r.k, ta, ea, g.l, a), 1);
  Task& tb = g.r.k.create_task("b", TaskKind::kUser, g.r.only(2));
  auto busy_then_accept = [](Kernel& k, Task& t, Epoll& ep, Listener& l, Acceptor& acc) -> Proc<void> {
    co_await k.exec(k.task_ctx(t, CpuClass::kUser), us(30));
    co_await epoll_acceptor(k, t, ep, l, acc);
  };
  start(g.r.k, tb, busy_then_accept(g.r.k, tb, eb, g.l, b), 2);
  g.at(us(10), [&] { g.complete(child); });
  std::size_t linked_at_20us = 0;
  g.at(us(20), [&] { linked_at_20us = eb.ready.size(); });
  g.r.run_to(us(60));
  EXPECT_EQ(linked_at_20us, 1U);  // stale, still linked
  EXPECT_EQ(a.returned, std::vector<Nanos>{us(11)});
  EXPECT_EQ(a.accepted, std::vector<int>{child.id});
  EXPECT_TRUE(b.returned.empty());
  EXPECT_TRUE(eb.ready.empty());
  EXPECT_EQ(tb.state, TaskState::kSleeping);
}

TEST(ListenTest, AcceptBacklogOverflowDropsSynsAndCompletingAcks) {
  // listen(fd, 2): sk_acceptq_is_full() is sk_ack_backlog > 2, so three connections fit. Five
  // handshakes complete at 10, 11, ..., 14 us with nobody accepting: the first three join the
  // accept queue, the 4th and 5th ACKs are dropped (the client retransmits) at their own times.
  // A SYN at 20 us is dropped too (tcp_conn_request(): no SYN-ACK). After one accept() a SYN at
  // 30 us gets its SYN-ACK and a request sock (SYN_RECV).
  ListenRig g(1, 2);
  EXPECT_EQ(g.l.max_ack_backlog, 2);
  std::vector<Socket*> c;
  for (int i = 0; i < 5; ++i)
    c.push_back(&g.conn());
  Socket& syn1 = g.conn(TcpState::kClose);
  Socket& syn2 = g.conn(TcpState::kClose);
  for (int i = 0; i < 5; ++i)
    g.at(us(10 + i), [&g, s = c[static_cast<std::size_t>(i)]] { g.complete(*s); });
  int tx_before_syn = -1;
  g.at(us(20), [&] {
    tx_before_syn = g.peer.transmits;
    g.r.k.nic_rx(0, pkt(syn1.id));
  });
  g.at(us(25), [&] { EXPECT_EQ(g.r.k.accept_take(g.l), c[0]->id); });
  g.at(us(30), [&] { g.r.k.nic_rx(0, pkt(syn2.id)); });
  g.r.run_to(us(40));
  ASSERT_EQ(g.peer.drops.size(), 3u);
  EXPECT_EQ(g.peer.drops[0].sock, c[3]->id);
  EXPECT_EQ(g.peer.drops[1].sock, c[4]->id);
  EXPECT_EQ(g.peer.drops[2].sock, syn1.id);
  EXPECT_EQ(g.peer.drop_times, (std::vector<Nanos>{us(13), us(14), us(20)}));
  EXPECT_EQ(g.l.overflows, 3u);
  EXPECT_EQ(g.l.syns, 2u);
  EXPECT_EQ(g.l.accept_queue.size(), 2u);
  EXPECT_EQ(c[1]->rx_avail, 100);                  // the request the completing ACK carried waits on the child
  EXPECT_EQ(c[3]->tcp_state, TcpState::kSynRecv);  // the request sock stays for the retransmission
  EXPECT_EQ(syn1.tcp_state, TcpState::kClose);
  EXPECT_EQ(syn2.tcp_state, TcpState::kSynRecv);
  EXPECT_EQ(g.peer.transmits, tx_before_syn + 1);  // syn2's SYN-ACK only
  // listen()'s backlog is capped at somaxconn (4096 since v5.4).
  EXPECT_EQ(g.r.k.listen(100000).max_ack_backlog, 4096);
}

TEST(ListenTest, BlockedAcceptCallersAreWokenInTheOrderTheyWaited) {
  // A blocks in accept() at 0 (CPU 1), B at 1 us (CPU 2, after 1 us of user work): exclusive
  // waiters at the tail, woken one per connection from the head. Connections complete at 10, 20
  // and 30 us: A gets the first (woken by IPI at 11 us, accept_ns to 11.5 us), B the second
  // (21.5 us), A, queued again behind B, the third (31.5 us).
  ListenRig g(3, 16);
  Socket* c[3] = {&g.conn(), &g.conn(), &g.conn()};
  std::vector<std::pair<char, Nanos>> got;
  WaitQueue wa, wb;
  auto acceptor = [&](Task& t, WaitQueue& wq, char name, Nanos first) -> Proc<void> {
    co_await g.r.k.exec(g.r.k.task_ctx(t, CpuClass::kUser), first);
    for (;;) {
      const int child = co_await g.r.k.sys_accept(t, g.l, &wq);
      EXPECT_GE(child, 0);
      got.emplace_back(name, g.r.k.now());
    }
  };
  Task& ta = g.r.k.create_task("a", TaskKind::kUser, g.r.only(1));
  start(g.r.k, ta, acceptor(ta, wa, 'a', 0), 1);
  Task& tb = g.r.k.create_task("b", TaskKind::kUser, g.r.only(2));
  start(g.r.k, tb, acceptor(tb, wb, 'b', us(1)), 2);
  for (int i = 0; i < 3; ++i)
    g.at(us(10 + 10 * i), [&g, s = c[i]] { g.complete(*s); });
  g.r.run_to(us(50));
  const std::vector<std::pair<char, Nanos>> want = {{'a', 11500}, {'b', 21500}, {'a', 31500}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(g.l.wakeups, 3u);
}

TEST(ListenTest, FutexWakeWakesWaitersInOrder) {
  // Three tasks queue on one futex at 0, 1 and 2 us; futex_wake(2) at 10 us wakes the first two
  // (IPIs: they run at 11 us), futex_wake(5) at 20 us the last one.
  Rig r(shape(4), hlt_idle(), listen_costs());
  At at{r.host};
  FutexQueue fq;
  WaitQueue wq[3];
  std::vector<std::pair<int, Nanos>> woke;
  auto waiter = [&](Task& t, int i) -> Proc<void> {
    co_await r.k.exec(r.k.task_ctx(t, CpuClass::kUser), us(i));
    fq.waiters.push_back(&wq[i]);
    co_await r.k.sleep_on(t, wq[i]);
    woke.emplace_back(i, r.k.now());
    co_await r.k.sleep_on(t, wq[i]);
  };
  for (int i = 0; i < 3; ++i) {
    Task& t = r.k.create_task("f" + std::to_string(i), TaskKind::kUser, r.only(i + 1));
    start(r.k, t, waiter(t, i), i + 1);
  }
  int first = -1, second = -1;
  at(us(10), [&] { first = r.k.futex_wake(fq, 2, 0); });
  at(us(20), [&] { second = r.k.futex_wake(fq, 5, 0); });
  r.run_to(us(30));
  EXPECT_EQ(first, 2);
  EXPECT_EQ(second, 1);
  const std::vector<std::pair<int, Nanos>> want = {{0, us(11)}, {1, us(11)}, {2, us(21)}};
  EXPECT_EQ(woke, want);
}

}  // namespace
}  // namespace napisim
