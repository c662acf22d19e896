// TCP between two simulated Linux hosts (sim/kernel/tcp.hpp, Kernel::tcp_connect), by hand-computed
// timelines: slow start doubles the window each round trip, an idle connection restarts from a
// smaller window, TSQ holds a flow to two skbs in the host until the NAPI poll reaps a TX
// completion, one lost train is repaired by fast retransmit about a round trip after the next one
// arrives, a lost tail by the loss probe, the RTO fires only when every ACK is lost, the send
// buffer (tcp_sndbuf_expand) holds a non-blocking sender back until ACKs free space and grow it, and
// receive buffer autotuning (tcp_rcv_space_adjust) grows the window a new connection offers.
//
// The rig: host A sends to host B over a link of one-way latency 50 us at 100 Gb/s (0.08 ns a
// byte: a full 1448-byte segment is 1538 bytes on the wire, 123 ns). Every CPU cost is zero, each
// host has one CPU and a one-queue NIC interrupting at every completion (rx-usecs 0, tx-usecs 0),
// HZ 1000. B's reader takes every byte as it arrives (a blocking recv() loop). The handshake's RTT
// sample is 100 us, so srtt starts at 100 us and the RTO at srtt + max(rttvar, TCP_RTO_MIN) =
// 200.1 ms, 201 jiffies. Unless a test says otherwise, both receive buffers start grown to
// tcp_rmem[2] (a window of 3 MB from the first segment), so that the sender's mechanisms alone
// shape the timeline.
#include <functional>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "sim/kernel/kernel.hpp"
#include "sim/workloads/client_uplink.hpp"
#include "tests/unit/zero_fields.hpp"

namespace napisim {
namespace {

constexpr Nanos kLatency = 50000;
constexpr std::int64_t kMss = 1448;

struct TcpRig {
  HostModel host;
  Topology topo;
  Kernel a, b;
  Socket* sa = nullptr;
  Socket* sb = nullptr;
  /// Drops a train on its way: (from A, train) -> true to drop it.
  std::function<bool(bool, const WireTrain&)> drop;
  struct Sent {
    Nanos at, done;  // handed to the NIC, left the wire
    WireTrain tr;
  };
  std::vector<Sent> sent_by_a, sent_by_b;

  class Wire final : public WirePeer {
   public:
    Wire(TcpRig& r, bool from_a) : r_(r), from_a_(from_a) {}
    void on_transmit(const WireTrain& tr, Nanos wire_done) override {
      (from_a_ ? r_.sent_by_a : r_.sent_by_b).push_back({r_.host.now(), wire_done, tr});
      if (r_.drop && r_.drop(from_a_, tr)) return;
      deliver_to_nic(from_a_ ? r_.b : r_.a, 0, tr.for_sock(0), wire_done + kLatency);
    }
    void on_rx_drop(int, std::uint32_t, std::uint32_t) override {}

   private:
    TcpRig& r_;
    bool from_a_;
  };
  Wire wa{*this, true}, wb{*this, false};

  static TopologyParams one_cpu() {
    TopologyParams tp;
    tp.numa_nodes = tp.llcs_per_node = tp.cores_per_llc = tp.threads_per_core = 1;
    return tp;
  }
  static NicParams nic(double gbps) {
    NicParams p;
    p.speed_gbps = gbps;
    p.queues = 1;
    p.rx_usecs = 0;
    p.rx_frames = 1;
    p.tx_usecs = 0;
    p.tx_frames = 1;
    p.irq_affinity = "0";
    return p;
  }
  explicit TcpRig(const KernelParams& kp, double gbps = 100, bool grown = true)
      : topo(one_cpu())
      , a(host, topo, kp, testing::all_zero<CostParams>())
      , b(host, topo, kp, testing::all_zero<CostParams>()) {
    a.add_nic(nic(gbps), "/nic");
    b.add_nic(nic(gbps), "/nic");
    sa = &a.add_socket(0, 1);
    sb = &b.add_socket(0, 2);
    const std::int64_t wnd = grown ? kp.tcp.rmem_max / 2 : b.tcp_initial_window();
    a.tcp_connect(*sa, 2 * kLatency, wnd);
    b.tcp_connect(*sb, 2 * kLatency, wnd);
    if (grown) {
      for (Socket* s : {sa, sb}) {
        s->tcp->rcvbuf = kp.tcp.rmem_max;
        s->tcp->window_clamp = s->tcp->rcv_ssthresh = s->rcv_wnd = wnd;
      }
    }
    a.set_peer(&wa);
    b.set_peer(&wb);
    Task& t = b.create_task("reader", TaskKind::kUser, CpuMask::all(1));
    t.body = reader(t);
    b.start_task(t, 0);
  }
  Proc<void> reader(Task& t) {
    for (;;)
      co_await b.sys_recv_wait(t, *sb, 1 << 30);
  }
  TcpSock& ta() { return *sa->tcp; }
  /// Drops the first train from A that starts at byte `seq` (once).
  void drop_once(std::int64_t seq) {
    auto dropped = std::make_shared<bool>(false);
    drop = [seq, dropped](bool from_a, const WireTrain& tr) {
      if (!from_a || tr.ack_only || tr.th.seq != seq || *dropped) return false;
      return *dropped = true;
    };
  }
  /// When B's receive queue first reached byte `seq` (checked every microsecond).
  Nanos when_received(std::int64_t seq, Nanos until) {
    Nanos t = 0;
    while (t < until && sb->rcv_nxt < seq) {
      t += us(1);
      run_to(t);
    }
    return sb->rcv_nxt >= seq ? t : kNever;
  }
  /// A's application sends `bytes` at time `at`.
  void send_at(Nanos at, std::int64_t bytes) {
    actions.push_back([this, bytes] { a.tcp_sendmsg(Ctx{0, nullptr, 0, CpuClass::kSystem}, *sa, bytes); });
    host.schedule(at, Prio::kControl, &runner, 0, actions.size() - 1);
  }
  void at(Nanos t, std::function<void()> f) {
    actions.push_back(std::move(f));
    host.schedule(t, Prio::kControl, &runner, 0, actions.size() - 1);
  }
  struct Runner final : EventSink {
    explicit Runner(TcpRig* rig) : r(rig) {}
    TcpRig* r;
    void on_event(std::uint32_t, std::uint64_t arg) override { r->actions[arg](); }
  } runner{this};
  std::vector<std::function<void()>> actions;
  void run_to(Nanos t) { host.advance_to(t); }
};

KernelParams no_hystart() {
  KernelParams kp;
  kp.tcp.hystart = false;
  return kp;
}

TEST(TcpTest, HandshakeSetsSrttAndRto) {
  TcpRig r(no_hystart());
  EXPECT_EQ(r.ta().srtt_us >> 3, 100);
  // rttvar = max(2 * 100 us, TCP_RTO_MIN): RTO = 100 us + 200 ms, rounded up to 201 jiffies.
  EXPECT_EQ(r.ta().rttvar_us, 200000);
  EXPECT_EQ(r.ta().rto_j, 201);
  EXPECT_EQ(r.ta().cwnd, 10u);
}

TEST(TcpTest, SlowStartDoublesTheWindowEachRoundTrip) {
  // Every segment a round sends is ACKed one round trip later, each ACK adding what it acks to
  // cwnd (tcp_slow_start): 10, 20, 40, 80, 160 segments at the middle of rounds 0..4 (a round's
  // serialization, at most 160 x 123 ns = 20 us, ends well before it).
  TcpRig r(no_hystart());
  r.send_at(0, 4 << 20);
  std::vector<std::uint32_t> cwnd;
  for (int k = 0; k < 5; ++k)
    r.at(us(50) + k * us(100) + us(10), [&] { cwnd.push_back(r.ta().cwnd); });
  r.run_to(us(600));
  EXPECT_EQ(cwnd, (std::vector<std::uint32_t>{10, 20, 40, 80, 160}));
  // The first round: tcp_cwnd_test() hands out at most half the window per skb: two 5-segment
  // trains, back to back from t = 0.
  ASSERT_GE(r.sent_by_a.size(), 2u);
  EXPECT_EQ(r.sent_by_a[0].tr.segs, 5u);
  EXPECT_EQ(r.sent_by_a[1].tr.segs, 5u);
  EXPECT_EQ(r.sent_by_a[0].done, 5 * (kMss + 90) * 8 / 100);
}

/// Index of the first train of `sent` starting at byte `seq` after `from`.
std::size_t find_seq(const std::vector<TcpRig::Sent>& sent, std::int64_t seq, std::size_t from = 0) {
  for (std::size_t i = from; i < sent.size(); ++i)
    if (!sent[i].tr.ack_only && sent[i].tr.th.seq == seq) return i;
  return sent.size();
}

/// When B first sent an ACK of byte `ack` (kNever if it did not).
Nanos acked_at(const TcpRig& r, std::int64_t ack) {
  for (const auto& x : r.sent_by_b)
    if (x.tr.th.ack >= ack) return x.at;
  return kNever;
}

TEST(TcpTest, RestartAfterIdleHalvesTheWindowPerIdleRto) {
  // tcp_cwnd_restart() (RFC 2861): a connection idle for more than an RTO (201 jiffies) restarts
  // from min(cwnd, IW10) after halving cwnd once per RTO of idle time beyond the first: idle
  // 300 ms halves it once (110 -> 55), 700 ms three times (-> 13). Without
  // tcp_slow_start_after_idle it keeps its cwnd.
  for (const bool ssai : {true, false}) {
    KernelParams kp = no_hystart();
    kp.tcp.slow_start_after_idle = ssai;
    for (const Nanos idle : {ms(300), ms(700)}) {
      TcpRig r(kp);
      r.send_at(0, 100 * kMss);  // rounds of 10, 20, 40, 30 segments: all sent within 1 ms
      std::uint32_t before = 0, after = 0;
      std::int64_t lsndtime = -1;
      r.at(idle - us(1), [&] {
        before = r.ta().cwnd;
        lsndtime = r.ta().lsndtime;
        EXPECT_EQ(r.ta().packets_out, 0u);
      });
      r.send_at(idle, kMss);
      r.at(idle, [&] { after = r.ta().cwnd; });
      r.run_to(idle + ms(1));
      EXPECT_EQ(lsndtime, 0);  // the last data left in jiffy 0
      // 10 + 100: every segment acked in slow start adds one, the last round's 30 too (cwnd 80 <
      // 2 x max_packets_out, tcp_is_cwnd_limited()).
      EXPECT_EQ(before, 110u);
      const std::uint32_t halvings = idle == ms(300) ? 1 : 3;
      EXPECT_EQ(after, ssai ? before >> halvings : before) << "idle " << idle;
    }
  }
}

TEST(TcpTest, TsqHoldsTheFlowToTwoSkbsUntilTheirCompletionIsReaped) {
  // A 1 Gb/s NIC, a window that never limits (init_cwnd 1000) and tcp_limit_output_bytes 100000:
  // TSQ lets a flow have at most 100000 bytes of skbs (truesize: payload + 896) in the qdisc and
  // NIC. 45-segment skbs (65160 bytes, tcp_tso_autosize()'s 64 KB) take 553.68 us each on the wire
  // (65160 + 45 x 90 bytes at 1 ns per 8 bits). The first two go at t = 0 (66056 bytes after the
  // first: below the limit); the third is throttled (TSQ_THROTTLED) until the first one's TX
  // completion is reaped: its interrupt (tx-usecs 0) at 553.68 us starts the NAPI poll, whose
  // tcp_wfree() queues the socket on the TSQ tasklet, which sends it at once (every cost zero).
  // From then on each skb leaves the socket as the one before the previous completes.
  KernelParams kp;
  kp.tcp.init_cwnd = 1000;
  kp.tcp.limit_output_bytes = 100000;
  TcpRig r(kp, 1.0);
  r.send_at(0, 8 * 45 * kMss);
  std::int64_t max_wmem = 0;
  for (Nanos t = us(1); t < ms(5); t += us(1))
    r.at(t, [&] { max_wmem = std::max(max_wmem, r.ta().wmem_alloc); });
  r.run_to(ms(5));
  constexpr Nanos kSkbWire = (45 * kMss + 45 * 90) * 8;  // 553680 ns at 1 Gb/s
  std::vector<Nanos> handed;
  for (const auto& x : r.sent_by_a)
    if (!x.tr.ack_only) handed.push_back(x.at);
  ASSERT_EQ(handed.size(), 8u);
  EXPECT_EQ(handed,
            (std::vector<Nanos>{0, 0, kSkbWire, 2 * kSkbWire, 3 * kSkbWire, 4 * kSkbWire, 5 * kSkbWire, 6 * kSkbWire}));
  EXPECT_EQ(max_wmem, 2 * (45 * kMss + 896));
  EXPECT_EQ(r.a.tcp_stats().tsq_throttled, 6u);
}

TEST(TcpTest, OneLossIsRepairedByFastRetransmitAboutARoundTripLater) {
  // 60 segments; round 2's first train (7 segments from byte 14480, sent at 101.244 us) is lost.
  // The next train (10 segments, on the wire until 103.335 us) reaches B at 154.565 us (+50 us,
  // + its 1230 ns through B's ingress port): out of order, so B SACKs it at once. The SACK reaches
  // A at 204.579 us (7 ns on each port, 50 us of link): 10 SACKed segments >= tcp_reordering make
  // RACK's reordering window 0, so the lost train (sent before the SACKed one) is marked lost at
  // once, recovery starts (ssthresh = 20 x 717/1024 = 14) and PRR lets the 7 segments go at once.
  // They fill the hole at B at 256.301 us: no loss probe, no RTO (200 ms).
  TcpRig r(no_hystart());
  r.send_at(0, 60 * kMss);
  r.drop_once(10 * kMss);
  r.run_to(ms(300));
  const std::size_t orig = find_seq(r.sent_by_a, 10 * kMss);
  ASSERT_LT(orig, r.sent_by_a.size());
  EXPECT_EQ(r.sent_by_a[orig].at, 101244);
  EXPECT_EQ(r.sent_by_a[orig].tr.segs, 7u);
  const std::size_t retx = find_seq(r.sent_by_a, 10 * kMss, orig + 1);
  ASSERT_LT(retx, r.sent_by_a.size());
  EXPECT_EQ(r.sent_by_a[retx].at, 204579);
  EXPECT_EQ(r.sent_by_a[retx].tr.segs, 7u);
  EXPECT_EQ(acked_at(r, 17 * kMss), 256301);
  EXPECT_EQ(r.sb->rcv_nxt, 60 * kMss);
  const TcpStats& st = r.a.tcp_stats();
  EXPECT_EQ(st.retrans_segs, 7u);
  EXPECT_EQ(st.fast_retrans, 7u);
  EXPECT_EQ(st.recoveries, 1u);
  EXPECT_EQ(st.loss_probes, 0u);
  EXPECT_EQ(st.timeouts, 0u);
  EXPECT_EQ(r.ta().ssthresh, 14u);
}

TEST(TcpTest, ALostTailIsRepairedByTheLossProbe) {
  // 15 segments: two 5-segment trains, then (after the first ACK) the last 5 from byte 14480,
  // which are lost: no later data, so no SACK. The second ACK (at A at 101.245 us, jiffy 0) arms
  // the loss probe: 2 srtt (200 us: 1 jiffy) + TCP_TIMEOUT_MIN (2 jiffies), expiring at jiffy 3,
  // which the timer wheel runs at the tick of jiffy 4. The probe at 4 ms retransmits the last
  // segment (byte 20272); B SACKs it; RACK then marks the 4 segments before it lost (sent 4 ms
  // before), and PRR sends them as ACKs come back (1, then 2, then 1 segment, a round trip apart):
  // B has everything at 4.351 ms. The RTO (200 ms) never fires.
  TcpRig r(no_hystart());
  r.send_at(0, 15 * kMss);
  r.drop_once(10 * kMss);
  r.run_to(ms(300));
  const std::size_t probe = find_seq(r.sent_by_a, 14 * kMss);
  ASSERT_LT(probe, r.sent_by_a.size());
  EXPECT_EQ(r.sent_by_a[probe].at, ms(4));
  EXPECT_EQ(r.sent_by_a[probe].tr.segs, 1u);
  EXPECT_EQ(acked_at(r, 15 * kMss), 4351272);
  const TcpStats& st = r.a.tcp_stats();
  EXPECT_EQ(st.loss_probes, 1u);
  EXPECT_EQ(st.timeouts, 0u);
  EXPECT_EQ(st.retrans_segs, 5u);
}

TEST(TcpTest, TheRtoFiresOnlyWhenEveryAckIsLost) {
  // Every ACK from B is lost until 207 ms. A sends its initial window (10 segments) and nothing
  // comes back: the loss probe at 4 ms (as above) sends one new segment; its ACK is lost too.
  // The probe rearms the RTO, 201 jiffies from jiffy 4: expiring at 205, in the wheel's second
  // level (8-jiffy buckets), so it runs at 208 ms: tcp_enter_loss() marks everything lost, cwnd
  // = 1, and the head is retransmitted. B, which had all 11 segments, D-SACKs it; that ACK gets
  // through, and the last 4 segments follow.
  TcpRig r(no_hystart());
  r.send_at(0, 15 * kMss);
  r.drop = [&r](bool from_a, const WireTrain&) { return !from_a && r.host.now() < ms(207); };
  r.run_to(ms(300));
  const std::size_t probe = find_seq(r.sent_by_a, 10 * kMss);
  ASSERT_LT(probe, r.sent_by_a.size());
  EXPECT_EQ(r.sent_by_a[probe].at, ms(4));
  const std::size_t rto = find_seq(r.sent_by_a, 0, 1);
  ASSERT_LT(rto, r.sent_by_a.size());
  EXPECT_EQ(r.sent_by_a[rto].at, ms(208));
  EXPECT_EQ(r.sent_by_a[rto].tr.segs, 1u);
  EXPECT_EQ(r.sb->rcv_nxt, 15 * kMss);
  EXPECT_EQ(r.a.tcp_stats().timeouts, 1u);
  EXPECT_EQ(r.a.tcp_stats().loss_probes, 1u);

  // Every other ACK lost instead: the cumulative ones that get through keep the flow going, and
  // neither timer fires.
  TcpRig r2(no_hystart());
  r2.send_at(0, 60 * kMss);
  auto n = std::make_shared<int>(0);
  r2.drop = [n](bool from_a, const WireTrain&) { return !from_a && (*n)++ % 2 == 0; };
  r2.run_to(ms(300));
  EXPECT_EQ(r2.sb->rcv_nxt, 60 * kMss);
  EXPECT_EQ(r2.a.tcp_stats().timeouts, 0u);
  EXPECT_EQ(r2.a.tcp_stats().loss_probes, 0u);
  EXPECT_EQ(r2.a.tcp_stats().retrans_segs, 0u);
}

TEST(TcpTest, AutotuningGrowsTheReceiveBufferToTwiceWhatTheReaderCopiedPerRtt) {
  // tcp_rcv_space_adjust() with a receiver RTT of 1 ms (rcv_rtt_est 8000) and the first measure's
  // 10 segments (14480 bytes) from t = 0, B's reader having copied:
  //   - 100000 bytes by 1 ms: rcvwin = 2 x 100000 + 16 x 1448 = 223168, plus twice its growth
  //     223168 x (100000 - 14480) / 14480 = 1318047: 2859262; sk_rcvbuf twice that, 5718524, and
  //     the window clamp its half;
  //   - 300000 more by 1.5 ms: less than an RTT since the last measure, nothing happens;
  //   - by 2 ms: 623168 + 2 x 1246336 = 3115840, so 6231680 (below tcp_rmem[2], 6291456);
  //   - 50000 more by 3 ms: less than the 300000 of the last RTT: no growth, and that stays the
  //     measure to beat.
  TcpRig r(KernelParams{}, 100, false);
  Kernel& b = r.b;
  Socket& s = *r.sb;
  TcpSock& tp = *s.tcp;
  EXPECT_EQ(tp.rcvbuf, 131072);              // tcp_rmem[1]
  EXPECT_EQ(tp.window_clamp, 65536 - kMss);  // its half, less the one segment reserved
  EXPECT_EQ(s.rcv_wnd, 45 * kMss);           // the SYN's window: rounded down to the MSS, at most 65535
  EXPECT_EQ(tp.rcv_ssthresh, 65536 - kMss);  // at most the clamp
  EXPECT_EQ(tp.rcvq_space, 10 * kMss);
  struct Seen {
    std::int64_t rcvbuf, clamp, space;
  };
  std::vector<Seen> seen;
  const auto copy = [&](std::int64_t bytes) {
    s.rcv_nxt += bytes;  // arrived and read at once: copied_seq = rcv_nxt
    b.tcp_rcv_space_adjust(s, tp);
    seen.push_back({tp.rcvbuf, tp.window_clamp, tp.rcvq_space});
  };
  r.at(0, [&] { tp.rcv_rtt_us = 8 * 1000; });
  r.at(ms(1), [&] { copy(100000); });
  r.at(us(1500), [&] { copy(300000); });
  r.at(ms(2), [&] { copy(0); });
  r.at(ms(3), [&] { copy(50000); });
  r.run_to(ms(3));
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].rcvbuf, 5718524);
  EXPECT_EQ(seen[0].clamp, 2859262);
  EXPECT_EQ(seen[0].space, 100000);
  EXPECT_EQ(seen[1].rcvbuf, 5718524);
  EXPECT_EQ(seen[1].space, 100000);
  EXPECT_EQ(seen[2].rcvbuf, 6231680);
  EXPECT_EQ(seen[2].clamp, 3115840);
  EXPECT_EQ(seen[2].space, 300000);
  EXPECT_EQ(seen[3].rcvbuf, 6231680);
  EXPECT_EQ(seen[3].space, 300000);
  // tcp_moderate_rcvbuf 0: the buffer stays at tcp_rmem[1].
  KernelParams fixed;
  fixed.tcp.moderate_rcvbuf = false;
  TcpRig f(fixed, 100, false);
  f.at(0, [&] { f.sb->tcp->rcv_rtt_us = 8 * 1000; });
  f.at(ms(1), [&] {
    f.sb->rcv_nxt += 100000;
    f.b.tcp_rcv_space_adjust(*f.sb, *f.sb->tcp);
  });
  f.run_to(ms(1));
  EXPECT_EQ(f.sb->tcp->rcvbuf, 131072);
  EXPECT_EQ(f.sb->tcp->rcvq_space, 100000);
}

TEST(TcpTest, ANewConnectionsWindowStartsAt64KAndFollowsTheReceiveBuffer) {
  // A sends 4 MB on a new connection whose SYN offered 65160 bytes. B's first ACK, sent before its
  // reader has taken the first 5-segment train, would offer what the window clamp (64088: half of
  // tcp_rmem[1] less a segment) leaves free, 56848, but a window never shrinks: 65160 - 7240 =
  // 57920. B never offers more than its window clamp, and A never has more in flight than B last
  // offered. B's RTT
  // estimate comes from the window-based measure (a window's worth of data) and the timestamps
  // (now - TSecr, at least 1 ms); once its reader has copied more in an RTT than the measure
  // before, the buffer grows past tcp_rmem[1], and with it the window offered.
  TcpRig r(no_hystart(), 100, false);
  r.send_at(0, 4 << 20);
  r.run_to(ms(6));
  ASSERT_FALSE(r.sent_by_b.empty());
  EXPECT_EQ(r.sent_by_b.front().tr.th.wnd, 40u * kMss);
  std::int64_t acked = 0, offered = 45 * kMss, max_offered = 0;
  std::size_t ib = 0;
  for (const auto& x : r.sent_by_a) {
    // B's ACKs that reached A before this train left.
    while (ib < r.sent_by_b.size() && r.sent_by_b[ib].done + kLatency <= x.at) {
      acked = std::max<std::int64_t>(acked, r.sent_by_b[ib].tr.th.ack);
      offered = r.sent_by_b[ib].tr.th.wnd;
      max_offered = std::max(max_offered, offered);
      ++ib;
    }
    if (!x.tr.ack_only) {
      EXPECT_LE(x.tr.th.seq + x.tr.bytes, acked + offered) << "train at " << x.at;
    }
  }
  const TcpSock& tb = *r.sb->tcp;
  EXPECT_GT(tb.rcv_rtt_us, 0);
  EXPECT_GT(tb.rcvbuf, 131072);
  EXPECT_EQ(tb.window_clamp, tb.rcvbuf / 2);
  EXPECT_GT(max_offered, 65536);
  EXPECT_LE(max_offered, tb.window_clamp);
}

}  // namespace
}  // namespace napisim

namespace napisim {
namespace {

TEST(TcpTest, FqPacesEachSkbAtItsDepartureTime) {
  // net.core.default_qdisc fq: every skb carries its EDT stamp (tcp_wstamp_ns); after the first 10
  // segments each skb advances the next stamp by len / sk_pacing_rate (tcp_update_skb_after_send),
  // and fq holds it until then. init_cwnd 100 (slow start, ssthresh infinite: 200% of cwnd / srtt):
  // 1448 x 8 x 10^4 x 200 x 100 / 800 (srtt_us, x8) = 2.896e9 bytes/s. The write cuts the 100
  // segments into skbs of at most half the window (50) and tcp_tso_autosize()'s 45 segments: 45,
  // 45, 10, all sent at once (TSQ does not cap a paced flow). The first skb sets no stamp ahead (0
  // segments out before it: sch_fq did not pace the first 10), the second one leaves with it and
  // moves the next stamp 65160 bytes / 2.896e9 B/s = 22.5 us ahead: fq holds the third until then.
  KernelParams kp = no_hystart();
  kp.net.default_qdisc = "fq";
  kp.tcp.init_cwnd = 100;
  TcpRig r(kp);
  r.send_at(0, 100 * kMss);
  r.run_to(us(90));
  std::vector<Nanos> handed;
  std::vector<std::uint32_t> segs;
  for (const auto& x : r.sent_by_a)
    if (!x.tr.ack_only) {
      handed.push_back(x.at);
      segs.push_back(x.tr.segs);
    }
  const Nanos step = 45 * kMss * 1000000000LL / 2896000000LL;  // 22499 ns
  EXPECT_EQ(segs, (std::vector<std::uint32_t>{45, 45, 10}));
  EXPECT_EQ(handed, (std::vector<Nanos>{0, 0, step}));
  EXPECT_EQ(r.ta().pacing_rate, 2896000000u);
}

TEST(TcpTest, TheSwitchBufferTailDropsWhatDoesNotFit) {
  // switch_buffer_bytes 7000 in front of B's NIC (100 Gb/s: 0.08 ns a byte). A 3-segment train
  // (3 x 1538 wire bytes = 4614) arriving at an empty port fits. A second one at the same instant
  // finds 4614 bytes queued: one more segment fits (6152 <= 7000), the last two are dropped.
  // B's receive queue gets the first train and the first segment of the second.
  KernelParams kp;
  TcpRig r(kp);
  Kernel& b = r.b;
  b.nics()[0]->params.switch_buffer_bytes = 7000;
  RxEntry e;
  e.sock = 0;
  e.segs = 3;
  e.bytes = 3 * kMss;
  e.th.mss = kMss;
  e.th.seq = 0;
  b.switch_to_nic(0, e, 0);
  EXPECT_EQ(b.nics()[0]->switch_drops, 0u);
  e.th.seq = 3 * kMss;
  b.switch_to_nic(0, e, 0);
  EXPECT_EQ(b.nics()[0]->switch_drops, 2u);
  // 4614 + 1538 bytes queued from t = 0: the port is busy until 6152 x 0.08 = 492 ns.
  EXPECT_EQ(b.nics()[0]->rx_port.busy_until, 492);
  r.run_to(us(10));
  EXPECT_EQ(r.sb->rcv_nxt, 4 * kMss);
}

TEST(TcpTest, TheSendBufferHoldsTwoWindowsOfWorstCaseSkbsAndGrowsWhenASenderWaits) {
  // tcp_sndbuf_expand() at connect: 2 x max(cwnd 10, TCP_INIT_CWND) x (roundup_pow_of_two(1448 +
  // 320 + 320) = 4096, + 256) = 87040 bytes. A non-blocking send() of 1 MiB builds 65160-byte
  // skbs (tcp_tso_autosize()'s 45 segments) while the queue is below that: two, the second
  // overshooting, 130320 bytes; it stops short, so SOCK_NOSPACE. A 1000-byte send() takes it all.
  TcpRig r(no_hystart());
  Kernel& a = r.a;
  EXPECT_EQ(r.ta().sndbuf, 87040);
  EXPECT_EQ(a.tcp_send_room(*r.sa, 1000), 1000);
  EXPECT_FALSE(r.ta().nospace);
  Epoll& ep = a.add_epoll();
  a.epoll_ctl_add(ep, *r.sa, kEpollIn);
  const std::int64_t n = a.tcp_send_room(*r.sa, 1 << 20);
  EXPECT_EQ(n, 2 * 45 * kMss);
  EXPECT_TRUE(r.ta().nospace);
  a.tcp_sendmsg(Ctx{0, nullptr, 0, CpuClass::kSystem}, *r.sa, n);
  // neper's flow_mod(EPOLLOUT): 130320 queued, no free space: not writable, not queued.
  a.ep_modify(ep, *r.sa, kEpollOut, 0);
  EXPECT_FALSE(r.sa->on_ready_list);
  // The first ACK (one round trip, 101.3 us: the first 5-segment train) raises cwnd to 15 and,
  // with the flow below it, tcp_new_space() grows the buffer to 2 x 15 x 4352 = 130560; free
  // 130560 - 123080 = 7480 is less than half of 123080 queued: still waiting. By the end of the
  // second round (203 us) cwnd is 27: 235008 bytes, 105704 queued, free 129304 >= 52852:
  // sk_stream_write_space() clears SOCK_NOSPACE and EPOLLOUT queues the item.
  struct Seen {
    std::int64_t sndbuf;
    bool nospace, ready;
  };
  std::vector<Seen> seen;
  for (const Nanos t : {us(100), us(150), us(250)})
    r.at(t, [&] { seen.push_back({r.ta().sndbuf, r.ta().nospace, r.sa->on_ready_list}); });
  r.run_to(us(300));
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].sndbuf, 87040);
  EXPECT_EQ(seen[1].sndbuf, 130560);
  EXPECT_TRUE(seen[1].nospace);
  EXPECT_FALSE(seen[1].ready);
  EXPECT_EQ(seen[2].sndbuf, 2 * 27 * 4352);
  EXPECT_FALSE(seen[2].nospace);
  EXPECT_TRUE(seen[2].ready);
}

TEST(TcpTest, PollingAnUnwritableSocketMarksItSoTheAckThatFreesSpaceWakesIt) {
  // tcp_poll() sets SOCK_NOSPACE on an unwritable socket whoever filled it: 130320 bytes queued by
  // tcp_sendmsg() itself leave the flag clear, epoll_ctl(MOD, EPOLLOUT) polls the socket and sets
  // it, and tcp_check_space() then queues the item once ACKs free space (by 250 us, as above).
  TcpRig r(no_hystart());
  Kernel& a = r.a;
  Epoll& ep = a.add_epoll();
  a.epoll_ctl_add(ep, *r.sa, kEpollIn);
  a.tcp_sendmsg(Ctx{0, nullptr, 0, CpuClass::kSystem}, *r.sa, 2 * 45 * kMss);
  EXPECT_FALSE(r.ta().nospace);
  a.ep_modify(ep, *r.sa, kEpollOut, 0);
  EXPECT_FALSE(r.sa->on_ready_list);
  EXPECT_TRUE(r.ta().nospace);
  r.run_to(us(250));
  EXPECT_TRUE(r.sa->on_ready_list);
  EXPECT_FALSE(r.ta().nospace);
}

}  // namespace
}  // namespace napisim
