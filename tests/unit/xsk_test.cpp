// Unit tests of XDP and AF_XDP sockets (sim/kernel/xsk.cpp): verdicts in the driver's poll, an XSK
// receive with and without XDP_USE_NEED_WAKEUP when the fill ring runs dry, and busy polling an
// XSK with recvfrom(); hand-computed timelines on the shared rig (tests/unit/kernel_rig.hpp).
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/kernel_rig.hpp"

namespace napisim {
namespace {

constexpr int kBusyPoll = static_cast<int>(CpuClass::kBusyPoll);

/// napi_poll_ns 100, rx_pkt_ns 10, syscall_ns 50; everything else 0.
CostParams xsk_costs() {
  CostParams c = zero_costs();
  c.napi_poll_ns = 100;
  c.rx_pkt_ns = 10;
  c.syscall_ns = 50;
  return c;
}

/// Two CPUs, a one-queue NIC interrupting CPU 0 (an interrupt per packet unless a test sets
/// moderation), an XSK bound to its queue and one flow redirected into it.
struct XskRig {
  Rig r{shape(2), KernelParams{}, xsk_costs()};
  At at{r.host};
  TestPeer peer;
  Channel& ch;
  Socket& flow;
  Xsk& xs;
  XskRig(bool need_wakeup, std::int64_t rx_usecs = 0)
      : ch(add_nic(r, rx_usecs))
      , flow(r.k.add_socket(0, 7u))
      , xs(r.k.xsk_bind(ch, true, need_wakeup)) {
    r.k.set_peer(&peer);
    r.k.xsk_redirect(xs, flow.id);
  }
  static Channel& add_nic(Rig& r, std::int64_t rx_usecs) {
    NicParams p = one_queue_nic();
    p.rx_usecs = rx_usecs;
    p.rx_frames = 128;
    return *r.k.add_nic(p, "/nic").channels[0];
  }
  Nanos cpu_time(int cpu, int cls) {
    r.settle();
    return r.k.cpu(cpu).time[static_cast<std::size_t>(cls)];
  }
};

TEST(XskTest, XdpVerdictsDropPassAndRedirect) {
  // Flow A is redirected to the XSK, flow B takes the program's action: DROP (the peer learns of
  // the loss, no skb reaches B) or PASS (B's socket receives it). One interrupt per packet.
  for (const XdpAction action : {XdpAction::kDrop, XdpAction::kPass}) {
    XskRig g(true);
    Socket& b = g.r.k.add_socket(0, 9u);
    g.r.k.xdp_attach(g.ch, action);
    g.at(us(1), [&] { g.r.k.nic_rx(0, pkt(g.flow.id)); });
    g.at(us(2), [&] { g.r.k.nic_rx(0, pkt(b.id)); });
    g.r.run_to(us(10));
    EXPECT_EQ(g.xs.rx.size(), 1u);
    EXPECT_EQ(g.r.k.socket(g.xs.sock).rx_avail, 1);
    EXPECT_EQ(b.rx_avail, action == XdpAction::kPass ? 1000 : 0);
    EXPECT_EQ(g.peer.drops.size(), action == XdpAction::kDrop ? 1u : 0u);
    EXPECT_EQ(g.ch.xdp->redirects, 1u);
  }
}

TEST(XskTest, ReceiveOnAnEmptyFillRingWithAndWithoutNeedWakeup) {
  // The application has put no frame on the fill ring when a packet arrives at 10 us; it gives
  // one at 30 us. Without need_wakeup the driver cannot take the packet and keeps its NAPI
  // polling (mlx5e_post_rx_wqes() "busy"): CPU 0 polls from 10 to 30 us, the poll that starts at
  // 30 us takes the packet and delivers it at 30.11 us (napi_poll_ns + rx_pkt_ns). With
  // need_wakeup the first poll sets the fill ring's flag and stops (100 ns of softirq, no re-arm);
  // the application sees the flag at 30 us and kicks with recvfrom() (50 ns): the wakeup raises
  // the queue's interrupt at 30.05 us and its poll delivers the packet at 30.16 us.
  for (const bool need_wakeup : {false, true}) {
    XskRig g(need_wakeup);
    g.xs.fill = 0;
    Nanos delivered = -1;
    Task& app = g.r.k.create_task("app", TaskKind::kUser, g.r.only(1));
    auto body = [&]() -> Proc<void> {
      co_await g.r.k.exec(g.r.k.task_ctx(app, CpuClass::kUser), us(30));
      g.r.k.xsk_fill(g.xs, 1);
      if (g.xs.rx_need_wakeup) co_await g.r.k.xsk_recvfrom(app, g.xs);
      while (g.xs.visible() == 0)
        co_await g.r.k.spin_until(app, nullptr, nullptr, kNever, CpuClass::kUser, &g.r.k.socket(g.xs.sock));
      delivered = g.r.k.now();
      co_await g.r.k.sleep_on(app, g.r.k.socket(g.xs.sock).wq);
    };
    start(g.r.k, app, body(), 1);
    g.at(us(10), [&] { g.r.k.nic_rx(0, pkt(g.flow.id)); });
    g.r.run_to(us(60));
    EXPECT_EQ(delivered, need_wakeup ? 30160 : 30110) << need_wakeup;
    EXPECT_EQ(g.xs.rx_need_wakeup, false);
    const Nanos polling = g.cpu_time(0, kSoftirq) + g.cpu_time(0, kKsoftirqd);
    if (need_wakeup) {
      EXPECT_EQ(polling, 100 + 110);  // the stalled poll, then the kicked one
      EXPECT_EQ(g.xs.wakeups, 1u);
      EXPECT_EQ(g.ch.irqs, 2u);
    } else {
      EXPECT_GE(polling, us(20));  // the NAPI polled all along
      EXPECT_EQ(g.xs.wakeups, 0u);
    }
    EXPECT_GE(g.xs.fill_empty, 1u);
  }
}

TEST(XskTest, BusyPollingAnXskPollsItsNapiFromRecvfrom) {
  // 16 packets arrive at 5 us; interrupt moderation (rx-usecs 50) would raise the interrupt at
  // 55 us. The application calls recvfrom() at 10 us. With SO_BUSY_POLL and SO_PREFER_BUSY_POLL
  // it polls the NAPI from its own CPU 1 (sk_busy_loop(sk, 1)): 50 ns of syscall, then one poll of
  // SO_BUSY_POLL_BUDGET 64 takes the 16 (100 + 16 x 10 = 260 ns, in the RX ring at 10.31 us) and
  // busy_poll_stop()'s poll re-arms (100 ns); the busy poll made the wakeup unnecessary
  // (xsk_no_wakeup()): recvfrom() returns at 10.41 us with 360 ns of busy_poll on CPU 1 and no
  // interrupt. Without SO_BUSY_POLL the zero-copy recvfrom() kicks the driver (xsk_wakeup()):
  // the interrupt on CPU 0 at 10.05 us and its softirq poll fill the ring at 10.31 us, seen at
  // once by the application spinning on it. With SO_BUSY_POLL_BUDGET 8 the one iteration takes 8
  // (180 ns) and busy_poll_stop()'s poll the other 8 (180 ns); that poll used its whole budget, so
  // the NAPI goes to softirq, which runs on CPU 1 as the syscall re-enables BHs (100 ns, empty):
  // back at 10.51 us.
  struct Case {
    std::int64_t ll_usec, budget;
    Nanos got_at;
    std::uint64_t irqs;
    Nanos busy_poll_cpu1;
  };
  for (const Case c : {Case{20, 64, 10410, 0, 360}, Case{0, 64, 10310, 1, 0}, Case{20, 8, 10510, 0, 360}}) {
    XskRig g(true, 50);
    g.r.k.socket(g.xs.sock).ll_usec = c.ll_usec;
    g.r.k.socket(g.xs.sock).napi_id = g.ch.napi.id;  // an earlier packet marked it
    g.xs.busy_poll_budget = c.budget;
    g.xs.prefer_busy_poll = true;
    Nanos got = -1;
    Task& app = g.r.k.create_task("app", TaskKind::kUser, g.r.only(1));
    auto body = [&]() -> Proc<void> {
      co_await g.r.k.exec(g.r.k.task_ctx(app, CpuClass::kUser), us(10));
      co_await g.r.k.xsk_recvfrom(app, g.xs);
      while (g.xs.visible() < 16)
        co_await g.r.k.spin_until(app, nullptr, nullptr, kNever, CpuClass::kUser, &g.r.k.socket(g.xs.sock));
      got = g.r.k.now();
      co_await g.r.k.sleep_on(app, g.r.k.socket(g.xs.sock).wq);
    };
    start(g.r.k, app, body(), 1);
    g.at(us(5), [&] {
      for (int i = 0; i < 16; ++i)
        g.r.k.nic_rx(0, pkt(g.flow.id));
    });
    g.r.run_to(us(40));
    EXPECT_EQ(got, c.got_at) << c.ll_usec << " " << c.budget;
    EXPECT_EQ(g.ch.irqs, c.irqs) << c.ll_usec << " " << c.budget;
    EXPECT_EQ(g.cpu_time(1, kBusyPoll), c.busy_poll_cpu1) << c.ll_usec << " " << c.budget;
  }
}

}  // namespace
}  // namespace napisim
