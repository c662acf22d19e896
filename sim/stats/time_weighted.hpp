// napisim: a time-weighted (sample-and-hold) gauge, e.g. run-queue length, ring occupancy, CPU busy.
//
// The value holds from one update to the next; the integral ∫ value dt is accumulated from start_ on
// every update, so the time average over [start_, now] costs O(1) and nothing is stored per update
// (OMNeT++'s timeavg, ns-3's TimeMinMaxAvgTotalCalculator). reset(now) restarts the integral at `now`
// but keeps the current value: call it at the end of warm-up.
#pragma once

#include "sim/core/error.hpp"
#include "sim/core/time.hpp"

namespace napisim {

class TimeWeighted {
 public:
  explicit TimeWeighted(Nanos start = 0, double initial = 0.0) : value_(initial), start_(start), last_(start) {}

  /// The value becomes `value` at time `now` (now must not go backwards).
  void set(double value, Nanos now) {
    advance(now);
    value_ = value;
  }
  /// The value changes by `delta` at time `now`.
  void add(double delta, Nanos now) {
    advance(now);
    value_ += delta;
  }

  double value() const { return value_; }
  /// Start of the integration window (construction or last reset()).
  Nanos start() const { return start_; }

  /// ∫ value dt over [start_, now], in value·ns.
  double integral(Nanos now) const {
    NAPISIM_ASSERT(now >= last_, "TimeWeighted::integral: time went backwards");
    return integral_ + value_ * static_cast<double>(now - last_);
  }
  /// Time average over [start_, now]; the current value when the window is empty.
  double average(Nanos now) const {
    if (now <= start_) {
      return value_;
    }
    return integral(now) / static_cast<double>(now - start_);
  }
  /// Time average over [t0, now]. The integral is only kept from start_, so t0 must be start()
  /// (the form callers use when they track the window themselves, e.g. t0 = warm-up end).
  double average(Nanos t0, Nanos now) const {
    NAPISIM_ASSERT(t0 == start_, "TimeWeighted::average: t0 must be the start of the window (last reset)");
    return average(now);
  }

  /// Restarts the integral at `now`, keeping the current value.
  void reset(Nanos now) {
    NAPISIM_ASSERT(now >= last_, "TimeWeighted::reset: time went backwards");
    integral_ = 0.0;
    start_ = now;
    last_ = now;
  }

 private:
  void advance(Nanos now) {
    NAPISIM_ASSERT(now >= last_, "TimeWeighted: time went backwards");
    integral_ += value_ * static_cast<double>(now - last_);
    last_ = now;
  }

  double value_;
  double integral_ = 0.0;
  Nanos start_;
  Nanos last_;
};

}  // namespace napisim
