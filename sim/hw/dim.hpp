// napisim: net_dim, the kernel's Dynamic Interrupt Moderation state machine.
//
// Port of lib/dim/net_dim.c, lib/dim/dim.c and include/linux/dim.h as of Linux ≈ v6.6 (i.e. with
// 162bd18eb55a "linux/dim: Do nothing if no time delta between samples", v6.4, and the
// divide-by-zero guard in IS_SIGNIFICANT_DIFF, 2022). Used by mlx5, bnxt, virtio-net, ...
//
// How a driver uses it (mlx5e_handle_rx_dim, ≈ v6.6): at the end of each NAPI poll that re-arms the
// IRQ it calls net_dim() with *cumulative* counters (events, packets, bytes) and ktime_get(). Every
// DIM_NEVENTS (64) events net_dim computes rates against the sample taken at the window start and
// runs net_dim_decision(); if the profile index changed it sets DIM_APPLY_NEW_PROFILE and schedules
// dim->work, which reprograms the CQ moderation and sets DIM_START_MEASURE. While the work is
// pending net_dim ignores calls.
//
// Approximation: napisim applies the new moderation immediately (the work item runs with zero
// latency), so on_interrupt() goes straight to DIM_START_MEASURE and the next call starts a window.
//
// Initial state: drivers kzalloc() struct dim, so profile_ix = 0, tune_state = DIM_PARKING_ON_TOP,
// state = DIM_START_MEASURE and prev_stats = 0, while the CQ is programmed with
// net_dim_get_def_{rx,tx}_moderation(), i.e. index NET_DIM_DEF_PROFILE_{EQE,CQE} = 1. NetDim keeps
// both: profile_ix()/profile() are the *applied* moderation (starts at index 1), dim_profile_ix()
// is the algorithm's dim->profile_ix (starts at 0). They coincide after the first change. The first
// decision with traffic compares against zero prev_stats, reports "better", exits parking to the
// right and steps 0 -> 1, which the kernel reports as a change (and re-applies profile 1).
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/core/time.hpp"

namespace napisim {

/// include/linux/dim.h DIM_NEVENTS: events per measurement window.
inline constexpr int kDimNEvents = 64;
/// lib/dim/net_dim.c NET_DIM_PARAMS_NUM_PROFILES.
inline constexpr int kNetDimNumProfiles = 5;
/// lib/dim/net_dim.c NET_DIM_DEF_PROFILE_EQE / NET_DIM_DEF_PROFILE_CQE.
inline constexpr int kNetDimDefProfileEqe = 1;
inline constexpr int kNetDimDefProfileCqe = 1;

/// Cumulative counters at one interrupt (struct dim_sample). The kernel keeps event_ctr as u16 and
/// pkt_ctr/byte_ctr as u32, and takes gaps modulo those widths (BIT_GAP); NetDim does the same, so
/// callers may pass full 64-bit counters or counters that already wrap at 16/32 bits.
struct DimSample {
  std::uint64_t event_ctr = 0;
  std::uint64_t pkt_ctr = 0;
  std::uint64_t byte_ctr = 0;
  Nanos time = 0;
};

/// struct dim_cq_moder without cq_period_mode: CQ timer (usec) and packet-count threshold.
struct DimProfile {
  int usec = 0;
  int pkts = 0;
  friend bool operator==(const DimProfile&, const DimProfile&) = default;
};

/// DIM_CQ_PERIOD_MODE_START_FROM_EQE / _CQE: whether the CQ timer restarts on each completion.
enum class DimCqMode : std::uint8_t { kEqe = 0, kCqe = 1 };

/// struct dim_stats (ppms, bpms, epms; the RDMA-only cpms/cpe_ratio are omitted).
struct DimStats {
  int ppms = 0;  ///< packets per msec
  int bpms = 0;  ///< bytes per msec
  int epms = 0;  ///< events per msec
  friend bool operator==(const DimStats&, const DimStats&) = default;
};

/// enum dim_state.
enum class DimState : std::uint8_t { kStartMeasure, kMeasureInProgress, kApplyNewProfile };
/// enum dim_tune_state.
enum class DimTuneState : std::uint8_t { kParkingOnTop, kParkingTired, kGoingRight, kGoingLeft };
/// enum dim_stats_state (net_dim_stats_compare result).
enum class DimStatsCmp : std::uint8_t { kWorse, kSame, kBetter };
/// enum dim_step_result (net_dim_step result).
enum class DimStepResult : std::uint8_t { kStepped, kTooTired, kOnEdge };

std::string_view to_string(DimState s);
std::string_view to_string(DimTuneState s);
std::string_view to_string(DimStatsCmp s);

/// lib/dim/net_dim.c rx_profile[] / tx_profile[] (≈ v6.6), via net_dim_get_{rx,tx}_moderation().
/// ix must be in [0, kNetDimNumProfiles) (asserted).
DimProfile net_dim_profile(DimCqMode mode, bool rx, int ix);

/// include/linux/dim.h IS_SIGNIFICANT_DIFF(val, ref) (≈ v6.6): ref != 0 and the relative
/// difference, in integer percent, is strictly more than 10.
bool dim_is_significant_diff(int val, int ref);

/// lib/dim/dim.c dim_calc_stats() (≈ v6.6). Gaps use the kernel's counter widths (u32 packets and
/// bytes, BIT_GAP); delta_us = (end.time - start.time) / 1000 as u32; rates are rounded up and
/// epms uses DIM_NEVENTS, not the measured event count. Returns false (out untouched) when
/// delta_us == 0.
bool dim_calc_stats(const DimSample& start, const DimSample& end, DimStats& out);

/// lib/dim/net_dim.c net_dim_stats_compare() (≈ v6.6): bpms (higher better), then ppms (higher
/// better), then epms (lower better); each level only decides on a significant difference.
DimStatsCmp net_dim_stats_compare(const DimStats& curr, const DimStats& prev);

/// One struct dim plus the driver's applied moderation.
class NetDim {
 public:
  explicit NetDim(DimCqMode mode = DimCqMode::kEqe, bool rx = true);

  /// lib/dim/net_dim.c net_dim() (≈ v6.6). Call once per interrupt (end of the NAPI poll that
  /// re-arms the IRQ) with cumulative counters. Returns true iff net_dim_decision() changed the
  /// profile index; the new moderation is applied immediately (see header comment).
  bool on_interrupt(const DimSample& now_counters);

  /// The moderation currently applied to the CQ.
  DimProfile profile() const { return net_dim_profile(mode_, rx_, applied_ix_); }
  /// Index of the applied moderation (starts at NET_DIM_DEF_PROFILE_*).
  int profile_ix() const { return applied_ix_; }

  // Algorithm state, for tests and debugging.
  int dim_profile_ix() const { return profile_ix_; }
  DimState state() const { return state_; }
  DimTuneState tune_state() const { return tune_state_; }
  int steps_left() const { return steps_left_; }
  int steps_right() const { return steps_right_; }
  int tired() const { return tired_; }
  const DimStats& prev_stats() const { return prev_stats_; }
  const DimSample& start_sample() const { return start_sample_; }
  /// Number of net_dim_decision() runs so far.
  std::uint64_t decisions() const { return decisions_; }
  DimCqMode mode() const { return mode_; }
  bool rx() const { return rx_; }

 private:
  bool decision(const DimStats& curr);  // net_dim_decision()
  DimStepResult step();                 // net_dim_step()
  void exit_parking();                  // net_dim_exit_parking()
  bool on_top() const;                  // dim_on_top()
  void turn();                          // dim_turn()
  void park_on_top();                   // dim_park_on_top()
  void park_tired();                    // dim_park_tired()

  DimCqMode mode_;
  bool rx_;
  // struct dim, zero-initialised as drivers kzalloc() it.
  DimState state_ = DimState::kStartMeasure;
  DimStats prev_stats_{};
  DimSample start_sample_{};
  int profile_ix_ = 0;
  DimTuneState tune_state_ = DimTuneState::kParkingOnTop;
  int steps_right_ = 0;
  int steps_left_ = 0;
  int tired_ = 0;
  // Driver side.
  int applied_ix_;
  std::uint64_t decisions_ = 0;
};

}  // namespace napisim
