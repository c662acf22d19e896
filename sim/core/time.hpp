// napisim: simulated time.
//
// Time is int64 nanoseconds everywhere in the host model (docs/design.md "Hot-path rules"); it is
// converted to SimGrid's double seconds only in sim/simgrid/. 2^63 ns is 292 years.
#pragma once

#include <cstdint>
#include <limits>

namespace napisim {

using Nanos = std::int64_t;

inline constexpr Nanos kNever = std::numeric_limits<Nanos>::max();
inline constexpr Nanos kNsPerUs = 1000;
inline constexpr Nanos kNsPerMs = 1000 * 1000;
inline constexpr Nanos kNsPerSec = 1000 * 1000 * 1000;

constexpr Nanos us(std::int64_t v) {
  return v * kNsPerUs;
}
constexpr Nanos ms(std::int64_t v) {
  return v * kNsPerMs;
}
constexpr Nanos sec(std::int64_t v) {
  return v * kNsPerSec;
}

/// Seconds (double) to nanoseconds, rounded to nearest: used for scenario durations given in s.
constexpr Nanos from_seconds(double s) {
  const double ns = s * 1e9;
  return static_cast<Nanos>(ns < 0 ? ns - 0.5 : ns + 0.5);
}
constexpr double to_seconds(Nanos t) {
  return static_cast<double>(t) * 1e-9;
}

}  // namespace napisim
