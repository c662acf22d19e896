// napisim: net_dim port (see dim.hpp for sources, version and approximations).
#include "sim/hw/dim.hpp"

#include <array>

#include "sim/core/error.hpp"

namespace napisim {

namespace {

using ProfileTable = std::array<DimProfile, kNetDimNumProfiles>;

// lib/dim/net_dim.c (≈ v6.6): NET_DIM_DEFAULT_RX_CQ_PKTS_FROM_EQE = 256,
// NET_DIM_DEFAULT_TX_CQ_PKTS_FROM_EQE = 128.
constexpr ProfileTable kRxEqe = {{{1, 256}, {8, 256}, {64, 256}, {128, 256}, {256, 256}}};
constexpr ProfileTable kRxCqe = {{{2, 256}, {8, 128}, {16, 64}, {32, 64}, {64, 64}}};
constexpr ProfileTable kTxEqe = {{{1, 128}, {8, 128}, {32, 128}, {64, 128}, {128, 128}}};
constexpr ProfileTable kTxCqe = {{{5, 128}, {8, 64}, {16, 32}, {32, 32}, {64, 32}}};

constexpr std::int64_t kUsecPerMsec = 1000;

// DIV_ROUND_UP on the kernel's (64-bit) long arithmetic, stored into an int field.
int div_round_up_to_int(std::int64_t n, std::int64_t d) {
  return static_cast<int>((n + d - 1) / d);
}

}  // namespace

std::string_view to_string(DimState s) {
  switch (s) {
    case DimState::kStartMeasure:
      return "DIM_START_MEASURE";
    case DimState::kMeasureInProgress:
      return "DIM_MEASURE_IN_PROGRESS";
    case DimState::kApplyNewProfile:
      return "DIM_APPLY_NEW_PROFILE";
  }
  return "?";
}

std::string_view to_string(DimTuneState s) {
  switch (s) {
    case DimTuneState::kParkingOnTop:
      return "DIM_PARKING_ON_TOP";
    case DimTuneState::kParkingTired:
      return "DIM_PARKING_TIRED";
    case DimTuneState::kGoingRight:
      return "DIM_GOING_RIGHT";
    case DimTuneState::kGoingLeft:
      return "DIM_GOING_LEFT";
  }
  return "?";
}

std::string_view to_string(DimStatsCmp s) {
  switch (s) {
    case DimStatsCmp::kWorse:
      return "DIM_STATS_WORSE";
    case DimStatsCmp::kSame:
      return "DIM_STATS_SAME";
    case DimStatsCmp::kBetter:
      return "DIM_STATS_BETTER";
  }
  return "?";
}

// lib/dim/net_dim.c net_dim_get_rx_moderation() / net_dim_get_tx_moderation() (≈ v6.6).
DimProfile net_dim_profile(DimCqMode mode, bool rx, int ix) {
  NAPISIM_ASSERT(ix >= 0 && ix < kNetDimNumProfiles, "net_dim profile index out of range");
  const bool cqe = mode == DimCqMode::kCqe;
  const ProfileTable& t = rx ? (cqe ? kRxCqe : kRxEqe) : (cqe ? kTxCqe : kTxEqe);
  return t[static_cast<std::size_t>(ix)];
}

// include/linux/dim.h IS_SIGNIFICANT_DIFF() (≈ v6.6):
//   ((ref) && (((100UL * abs((val) - (ref))) / (ref)) > 10))
// The difference is taken in 64 bits (the kernel's int subtraction could only wrap for rates
// above 2^31 per ms); ref is converted to unsigned long exactly as the macro does.
bool dim_is_significant_diff(int val, int ref) {
  if (ref == 0) return false;
  const std::int64_t diff = static_cast<std::int64_t>(val) - ref;
  const std::uint64_t abs_diff = static_cast<std::uint64_t>(diff < 0 ? -diff : diff);
  const std::uint64_t ref_ul = static_cast<std::uint64_t>(static_cast<std::int64_t>(ref));
  return (100U * abs_diff) / ref_ul > 10U;
}

// lib/dim/dim.c dim_calc_stats() (≈ v6.6). BIT_GAP(32, end, start) of the u32 counters equals the
// 64-bit difference truncated to 32 bits.
bool dim_calc_stats(const DimSample& start, const DimSample& end, DimStats& out) {
  // "u32 holds up to 71 minutes, should be enough": ktime_us_delta() truncated to u32.
  const auto delta_us = static_cast<std::uint32_t>((end.time - start.time) / kNsPerUs);
  const auto npkts = static_cast<std::uint32_t>(end.pkt_ctr - start.pkt_ctr);
  const auto nbytes = static_cast<std::uint32_t>(end.byte_ctr - start.byte_ctr);
  if (delta_us == 0) return false;
  const std::int64_t d = delta_us;
  out.ppms = div_round_up_to_int(std::int64_t{npkts} * kUsecPerMsec, d);
  out.bpms = div_round_up_to_int(std::int64_t{nbytes} * kUsecPerMsec, d);
  out.epms = div_round_up_to_int(std::int64_t{kDimNEvents} * kUsecPerMsec, d);
  return true;
}

// lib/dim/net_dim.c net_dim_stats_compare() (≈ v6.6).
DimStatsCmp net_dim_stats_compare(const DimStats& curr, const DimStats& prev) {
  if (prev.bpms == 0) return curr.bpms != 0 ? DimStatsCmp::kBetter : DimStatsCmp::kSame;
  if (dim_is_significant_diff(curr.bpms, prev.bpms))
    return curr.bpms > prev.bpms ? DimStatsCmp::kBetter : DimStatsCmp::kWorse;

  if (prev.ppms == 0) return curr.ppms != 0 ? DimStatsCmp::kBetter : DimStatsCmp::kSame;
  if (dim_is_significant_diff(curr.ppms, prev.ppms))
    return curr.ppms > prev.ppms ? DimStatsCmp::kBetter : DimStatsCmp::kWorse;

  if (prev.epms == 0) return DimStatsCmp::kSame;
  if (dim_is_significant_diff(curr.epms, prev.epms))
    return curr.epms < prev.epms ? DimStatsCmp::kBetter : DimStatsCmp::kWorse;

  return DimStatsCmp::kSame;
}

NetDim::NetDim(DimCqMode mode, bool rx)
    : mode_(mode)
    , rx_(rx)
    // net_dim_get_def_{rx,tx}_moderation(): what the driver programs before DIM runs.
    , applied_ix_(mode == DimCqMode::kCqe ? kNetDimDefProfileCqe : kNetDimDefProfileEqe) {}

// lib/dim/dim.c dim_on_top() (≈ v6.6).
bool NetDim::on_top() const {
  switch (tune_state_) {
    case DimTuneState::kParkingOnTop:
    case DimTuneState::kParkingTired:
      return true;
    case DimTuneState::kGoingRight:
      return steps_left_ > 1 && steps_right_ == 1;
    case DimTuneState::kGoingLeft:
      return steps_right_ > 1 && steps_left_ == 1;
  }
  return true;
}

// lib/dim/dim.c dim_turn() (≈ v6.6).
void NetDim::turn() {
  switch (tune_state_) {
    case DimTuneState::kParkingOnTop:
    case DimTuneState::kParkingTired:
      break;
    case DimTuneState::kGoingRight:
      tune_state_ = DimTuneState::kGoingLeft;
      steps_left_ = 0;
      break;
    case DimTuneState::kGoingLeft:
      tune_state_ = DimTuneState::kGoingRight;
      steps_right_ = 0;
      break;
  }
}

// lib/dim/dim.c dim_park_on_top() (≈ v6.6): clears the walk history *and* tired.
void NetDim::park_on_top() {
  steps_right_ = 0;
  steps_left_ = 0;
  tired_ = 0;
  tune_state_ = DimTuneState::kParkingOnTop;
}

// lib/dim/dim.c dim_park_tired() (≈ v6.6): tired is kept (it counts down while parked).
void NetDim::park_tired() {
  steps_right_ = 0;
  steps_left_ = 0;
  tune_state_ = DimTuneState::kParkingTired;
}

// lib/dim/net_dim.c net_dim_step() (≈ v6.6).
DimStepResult NetDim::step() {
  if (tired_ == kNetDimNumProfiles * 2) return DimStepResult::kTooTired;
  switch (tune_state_) {
    case DimTuneState::kParkingOnTop:
    case DimTuneState::kParkingTired:
      break;
    case DimTuneState::kGoingRight:
      if (profile_ix_ == kNetDimNumProfiles - 1) return DimStepResult::kOnEdge;
      ++profile_ix_;
      ++steps_right_;
      break;
    case DimTuneState::kGoingLeft:
      if (profile_ix_ == 0) return DimStepResult::kOnEdge;
      --profile_ix_;
      ++steps_left_;
      break;
  }
  ++tired_;
  return DimStepResult::kStepped;
}

// lib/dim/net_dim.c net_dim_exit_parking() (≈ v6.6): head left unless already at index 0; the
// step's result is ignored, as in the kernel.
void NetDim::exit_parking() {
  tune_state_ = profile_ix_ != 0 ? DimTuneState::kGoingLeft : DimTuneState::kGoingRight;
  step();
}

// lib/dim/net_dim.c net_dim_decision() (≈ v6.6).
bool NetDim::decision(const DimStats& curr) {
  const DimTuneState prev_state = tune_state_;
  const int prev_ix = profile_ix_;
  ++decisions_;

  switch (tune_state_) {
    case DimTuneState::kParkingOnTop:
      if (net_dim_stats_compare(curr, prev_stats_) != DimStatsCmp::kSame) exit_parking();
      break;

    case DimTuneState::kParkingTired:
      --tired_;
      if (tired_ == 0) exit_parking();
      break;

    case DimTuneState::kGoingRight:
    case DimTuneState::kGoingLeft:
      if (net_dim_stats_compare(curr, prev_stats_) != DimStatsCmp::kBetter) turn();
      if (on_top()) {
        park_on_top();
        break;
      }
      switch (step()) {
        case DimStepResult::kOnEdge:
          park_on_top();
          break;
        case DimStepResult::kTooTired:
          park_tired();
          break;
        case DimStepResult::kStepped:
          break;
      }
      break;
  }

  // While parked on top, prev_stats stays the reference the parking was decided against.
  if (prev_state != DimTuneState::kParkingOnTop || tune_state_ != DimTuneState::kParkingOnTop) prev_stats_ = curr;

  return profile_ix_ != prev_ix;
}

// lib/dim/net_dim.c net_dim() (≈ v6.6) plus the driver's work item (e.g. mlx5e_rx_dim_work:
// program net_dim_get_rx_moderation(mode, profile_ix), then state = DIM_START_MEASURE), run
// immediately instead of via schedule_work().
bool NetDim::on_interrupt(const DimSample& now_counters) {
  switch (state_) {
    case DimState::kMeasureInProgress: {
      // BIT_GAP(BITS_PER_TYPE(u16), end.event_ctr, start.event_ctr)
      const auto nevents = static_cast<std::uint16_t>(now_counters.event_ctr - start_sample_.event_ctr);
      if (nevents < kDimNEvents) return false;
      DimStats curr;
      if (!dim_calc_stats(start_sample_, now_counters, curr)) return false;
      if (decision(curr)) {
        // Kernel: state = DIM_APPLY_NEW_PROFILE; schedule_work(). Here the work completes at once:
        // the new moderation is programmed and the state returns to DIM_START_MEASURE.
        applied_ix_ = profile_ix_;
        state_ = DimState::kStartMeasure;
        return true;
      }
      [[fallthrough]];
    }
    case DimState::kStartMeasure:
      // dim_update_sample(): the kernel stamps ktime_get() here, i.e. the time of this call.
      start_sample_ = now_counters;
      state_ = DimState::kMeasureInProgress;
      return false;
    case DimState::kApplyNewProfile:
      // Unreachable with immediate application; the kernel ignores calls while work is pending.
      return false;
  }
  return false;
}

}  // namespace napisim
