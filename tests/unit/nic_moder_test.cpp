// Unit tests of the NIC's interrupt moderation modes (NicParams::cq_period_mode; sim/kernel/nic.cpp,
// nic_moder.cpp): the generic "arrival" timer, mlx5's CQE and EQE period modes with a counter and a
// timer per CQ, and the DIM profiles each mode starts from; hand-computed timelines on the shared
// rig (tests/unit/kernel_rig.hpp), every cost zero.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "tests/unit/kernel_rig.hpp"

namespace napisim {
namespace {

struct ModerRig {
  Rig r{shape(1), KernelParams{}, zero_costs()};
  At at{r.host};
  Socket* s = nullptr;
  Channel* ch = nullptr;
  std::vector<Nanos> irqs;  // when the channel raised its interrupt
  explicit ModerRig(const std::string& mode, std::int64_t rx_usecs = 8, std::int64_t rx_frames = 128) {
    NicParams np = one_queue_nic();
    np.cq_period_mode = mode;
    np.rx_usecs = rx_usecs;
    np.rx_frames = rx_frames;
    np.tx_usecs = 16;
    np.tx_frames = 32;
    r.k.add_nic(np, "/nic");
    s = &r.k.add_socket(0, 0);
    ch = r.k.nics()[0]->channels[0].get();
  }
  /// Runs to `end`, sampling the channel's interrupt count every ns where it changes.
  void run(Nanos end) {
    std::uint64_t seen = 0;
    for (Nanos t = 0; t <= end; t += 1) {
      r.run_to(t);
      if (ch->irqs != seen) {
        irqs.push_back(t);
        seen = ch->irqs;
      }
    }
  }
};

TEST(NicModerTest, RxPeriodStartsAtFirstCompletionEachCompletionOrEachEvent) {
  // rx-usecs 8, rx-frames 128; packets at 10, 12 and 14 us after a quiet spell. arrival: the timer
  // starts at the first completion after the CQ was armed: one IRQ at 18 us. cqe: the period
  // restarts with each completion: one IRQ 8 us after the last, 22 us. eqe: the period restarts at
  // each event and the last one was long ago: the first packet interrupts at once (10 us); its
  // poll re-arms the CQ, and the packets at 12 and 14 us wait for the period that began with that
  // event: 18 us.
  const std::vector<std::pair<std::string, std::vector<Nanos>>> cases = {
      {"arrival", {us(18)}}, {"cqe", {us(22)}}, {"eqe", {us(10), us(18)}}};
  for (const auto& [mode, want] : cases) {
    ModerRig g(mode);
    for (Nanos t : {us(10), us(12), us(14)})
      g.at(t, [&g] { g.r.k.nic_rx(0, pkt(g.s->id)); });
    g.run(us(40));
    EXPECT_EQ(g.irqs, want) << mode;
    EXPECT_EQ(g.r.cpu(0).sd.processed, 3u) << mode;
  }
}

TEST(NicModerTest, RxFramesInterruptAtOnceInEveryMode) {
  // rx-frames 3: the third packet (12 us) interrupts whatever the period's start.
  for (const std::string mode : {"arrival", "cqe"}) {
    ModerRig g(mode, 8, 3);
    for (Nanos t : {us(10), us(11), us(12)})
      g.at(t, [&g] { g.r.k.nic_rx(0, pkt(g.s->id)); });
    g.run(us(40));
    EXPECT_EQ(g.irqs, std::vector<Nanos>{us(12)}) << mode;
  }
}

TEST(NicModerTest, TxCompletionsHaveTheirOwnCqInEqeMode) {
  // A pure ACK sent at 5 us completes when it leaves the 100 Gb/s port, 90 bytes x 0.08 ns later:
  // 5007 ns. arrival: one counter and tx-usecs 16 from that completion: IRQ at 21007 ns. cqe (the
  // TX CQ is EQE, its last event long ago): the completion interrupts at once, 5007 ns.
  for (const std::string mode : {"arrival", "cqe"}) {
    ModerRig g(mode);
    g.at(us(5), [&g] { g.r.k.nic_transmit(Ctx{0, nullptr, 1, CpuClass::kSoftirq}, *g.s, 0, true); });
    g.run(us(30));
    EXPECT_EQ(g.irqs, std::vector<Nanos>{mode == "arrival" ? 21007 : 5007}) << mode;
  }
}

TEST(NicModerTest, DimStartsFromTheModesProfileOne) {
  // net_dim_get_def_{rx,tx}_moderation(): profile index 1 of the CQ's table (lib/dim/net_dim.c):
  // RX CQE {8 us, 128}, RX EQE {8 us, 256}, TX EQE {8 us, 128}. "arrival" uses the RX EQE table
  // and has no adaptive-tx.
  const struct {
    std::string mode;
    int rx_usecs, rx_frames;
  } cases[] = {{"cqe", 8, 128}, {"eqe", 8, 256}, {"arrival", 8, 256}};
  for (const auto& c : cases) {
    Rig r(shape(1), KernelParams{}, zero_costs());
    NicParams np = one_queue_nic();
    np.cq_period_mode = c.mode;
    np.adaptive_rx = true;
    np.adaptive_tx = c.mode != "arrival";
    Channel& ch = *r.k.add_nic(np, "/nic").channels[0];
    EXPECT_EQ(ch.rx_usecs, c.rx_usecs) << c.mode;
    EXPECT_EQ(ch.rx_frames, c.rx_frames) << c.mode;
    if (c.mode != "arrival") {
      EXPECT_EQ(ch.tx_usecs, 8) << c.mode;
      EXPECT_EQ(ch.tx_frames, 128) << c.mode;
    }
  }
  Rig r(shape(1), KernelParams{}, zero_costs());
  NicParams np = one_queue_nic();
  np.adaptive_tx = true;
  EXPECT_THROW(r.k.add_nic(np, "/nics/0"), ConfigError);
}

}  // namespace
}  // namespace napisim
