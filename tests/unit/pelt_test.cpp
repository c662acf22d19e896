// PELT (sim/kernel/pelt.hpp) against values computed by hand from kernel/sched/pelt.c's formulas:
// y = 2^(-1/32), periods of 1024 x 1024 ns, LOAD_AVG_MAX 47742, divider 46718 + period_contrib.
#include "sim/kernel/pelt.hpp"

#include <cstdint>

#include <gtest/gtest.h>

namespace napisim {
namespace {

constexpr std::uint64_t kPeriodNs = 1024 * 1024;

TEST(PeltTest, DecayLoadUsesTheKernelTable) {
  // 1024 * 0xfa83b2da / 2^32 = 1002.06: one period of full contribution, one period later.
  EXPECT_EQ(pelt::decay_load(1024, 1), 1002u);
  // 32 periods halve exactly, then the table's y^0 = 0xffffffff / 2^32 takes one off:
  // 47742 >> 1 = 23871 -> 23870; 2^40 over 64 periods: 2^38 - 2^38 / 2^32 = 2^38 - 64.
  EXPECT_EQ(pelt::decay_load(pelt::kLoadAvgMax, 32), 23870u);
  EXPECT_EQ(pelt::decay_load(1ULL << 40, 64), (1ULL << 38) - 64);
  // Beyond 63 half-lives everything is gone.
  EXPECT_EQ(pelt::decay_load(~0ULL, 32 * 63 + 1), 0u);
  EXPECT_GT(pelt::decay_load(~0ULL, 32 * 62), 0u);
}

TEST(PeltTest, AccumulatedSegmentsOfWholePeriods) {
  // d1 y^p + 1024 (y + .. + y^(p-1)) + d3, the last two as LOAD_AVG_MAX - LOAD_AVG_MAX y^p - 1024.
  // p = 1: 1002 + (47742 - 46718 - 1024) = 1002.
  EXPECT_EQ(pelt::accumulate_pelt_segments(1, 1024, 0), 1002u);
  // p = 32: 511 + 47742 - 23870 - 1024 = 23359, half of the 46718 a saturated sum reaches.
  EXPECT_EQ(pelt::accumulate_pelt_segments(32, 1024, 0), 23359u);
  // d3 is this period's part, undecayed.
  EXPECT_EQ(pelt::accumulate_pelt_segments(1, 1024, 300), 1302u);
}

TEST(PeltTest, UtilRisesHalfwayInOneHalfLifeAndHalvesInTheNext) {
  pelt::UtilAvg u;
  // Running for one period from empty: util_sum = 1002 << 10, util_avg = 1026048 / 46718 = 21.
  u.update(kPeriodNs, true);
  EXPECT_EQ(u.util_sum, 1002u << 10);
  EXPECT_EQ(u.period_contrib, 0u);
  EXPECT_EQ(u.util_avg, 21u);

  // Running 32 periods from empty in one update: 23359 << 10 over 46718 = 512 exactly.
  pelt::UtilAvg v;
  v.update(32 * kPeriodNs, true);
  EXPECT_EQ(v.util_avg, 512u);
  // Then idle for 32 periods: the sum halves (23919616 -> 11959807), util_avg 255.
  v.update(64 * kPeriodNs, false);
  EXPECT_EQ(v.util_sum, 11959807u);
  EXPECT_EQ(v.util_avg, 255u);
}

TEST(PeltTest, SaturatesAtFullCapacity) {
  pelt::UtilAvg u;
  for (std::uint64_t p = 1; p <= 400; ++p)
    u.update(p * kPeriodNs, true);
  EXPECT_EQ(u.util_avg, 1024u);
  u.update(432 * kPeriodNs, false);
  EXPECT_EQ(u.util_avg, 512u);
}

TEST(PeltTest, MovesInWholeStepsAndAveragesOnlyAtPeriodBoundaries) {
  pelt::UtilAvg u;
  // Less than one 1024 ns step: nothing happens, not even the clock.
  u.update(1023, true);
  EXPECT_EQ(u.last_update_time, 0u);
  EXPECT_EQ(u.util_sum, 0u);
  // 1.5 steps: one step is accounted, the clock keeps the remainder for the next update.
  u.update(1536, true);
  EXPECT_EQ(u.last_update_time, 1024u);
  EXPECT_EQ(u.util_sum, 1u << 10);
  EXPECT_EQ(u.period_contrib, 1u);
  EXPECT_EQ(u.util_avg, 0u);  // no period boundary crossed yet
  // Half a period more: the sum grows, the average still waits for the boundary.
  u.update(512 * 1024, true);
  EXPECT_EQ(u.util_sum, 512u << 10);
  EXPECT_EQ(u.util_avg, 0u);
  // The boundary: 512 << 10 decays once (524288 * y = 513053), plus d1 = 512 decayed once (501).
  u.update(kPeriodNs, true);
  EXPECT_EQ(u.util_sum, 513053u + (501u << 10));
  EXPECT_EQ(u.util_avg, (513053u + (501u << 10)) / 46718u);
}

}  // namespace
}  // namespace napisim
