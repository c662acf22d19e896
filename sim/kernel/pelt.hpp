// napisim: per-entity load tracking (PELT) of a CPU's CFS utilization, util_avg.
//
// Mirrors kernel/sched/pelt.c v6.6 for the util signal of a cfs_rq: decay_load(),
// __accumulate_pelt_segments(), accumulate_sum(), ___update_load_sum() and ___update_load_avg(),
// with kernel/sched/sched-pelt.h's constants (periods of 1024 "us" of 1024 ns, y^32 = 1/2,
// LOAD_AVG_MAX 47742, the runnable_avg_yN_inv table). The sum only moves in whole 1024 ns steps
// and the average only when a period boundary is crossed, as in the kernel.
// Left out: the PELT clock is the host clock (rq_clock_pelt() also leaves out IRQ time and scales
// by capacity and frequency, both at their maximum here); util_est is not modelled.
#pragma once

#include <cstdint>

namespace napisim::pelt {

inline constexpr unsigned kLoadAvgPeriod = 32;                    // LOAD_AVG_PERIOD
inline constexpr std::uint32_t kLoadAvgMax = 47742;               // LOAD_AVG_MAX
inline constexpr std::uint32_t kMinDivider = kLoadAvgMax - 1024;  // PELT_MIN_DIVIDER
inline constexpr int kCapacityShift = 10;                         // SCHED_CAPACITY_SHIFT

/// runnable_avg_yN_inv[n] = y^n * 2^32 (sched-pelt.h).
inline constexpr std::uint32_t kYnInv[kLoadAvgPeriod] = {
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796,
    0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46,
    0xb504f333, 0xb123f581, 0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
    0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
};

/// decay_load(): val * y^n.
constexpr std::uint64_t decay_load(std::uint64_t val, std::uint64_t n) {
  if (n > kLoadAvgPeriod * 63) return 0;
  auto local_n = static_cast<unsigned>(n);
  if (local_n >= kLoadAvgPeriod) {
    val >>= local_n / kLoadAvgPeriod;
    local_n %= kLoadAvgPeriod;
  }
  __extension__ using U128 = unsigned __int128;
  return static_cast<std::uint64_t>((static_cast<U128>(val) * kYnInv[local_n]) >> 32);  // mul_u64_u32_shr
}

/// __accumulate_pelt_segments(): d1 y^p + 1024 \Sum_{n=1}^{p-1} y^n + d3.
constexpr std::uint32_t accumulate_pelt_segments(std::uint64_t periods, std::uint32_t d1, std::uint32_t d3) {
  const auto c1 = static_cast<std::uint32_t>(decay_load(d1, periods));
  const auto c2 = static_cast<std::uint32_t>(kLoadAvgMax - decay_load(kLoadAvgMax, periods) - 1024);
  return c1 + c2 + d3;
}

/// The util part of struct sched_avg.
struct UtilAvg {
  std::uint64_t last_update_time = 0;  // ns, advanced in whole 1024 ns steps
  std::uint32_t util_sum = 0;
  std::uint32_t period_contrib = 0;
  std::uint32_t util_avg = 0;

  /// ___update_load_sum() then, when a period boundary was crossed, ___update_load_avg(): `running`
  /// (cfs_rq->curr set) held from last_update_time to `now`.
  void update(std::uint64_t now, bool running) {
    if (now < last_update_time) {
      last_update_time = now;
      return;
    }
    std::uint64_t delta = (now - last_update_time) >> 10;
    if (!delta) return;
    last_update_time += delta << 10;
    // accumulate_sum()
    auto contrib = static_cast<std::uint32_t>(delta);  // no period crossed: delta < 1024
    delta += period_contrib;
    const std::uint64_t periods = delta / 1024;
    if (periods) {
      util_sum = static_cast<std::uint32_t>(decay_load(util_sum, periods));
      delta %= 1024;
      if (running)
        contrib = accumulate_pelt_segments(periods, 1024 - period_contrib, static_cast<std::uint32_t>(delta));
    }
    period_contrib = static_cast<std::uint32_t>(delta);
    if (running) util_sum += contrib << kCapacityShift;
    if (periods) util_avg = util_sum / (kMinDivider + period_contrib);
  }
};

}  // namespace napisim::pelt
