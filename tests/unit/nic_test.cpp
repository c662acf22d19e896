// Unit tests of the NIC and NAPI receive path (sim/kernel/nic.cpp, napi.cpp: RSS, the ring,
// moderation, net_rx_action) against hand-computed timelines, on the shared rig
// (tests/unit/kernel_rig.hpp).
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

// ---- NIC: RSS, ring, moderation ------------------------------------------------------------

TEST(KernelTest, RssSpreadsFlowsByIndirectionTable) {
  Rig r(shape(4), KernelParams{}, zero_costs());
  NicParams np;
  np.queues = 8;
  np.irq_affinity = "0-3";
  Nic& nic = r.k.add_nic(np, "/nic");
  // Default table: indir[i] = i % 8, queue = indir[hash % 128].
  std::vector<int> per_queue(8, 0);
  for (std::uint32_t h = 0; h < 1024; ++h) {
    const Socket& s = r.k.add_socket(0, h * 2654435761u);
    EXPECT_EQ(s.rx_queue, static_cast<int>((h * 2654435761u) % 128 % 8));
    ++per_queue[static_cast<std::size_t>(s.rx_queue)];
  }
  // Toeplitz hashes of 800 real 4-tuples spread evenly enough (binomial sd ~ 9.4 around 100).
  std::vector<int> toeplitz(8, 0);
  for (std::uint16_t port = 0; port < 800; ++port) {
    const FlowTuple ft{0x0A000002, 0x0A000001, static_cast<std::uint16_t>(40000 + port), 5201};
    ++toeplitz[static_cast<std::size_t>(r.k.add_socket(0, nic.rss->hash(ft)).rx_queue)];
  }
  for (int q = 0; q < 8; ++q) {
    EXPECT_EQ(per_queue[static_cast<std::size_t>(q)], 128);
    EXPECT_GT(toeplitz[static_cast<std::size_t>(q)], 60) << q;
    EXPECT_LT(toeplitz[static_cast<std::size_t>(q)], 140) << q;
  }
  // A custom table steers every flow to queue 5; its packets land in channel 5's ring, whose
  // IRQ goes to CPU 5 % 4 = 1.
  nic.rss->set_indirection(std::vector<int>(128, 5));
  Socket& s = r.k.add_socket(0, 12345);
  EXPECT_EQ(s.rx_queue, 5);
  At at(r.host);
  at(us(1), [&] { r.k.nic_rx(0, pkt(s.id, 3)); });
  r.run_to(us(10));
  EXPECT_EQ(nic.channels[5]->rx_pkts, 3u);
  EXPECT_EQ(nic.channels[5]->irq_cpu, 1);
  EXPECT_EQ(r.cpu(1).sd.processed, 3u);
}

TEST(KernelTest, FullRingDropsCountsAndTellsPeer) {
  // Ring of 16 descriptors. A 20-segment train arrives at once: 16 accepted, 4 dropped
  // (Channel::drops), the peer is told 4 segments / 4000 bytes of its 20000-byte train were lost.
  // The IRQ event is processed after the arrival, so a second train of 2 in the same instant
  // is dropped whole. After the softirq drains the ring, new packets are accepted again.
  RingRig r(16);
  At at(r.host);
  at(us(1), [&] {
    r.k.nic_rx(0, pkt(r.s.id, 20));
    r.k.nic_rx(0, pkt(r.s.id, 2));
  });
  at(us(1) + 1, [&] { EXPECT_EQ(r.ch.ring_pkts, 16); });
  at(us(30), [&] { r.k.nic_rx(0, pkt(r.s.id, 2)); });
  r.run_to(us(100));
  EXPECT_EQ(r.ch.drops, 6u);
  ASSERT_EQ(r.peer.drops.size(), 2u);
  EXPECT_EQ(r.peer.drops[0].sock, r.s.id);
  EXPECT_EQ(r.peer.drops[0].segs, 4u);
  EXPECT_EQ(r.peer.drops[0].bytes, 4000u);
  EXPECT_EQ(r.peer.drops[1].segs, 2u);
  EXPECT_EQ(r.peer.drops[1].bytes, 2000u);
  EXPECT_EQ(r.ch.rx_pkts, 18u);
  EXPECT_EQ(r.cpu(0).sd.processed, 18u);
  EXPECT_EQ(r.ch.ring_pkts, 0);
}

TEST(KernelTest, DeliveredTrainsEnterTheRingAtTheirTimeWithOrWithoutAnEvent) {
  // rx_pkt_ns 1000, an interrupt per completion, every other cost 0. Train A reaches the NIC at
  // 1 us: its IRQ polls it 1 -> 2 us. B (1.5 us) and C (2.5 us) are sent at 1.2 us, while the CQ
  // is disarmed: neither gets an event. At 2 us the poll ends: B has entered the ring (rx_sync),
  // napi_complete_done re-arms the CQ, which fires at once for B and queues C's event (rx_watch);
  // B is polled 2 -> 3 us, C enters at 2.5 us without an interrupt and is polled 3 -> 4 us. The
  // same trains handed to nic_rx() at 1, 1.5 and 2.5 us give the same timeline.
  auto run = [](bool deliver, std::vector<Nanos>* polls_at, std::uint64_t* events) {
    RingRig r(1024);
    At at(r.host);
    if (deliver) {
      r.k.nic_deliver(0, pkt(r.s.id), us(1));
      at(us(1) + 200, [&] {
        r.k.nic_deliver(0, pkt(r.s.id), us(1) + 500);
        r.k.nic_deliver(0, pkt(r.s.id), us(2) + 500);
        EXPECT_EQ(r.ch.inbound_idle, 2);  // no event for either
      });
      at(us(2), [&] { EXPECT_EQ(r.ch.inbound_idle, 0); });  // C's event is queued by the re-arm
    } else {
      for (Nanos t : {us(1), us(1) + 500, us(2) + 500})
        at(t, [&r] { r.k.nic_rx(0, pkt(r.s.id)); });
    }
    for (Nanos t : {us(1) + 1, us(2) + 1, us(2) + 501, us(3) + 1, us(4) + 1})
      at(t, [&r, polls_at] { polls_at->push_back(static_cast<Nanos>(r.ch.napi.polls) * 10 + r.ch.ring_pkts); });
    r.run_to(us(10));
    r.settle();
    EXPECT_EQ(r.ch.rx_pkts, 3u);
    EXPECT_EQ(r.ch.irqs, 3u);
    EXPECT_EQ(r.cpu(0).sd.processed, 3u);
    EXPECT_EQ(r.cpu(0).time[static_cast<int>(CpuClass::kSoftirq)], us(3));
    *events = r.host.events_processed();
  };
  std::vector<Nanos> lazy, eager;
  std::uint64_t lazy_events = 0, eager_events = 0;
  run(true, &lazy, &lazy_events);
  run(false, &eager, &eager_events);
  // (polls completed) * 10 + descriptors in the ring: A in the ring at 1 us; B at 2 us (A's
  // descriptor returned); C at 2.5 us next to B; C at 3 us; none at 4 us.
  const std::vector<Nanos> want{1, 11, 12, 21, 30};
  EXPECT_EQ(lazy, want);
  EXPECT_EQ(eager, want);
  // Beyond the kernel's own events (the same in both runs) and the 5 probes: deliveries take 2
  // test actions and 2 arrival events (A, C; B has none), nic_rx() 3 test actions.
  EXPECT_EQ(lazy_events, eager_events + 1);
}

TEST(KernelTest, ADeliveredTrainThatMayNotFitKeepsItsEventAndDropsAtItsTime) {
  // Ring of 2. A (1 segment) is polled 1 -> 2 us and holds its descriptor until then. At 1.2 us a
  // 2-segment train D is sent for 1.6 us: 1 in the ring + 2 may not fit, so D keeps its event
  // and, at 1.6 us, 1 segment is taken and 1 dropped, the peer told then (its retransmission
  // timer starts at the drop).
  RingRig r(2);
  At at(r.host);
  at(us(1), [&] { r.k.nic_rx(0, pkt(r.s.id)); });
  at(us(1) + 200, [&] {
    r.k.nic_deliver(0, pkt(r.s.id, 2), us(1) + 600);
    EXPECT_EQ(r.ch.inbound_idle, 0);
  });
  at(us(1) + 601, [&] { EXPECT_EQ(r.ch.ring_pkts, 2); });
  r.run_to(us(10));
  EXPECT_EQ(r.ch.drops, 1u);
  ASSERT_EQ(r.peer.drop_times.size(), 1u);
  EXPECT_EQ(r.peer.drop_times[0], us(1) + 600);
  EXPECT_EQ(r.peer.drops[0].segs, 1u);
  EXPECT_EQ(r.ch.rx_pkts, 2u);
  EXPECT_EQ(r.cpu(0).sd.processed, 2u);
}

TEST(KernelTest, NetRxActionPollsFiveTimesThenSqueezesAndReraises) {
  // Six queues, all IRQs on CPU 0, 200 packets each at t=0 (softirq_entry 500 ns, rx_pkt_ns
  // 1000). The first IRQ starts the softirq; the other five arrive during its entry and add their
  // NAPIs to poll_list (q0..q5). Pass 1: net_rx_action polls q0..q4 with weight 64 each (the
  // budget is checked after each poll, never before): 320 packets, 0.5 .. 320.5 us, budget
  // 300 - 320 < 0 -> time_squeeze++, break; poll_list = never-polled (q5) + repoll (q0..q4), and
  // NET_RX is re-raised, so handle_softirqs restarts (pass 2 entry 320.5 .. 321 us).
  CostParams c = zero_costs();
  c.softirq_entry_ns = 500;
  c.rx_pkt_ns = 1000;
  Rig r(shape(1), KernelParams{}, c);
  NicParams np = one_queue_nic(1024);
  np.queues = 6;
  Nic& nic = r.k.add_nic(np, "/nic");
  std::vector<int> socks;
  for (std::uint32_t q = 0; q < 6; ++q) {
    const Socket& s = r.k.add_socket(0, q);  // default indirection: hash q -> queue q
    ASSERT_EQ(s.rx_queue, static_cast<int>(q));
    socks.push_back(s.id);
  }
  auto napi = [&](int q) -> Napi& { return nic.channels[static_cast<std::size_t>(q)]->napi; };
  At at(r.host);
  at(0, [&] {
    for (int q = 0; q < 6; ++q)
      flood(r.k, socks[static_cast<std::size_t>(q)], 200);
  });
  at(us(320) + 700, [&] {
    const Cpu& c0 = r.cpu(0);
    for (int q = 0; q < 5; ++q) {
      EXPECT_EQ(napi(q).polls, 1u) << q;
      EXPECT_EQ(napi(q).full_polls, 1u) << q;
    }
    EXPECT_EQ(napi(5).polls, 0u);
    EXPECT_EQ(c0.sd.processed, 320u);
    EXPECT_EQ(c0.sd.time_squeeze, 1u);
    EXPECT_EQ(c0.softirq_runs, 1u);  // the same __do_softirq, restarted
    // Round robin: q5 (not polled this round) first, then the repoll list in order.
    std::vector<int> order;
    for (Napi* it = c0.sd.poll_list.head; it; it = it->next)
      order.push_back(it->ch->id);
    EXPECT_EQ(order, (std::vector<int>{5, 0, 1, 2, 3, 4}));
    for (int q = 0; q < 6; ++q) {
      EXPECT_TRUE(napi(q).state & napi_state::kSched) << q;
      EXPECT_FALSE(nic.channels[static_cast<std::size_t>(q)]->irq_armed) << q;
    }
  });
  r.run_to(ms(2));
  // The same rules by hand to the end (each queue: polls of 64, 64, 64, 8): 5 passes, 3 of them
  // squeezed, 24 polls of which 18 full; the 8-packet polls complete and re-arm their IRQs.
  // Softirq time: 5 entries + 1200 packets.
  const Cpu& c0 = r.cpu(0);
  std::uint64_t polls = 0, full = 0, completions = 0;
  for (int q = 0; q < 6; ++q) {
    polls += napi(q).polls;
    full += napi(q).full_polls;
    completions += napi(q).completions;
    EXPECT_TRUE(nic.channels[static_cast<std::size_t>(q)]->irq_armed) << q;
    EXPECT_EQ(nic.channels[static_cast<std::size_t>(q)]->irqs, 1u) << q;
  }
  EXPECT_EQ(polls, 24u);
  EXPECT_EQ(full, 18u);
  EXPECT_EQ(completions, 6u);
  EXPECT_EQ(c0.sd.time_squeeze, 3u);
  EXPECT_EQ(c0.sd.processed, 1200u);
  EXPECT_EQ(c0.time[kSoftirq], 5 * 500 + 1200 * 1000);
  EXPECT_EQ(c0.softirq_runs, 1u);
}

// A NAPI scheduled on this CPU while net_rx_action() runs: since v6.4 (8b43fd3d1d7d)
// ____napi_schedule() raises no NET_RX there and net_rx_action() refills its list from poll_list
// ("goto start"), polling it in the same pass; before, NET_RX was raised and net_rx_action()
// returned when its list ran out, so __do_softirq() restarted for it (one more softirq entry).
// Two queues on CPU 0, 10 packets each, q1's at 5 us while q0 is being polled (entry 500 ns,
// 1000 ns a packet): v6.5 mode 1 entry + 20 packets, the 4.9-6.4 mode 2 entries + 20 packets.
Nanos softirq_time_with_napi_scheduled_mid_poll(const std::string& mode) {
  CostParams c = zero_costs();
  c.softirq_entry_ns = 500;
  c.rx_pkt_ns = 1000;
  KernelParams kp;
  kp.ksoftirqd_mode = mode;
  Rig r(shape(1), kp, c);
  NicParams np = one_queue_nic(1024);
  np.queues = 2;
  Nic& nic = r.k.add_nic(np, "/nic");
  const int s0 = r.k.add_socket(0, 0).id, s1 = r.k.add_socket(0, 1).id;
  At at(r.host);
  at(0, [&] { flood(r.k, s0, 10); });
  at(us(5), [&] { flood(r.k, s1, 10); });
  r.run_to(ms(1));
  EXPECT_EQ(r.cpu(0).sd.processed, 20u) << mode;
  EXPECT_EQ(nic.channels[1]->napi.polls, 1u) << mode;
  EXPECT_EQ(r.cpu(0).softirq_runs, 1u) << mode;  // one __do_softirq(), restarted or not
  return r.cpu(0).time[kSoftirq];
}

TEST(KernelTest, NetRxActionRefillsFromPollListSinceV64) {
  EXPECT_EQ(softirq_time_with_napi_scheduled_mid_poll("v6.5"), 500 + 20 * 1000);
  EXPECT_EQ(softirq_time_with_napi_scheduled_mid_poll("4.9-6.4"), 2 * 500 + 20 * 1000);
  EXPECT_EQ(softirq_time_with_napi_scheduled_mid_poll("pre-4.9"), 2 * 500 + 20 * 1000);
}

TEST(KernelTest, NapiCompleteDoneRearmsOnlyBelowWeight) {
  // Exactly 64 packets: the first poll returns 64 == weight, so the core keeps the NAPI (repoll,
  // no completion, IRQ stays masked); net_rx_action ends with budget left (no squeeze) and
  // re-raises. The next poll finds nothing (0 < 64): napi_complete_done() -> IRQ re-armed.
  // napi_poll 1000, rx_pkt 1000, entry 500: pass 1 0..65.5 us, pass 2 65.5..67 us.
  CostParams c = zero_costs();
  c.softirq_entry_ns = 500;
  c.napi_poll_ns = 1000;
  c.rx_pkt_ns = 1000;
  Rig r(shape(1), KernelParams{}, c);
  r.k.add_nic(one_queue_nic(), "/nic");
  Socket& s = r.k.add_socket(0, 0);
  Channel& ch = *r.k.nics()[0]->channels[0];
  At at(r.host);
  at(0, [&] { flood(r.k, s.id, 64); });
  at(us(66) + 500, [&] {
    EXPECT_FALSE(ch.irq_armed);
    EXPECT_EQ(ch.napi.polls, 1u);
    EXPECT_EQ(ch.napi.full_polls, 1u);
    EXPECT_EQ(ch.napi.completions, 0u);
  });
  r.run_to(us(67) - 1);
  EXPECT_FALSE(ch.irq_armed);
  r.run_to(us(67));
  EXPECT_TRUE(ch.irq_armed);
  EXPECT_EQ(ch.napi.polls, 2u);
  EXPECT_EQ(ch.napi.completions, 1u);
  EXPECT_EQ(r.cpu(0).sd.time_squeeze, 0u);
  EXPECT_EQ(r.cpu(0).time[kSoftirq], 2 * 500 + 2 * 1000 + 64 * 1000);
}

TEST(KernelTest, InterruptCoalescingByUsecsAndFrames) {
  // rx-usecs 8, rx-frames 128: packets at 10, 12, 14 us -> one IRQ 8 us after the first, 18 us.
  // rx-usecs 8, rx-frames 4: packets at 10, 11, 12, 13 us -> IRQ at the 4th packet, 13 us, and
  // the moderation timer is cancelled (no second IRQ).
  for (const int frames : {128, 4}) {
    Rig r(shape(1), KernelParams{}, zero_costs());
    NicParams np = one_queue_nic();
    np.rx_usecs = 8;
    np.rx_frames = frames;
    r.k.add_nic(np, "/nic");
    Socket& s = r.k.add_socket(0, 0);
    Channel& ch = *r.k.nics()[0]->channels[0];
    At at(r.host);
    const std::vector<Nanos> arrivals =
        frames == 4 ? std::vector<Nanos>{us(10), us(11), us(12), us(13)} : std::vector<Nanos>{us(10), us(12), us(14)};
    for (Nanos t : arrivals)
      at(t, [&] { r.k.nic_rx(0, pkt(s.id)); });
    const Nanos fire = frames == 4 ? us(13) : us(18);
    r.run_to(fire - 1);
    EXPECT_EQ(r.cpu(0).irqs, 0u) << frames;
    r.run_to(fire);
    EXPECT_EQ(r.cpu(0).irqs, 1u) << frames;
    EXPECT_EQ(r.cpu(0).sd.processed, arrivals.size()) << frames;
    r.run_to(us(100));
    EXPECT_EQ(ch.irqs, 1u) << frames;
    EXPECT_TRUE(ch.irq_armed) << frames;
  }
}

}  // namespace
}  // namespace napisim
