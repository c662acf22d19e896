// Tests for sim/hw/dim: the net_dim port (lib/dim/net_dim.c, lib/dim/dim.c, ≈ v6.6).
#include "sim/hw/dim.hpp"

#include <cmath>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace napisim {
namespace {

// ---------------------------------------------------------------------------------------------
// Profiles

TEST(NetDimProfileTest, RxEqeValuesAtEachIndex) {
  const std::vector<DimProfile> want = {{1, 256}, {8, 256}, {64, 256}, {128, 256}, {256, 256}};
  for (int i = 0; i < kNetDimNumProfiles; ++i)
    EXPECT_EQ(net_dim_profile(DimCqMode::kEqe, true, i), want[static_cast<std::size_t>(i)]) << i;
}

TEST(NetDimProfileTest, RxCqeValuesAtEachIndex) {
  const std::vector<DimProfile> want = {{2, 256}, {8, 128}, {16, 64}, {32, 64}, {64, 64}};
  for (int i = 0; i < kNetDimNumProfiles; ++i)
    EXPECT_EQ(net_dim_profile(DimCqMode::kCqe, true, i), want[static_cast<std::size_t>(i)]) << i;
}

TEST(NetDimProfileTest, TxEqeValuesAtEachIndex) {
  const std::vector<DimProfile> want = {{1, 128}, {8, 128}, {32, 128}, {64, 128}, {128, 128}};
  for (int i = 0; i < kNetDimNumProfiles; ++i)
    EXPECT_EQ(net_dim_profile(DimCqMode::kEqe, false, i), want[static_cast<std::size_t>(i)]) << i;
}

TEST(NetDimProfileTest, TxCqeValuesAtEachIndex) {
  const std::vector<DimProfile> want = {{5, 128}, {8, 64}, {16, 32}, {32, 32}, {64, 32}};
  for (int i = 0; i < kNetDimNumProfiles; ++i)
    EXPECT_EQ(net_dim_profile(DimCqMode::kCqe, false, i), want[static_cast<std::size_t>(i)]) << i;
}

TEST(NetDimProfileTest, StartsAtDefaultProfileWithZeroedAlgorithmState) {
  const NetDim rx_eqe;
  EXPECT_EQ(rx_eqe.profile_ix(), kNetDimDefProfileEqe);
  EXPECT_EQ(rx_eqe.profile(), (DimProfile{8, 256}));
  // struct dim is kzalloc()ed by drivers.
  EXPECT_EQ(rx_eqe.dim_profile_ix(), 0);
  EXPECT_EQ(rx_eqe.tune_state(), DimTuneState::kParkingOnTop);
  EXPECT_EQ(rx_eqe.state(), DimState::kStartMeasure);
  EXPECT_EQ(rx_eqe.tired(), 0);

  EXPECT_EQ(NetDim(DimCqMode::kCqe, true).profile(), (DimProfile{8, 128}));
  EXPECT_EQ(NetDim(DimCqMode::kEqe, false).profile(), (DimProfile{8, 128}));
  EXPECT_EQ(NetDim(DimCqMode::kCqe, false).profile(), (DimProfile{8, 64}));
}

TEST(NetDimProfileTest, StateNamesMatchKernelEnums) {
  EXPECT_EQ(to_string(DimTuneState::kParkingOnTop), "DIM_PARKING_ON_TOP");
  EXPECT_EQ(to_string(DimTuneState::kParkingTired), "DIM_PARKING_TIRED");
  EXPECT_EQ(to_string(DimTuneState::kGoingRight), "DIM_GOING_RIGHT");
  EXPECT_EQ(to_string(DimTuneState::kGoingLeft), "DIM_GOING_LEFT");
  EXPECT_EQ(to_string(DimState::kMeasureInProgress), "DIM_MEASURE_IN_PROGRESS");
  EXPECT_EQ(to_string(DimStatsCmp::kBetter), "DIM_STATS_BETTER");
}

// ---------------------------------------------------------------------------------------------
// IS_SIGNIFICANT_DIFF, dim_calc_stats, net_dim_stats_compare

TEST(DimStatsTest, SignificantDiffIsStrictlyMoreThanTenPercent) {
  EXPECT_FALSE(dim_is_significant_diff(110, 100));  // 10% exactly
  EXPECT_TRUE(dim_is_significant_diff(111, 100));
  EXPECT_FALSE(dim_is_significant_diff(90, 100));
  EXPECT_TRUE(dim_is_significant_diff(89, 100));
  // Integer percent: 100 * 21 / 200 = 10 -> not significant although 10.5%.
  EXPECT_FALSE(dim_is_significant_diff(221, 200));
  EXPECT_TRUE(dim_is_significant_diff(223, 200));
  EXPECT_FALSE(dim_is_significant_diff(5, 0));  // (ref) && ... guard
}

TEST(DimStatsTest, CalcStatsRoundsUpAndUsesDimNEventsForEpms) {
  DimSample start{1000, 10, 1000, us(100)};
  DimSample end{1000 + 100, 10 + 7, 1000 + 1501, us(100) + 3000};  // 3 us
  DimStats s;
  ASSERT_TRUE(dim_calc_stats(start, end, s));
  EXPECT_EQ(s.ppms, 2334);    // ceil(7 * 1000 / 3)
  EXPECT_EQ(s.bpms, 500334);  // ceil(1501 * 1000 / 3)
  EXPECT_EQ(s.epms, 21334);   // ceil(64 * 1000 / 3): DIM_NEVENTS, not the 100 events seen
}

TEST(DimStatsTest, CalcStatsTruncatesTimeToMicroseconds) {
  DimSample start{0, 0, 0, 0};
  DimSample end{64, 1, 1, 999};  // 999 ns -> delta_us = 0
  DimStats s{1, 2, 3};
  EXPECT_FALSE(dim_calc_stats(start, end, s));
  EXPECT_EQ(s, (DimStats{1, 2, 3}));
  end.time = 1999;  // 1 us
  ASSERT_TRUE(dim_calc_stats(start, end, s));
  EXPECT_EQ(s, (DimStats{1000, 1000, 64000}));
}

TEST(DimStatsTest, CalcStatsHandlesU32CounterWrapAround) {
  // Drivers pass u64 counters that the kernel stores as u32: BIT_GAP(32, end, start).
  DimSample start{0, 0xFFFFFFF0U, 0xFFFFFF00U, 0};
  DimSample end{64, 0x10U, 0x100U, ms(1)};
  DimStats s;
  ASSERT_TRUE(dim_calc_stats(start, end, s));
  EXPECT_EQ(s.ppms, 32);
  EXPECT_EQ(s.bpms, 512);
  // Full 64-bit counters that cross 2^32 give the same result.
  DimSample start64{0, 0x1FFFFFFF0ULL, 0x2FFFFFF00ULL, 0};
  DimSample end64{64, 0x200000010ULL, 0x300000100ULL, ms(1)};
  DimStats s64;
  ASSERT_TRUE(dim_calc_stats(start64, end64, s64));
  EXPECT_EQ(s64, s);
}

TEST(DimStatsTest, CompareOrderIsBytesThenPacketsThenEventsLowerBetter) {
  const DimStats prev{1000, 100000, 50};
  // Significant byte-rate change decides regardless of the rest.
  EXPECT_EQ(net_dim_stats_compare({1, 120000, 1000}, prev), DimStatsCmp::kBetter);
  EXPECT_EQ(net_dim_stats_compare({5000, 80000, 1}, prev), DimStatsCmp::kWorse);
  // Bytes within 10%: packets decide.
  EXPECT_EQ(net_dim_stats_compare({1200, 105000, 1000}, prev), DimStatsCmp::kBetter);
  EXPECT_EQ(net_dim_stats_compare({800, 95000, 1}, prev), DimStatsCmp::kWorse);
  // Bytes and packets within 10%: fewer events per ms is better.
  EXPECT_EQ(net_dim_stats_compare({1050, 104000, 40}, prev), DimStatsCmp::kBetter);
  EXPECT_EQ(net_dim_stats_compare({1050, 104000, 60}, prev), DimStatsCmp::kWorse);
  EXPECT_EQ(net_dim_stats_compare({1050, 104000, 54}, prev), DimStatsCmp::kSame);
}

TEST(DimStatsTest, CompareAgainstZeroReference) {
  EXPECT_EQ(net_dim_stats_compare({1, 1, 1}, {0, 0, 0}), DimStatsCmp::kBetter);
  EXPECT_EQ(net_dim_stats_compare({0, 0, 5}, {0, 0, 0}), DimStatsCmp::kSame);
  EXPECT_EQ(net_dim_stats_compare({10, 100, 5}, {0, 100, 5}), DimStatsCmp::kBetter);
  EXPECT_EQ(net_dim_stats_compare({0, 100, 50}, {0, 100, 5}), DimStatsCmp::kSame);  // both ppms 0
  EXPECT_EQ(net_dim_stats_compare({10, 100, 50}, {10, 100, 0}), DimStatsCmp::kSame);
}

// ---------------------------------------------------------------------------------------------
// The state machine, driven like a driver: one on_interrupt() per interrupt, cumulative counters.

class DimDriver {
 public:
  /// pkts_per_irq(applied_profile_ix, decisions_so_far) gives the load of the next interrupt.
  using Load = std::function<std::uint64_t(int, std::uint64_t)>;

  explicit DimDriver(Load load, Nanos irq_gap = us(10)) : load_(std::move(load)), gap_(irq_gap) {}

  bool interrupt(std::uint64_t pkts) {
    now_.time += gap_;
    now_.event_ctr += 1;
    now_.pkt_ctr += pkts;
    now_.byte_ctr += pkts * 1500;
    return dim.on_interrupt(now_);
  }

  /// Interrupts until the next net_dim_decision(); returns whether it changed the profile.
  bool run_to_decision() {
    const std::uint64_t before = dim.decisions();
    for (int i = 0; i < 10 * kDimNEvents; ++i) {
      const bool changed = interrupt(load_(dim.profile_ix(), dim.decisions()));
      if (dim.decisions() != before) return changed;
    }
    ADD_FAILURE() << "no decision within " << 10 * kDimNEvents << " interrupts";
    return false;
  }

  /// dim_profile_ix() after each of the next n decisions.
  std::vector<int> walk(int n) {
    std::vector<int> ixs;
    for (int i = 0; i < n; ++i) {
      run_to_decision();
      ixs.push_back(dim.dim_profile_ix());
    }
    return ixs;
  }

  NetDim dim;

 private:
  Load load_;
  Nanos gap_;
  DimSample now_{};
};

TEST(NetDimTest, NoDecisionBeforeDimNEventsEvents) {
  NetDim dim;
  DimSample s{};
  // First call only records the start sample.
  EXPECT_FALSE(dim.on_interrupt(s));
  EXPECT_EQ(dim.state(), DimState::kMeasureInProgress);
  for (int i = 1; i < kDimNEvents; ++i) {
    s.event_ctr += 1;
    s.pkt_ctr += 10;
    s.byte_ctr += 15000;
    s.time += us(10);
    EXPECT_FALSE(dim.on_interrupt(s));
  }
  EXPECT_EQ(dim.decisions(), 0U);
  EXPECT_EQ(dim.start_sample().event_ctr, 0U);
  s.event_ctr += 1;
  s.time += us(10);
  EXPECT_TRUE(dim.on_interrupt(s));
  EXPECT_EQ(dim.decisions(), 1U);
}

TEST(NetDimTest, EventCounterWrapsAtSixteenBits) {
  NetDim dim;
  DimSample s{65500, 0, 0, 0};
  dim.on_interrupt(s);
  s = DimSample{(65500 + 63) & 0xFFFF, 630, 945000, us(630)};
  EXPECT_FALSE(dim.on_interrupt(s));
  EXPECT_EQ(dim.decisions(), 0U);
  s = DimSample{(65500 + 64) & 0xFFFF, 640, 960000, us(640)};
  EXPECT_TRUE(dim.on_interrupt(s));
  EXPECT_EQ(dim.decisions(), 1U);
}

TEST(NetDimTest, ZeroTimeDeltaSkipsDecisionAndKeepsWindow) {
  NetDim dim;
  DimSample s{0, 0, 0, us(5)};
  dim.on_interrupt(s);
  s.event_ctr = 64;
  s.pkt_ctr = 640;
  s.byte_ctr = 960000;  // same time: delta_us == 0
  EXPECT_FALSE(dim.on_interrupt(s));
  EXPECT_EQ(dim.decisions(), 0U);
  EXPECT_EQ(dim.start_sample().event_ctr, 0U);  // window not restarted
  s.event_ctr = 65;
  s.time = us(700);
  EXPECT_TRUE(dim.on_interrupt(s));
}

TEST(NetDimTest, FirstDecisionWithTrafficExitsParkingToTheRight) {
  DimDriver d([](int, std::uint64_t) { return 10; });
  EXPECT_TRUE(d.run_to_decision());
  EXPECT_EQ(d.dim.dim_profile_ix(), 1);
  EXPECT_EQ(d.dim.profile_ix(), 1);
  EXPECT_EQ(d.dim.tune_state(), DimTuneState::kGoingRight);
  EXPECT_EQ(d.dim.steps_right(), 1);
  EXPECT_EQ(d.dim.tired(), 1);
  // Applied immediately: the next interrupt starts a new window.
  EXPECT_EQ(d.dim.state(), DimState::kStartMeasure);
}

TEST(NetDimTest, IdleQueueStaysParked) {
  DimDriver d([](int, std::uint64_t) { return 0; });
  EXPECT_EQ(d.walk(5), (std::vector<int>{0, 0, 0, 0, 0}));
  EXPECT_EQ(d.dim.tune_state(), DimTuneState::kParkingOnTop);
  EXPECT_EQ(d.dim.profile_ix(), kNetDimDefProfileEqe);
}

TEST(NetDimTest, IncreasingRateWalksRightToEdgeParksThenWalksLeft) {
  // Byte rate grows 20% per window: every comparison is DIM_STATS_BETTER.
  DimDriver d([](int, std::uint64_t n) {
    return static_cast<std::uint64_t>(std::llround(100.0 * std::pow(1.2, static_cast<double>(n))));
  });
  const std::vector<int> ixs = d.walk(5);
  EXPECT_EQ(ixs, (std::vector<int>{1, 2, 3, 4, 4}));
  // DIM_ON_EDGE at index 4 -> dim_park_on_top (history and tired cleared).
  EXPECT_EQ(d.dim.tune_state(), DimTuneState::kParkingOnTop);
  EXPECT_EQ(d.dim.tired(), 0);
  EXPECT_EQ(d.dim.profile(), (DimProfile{256, 256}));
  // Still better than the parking reference -> net_dim_exit_parking heads left (ix != 0) and keeps
  // going left while it keeps improving, until the left edge parks it again; then it exits right.
  EXPECT_EQ(d.walk(6), (std::vector<int>{3, 2, 1, 0, 0, 1}));
  EXPECT_EQ(d.dim.tune_state(), DimTuneState::kGoingRight);
}

TEST(NetDimTest, SteadyRateOscillatesThenParksTired) {
  DimDriver d([](int, std::uint64_t) { return 10; });
  // 1st: better than zero -> right. Then DIM_STATS_SAME turns around at every decision.
  EXPECT_EQ(d.walk(10), (std::vector<int>{1, 0, 1, 0, 1, 0, 1, 0, 1, 0}));
  EXPECT_EQ(d.dim.tired(), 2 * kNetDimNumProfiles);
  // 11th: net_dim_step() -> DIM_TOO_TIRED -> dim_park_tired (index unchanged, tired kept).
  EXPECT_FALSE(d.run_to_decision());
  EXPECT_EQ(d.dim.tune_state(), DimTuneState::kParkingTired);
  EXPECT_EQ(d.dim.tired(), 10);
  EXPECT_EQ(d.dim.steps_left(), 0);
  EXPECT_EQ(d.dim.steps_right(), 0);
  // Parked for `tired` decisions: counts down 9..1 without moving.
  for (int i = 9; i >= 1; --i) {
    EXPECT_FALSE(d.run_to_decision());
    EXPECT_EQ(d.dim.tired(), i);
    EXPECT_EQ(d.dim.tune_state(), DimTuneState::kParkingTired);
  }
  // tired hits 0 -> net_dim_exit_parking: index 0 -> going right, one step.
  EXPECT_TRUE(d.run_to_decision());
  EXPECT_EQ(d.dim.dim_profile_ix(), 1);
  EXPECT_EQ(d.dim.tune_state(), DimTuneState::kGoingRight);
  EXPECT_EQ(d.dim.tired(), 1);
}

// Throughput that peaks at profile 2 (the applied moderation drives the load).
std::uint64_t peak_at_2(int ix, std::uint64_t) {
  static constexpr std::uint64_t kPkts[kNetDimNumProfiles] = {100, 200, 300, 200, 100};
  return kPkts[ix];
}

TEST(NetDimTest, ParksOnTopAtThroughputPeak) {
  DimDriver d(peak_at_2);
  // 0->1 (better than zero); same -> turn left 1->0; worse -> turn right 0->1; better 1->2;
  // better 2->3; worse -> turn left 3->2; better with steps_right > 1 && steps_left == 1 ->
  // dim_on_top -> park at 2; then DIM_STATS_SAME keeps it parked.
  EXPECT_EQ(d.walk(9), (std::vector<int>{1, 0, 1, 2, 3, 2, 2, 2, 2}));
  EXPECT_EQ(d.dim.tune_state(), DimTuneState::kParkingOnTop);
  EXPECT_EQ(d.dim.profile(), (DimProfile{64, 256}));
}

TEST(NetDimTest, ParkedOnTopIgnoresChangesWithinTenPercent) {
  double scale = 1.0;
  DimDriver d([&scale](int ix, std::uint64_t n) {
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(peak_at_2(ix, n)) * scale));
  });
  d.walk(7);
  ASSERT_EQ(d.dim.tune_state(), DimTuneState::kParkingOnTop);
  const DimStats reference = d.dim.prev_stats();
  scale = 0.92;  // -8% bytes and packets, same event rate: DIM_STATS_SAME
  EXPECT_EQ(d.walk(3), (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(d.dim.tune_state(), DimTuneState::kParkingOnTop);
  // While parked on top prev_stats is not refreshed.
  EXPECT_EQ(d.dim.prev_stats(), reference);
  scale = 0.85;  // -15%: significant, exit parking to the left
  EXPECT_TRUE(d.run_to_decision());
  EXPECT_EQ(d.dim.dim_profile_ix(), 1);
  EXPECT_EQ(d.dim.tune_state(), DimTuneState::kGoingLeft);
  EXPECT_NE(d.dim.prev_stats(), reference);
}

TEST(NetDimTest, FewerEventsAtSameThroughputIsBetter) {
  // Same bytes and packets per ms, but higher moderation coalesces more: interrupts are spaced
  // further apart (fewer events per ms) while the byte rate stays constant.
  NetDim dim;
  DimSample s{};
  auto window = [&](Nanos gap) {
    const std::uint64_t before = dim.decisions();
    bool changed = false;
    while (dim.decisions() == before) {
      s.time += gap;
      s.event_ctr += 1;
      const auto pkts = static_cast<std::uint64_t>(gap / 100);  // 10 pkts/us at any gap
      s.pkt_ctr += pkts;
      s.byte_ctr += pkts * 1500;
      changed = dim.on_interrupt(s);
    }
    return changed;
  };
  EXPECT_TRUE(window(us(10)));  // 0 -> 1, going right
  // Each step right halves the event rate: better, keep going right.
  EXPECT_TRUE(window(us(20)));
  EXPECT_EQ(dim.dim_profile_ix(), 2);
  EXPECT_TRUE(window(us(40)));
  EXPECT_EQ(dim.dim_profile_ix(), 3);
  EXPECT_EQ(dim.tune_state(), DimTuneState::kGoingRight);
  // More events per ms at the same throughput: worse -> turn left.
  EXPECT_TRUE(window(us(20)));
  EXPECT_EQ(dim.dim_profile_ix(), 2);
  EXPECT_EQ(dim.tune_state(), DimTuneState::kGoingLeft);
}

}  // namespace
}  // namespace napisim
