// napisim: deterministic randomness (docs/design.md "Hot-path rules").
//
// Results must be byte-identical across runs, machines and standard libraries, so everything here is
// fully specified: the engine is xoshiro256** seeded through splitmix64 (Blackman & Vigna,
// https://prng.di.unimi.it/), and every distribution is implemented in-house (std:: distributions
// differ between libstdc++, libc++ and MSVC). Only <cmath> log/exp/log1p/sqrt/erfc are used; they
// are identical for a given libm (glibc), which is what "across machines" means in CI.
//
// Streams are named after entities ("nic0/rxq3/arrivals") and derived from (seed, run, name), as in
// ns-3's AssignStreams and OMNeT++'s RNG mapping: adding a stream never perturbs existing ones.
//
// Hot path: Rng, EmpiricalCdf::sample and Distribution::sample are inline and allocation-free.
// Parsing and validation (allocation, exceptions) live in rng.cpp and run at setup only.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/json.hpp"

namespace napisim {

// ---------------------------------------------------------------------------------------------------
// Hashing and mixing
// ---------------------------------------------------------------------------------------------------

/// splitmix64 (Vigna, https://prng.di.unimi.it/splitmix64.c): advances `state` and returns the next
/// output. Used to seed xoshiro and to derive stream seeds.
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Pure mixing function: one splitmix64 step from state `x` (a bijection on 64-bit values).
constexpr std::uint64_t mix64(std::uint64_t x) {
  return splitmix64(x);
}

/// 64-bit FNV-1a of the bytes of `s`: a stable, platform-independent name hash (unlike std::hash).
constexpr std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : s) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// ---------------------------------------------------------------------------------------------------
// Rng: xoshiro256** plus the distributions napisim needs
// ---------------------------------------------------------------------------------------------------

/// The 256-layer ziggurat of the standard normal's right half (Marsaglia & Tsang, "The Ziggurat
/// Method for Generating Random Variables", J. Stat. Softw. 5(8), 2000): layer i is the rectangle
/// [0, x[i]] x [f(x[i]), f(x[i+1])] of area kArea, f(x) = exp(-x^2/2); layer 0 is the base strip,
/// whose part beyond x[1] = r is the tail. Built once at startup from r and the area (rng.cpp).
struct NormalZiggurat {
  static constexpr int kLayers = 256;
  static constexpr double kR = 3.6541528853610088;   // x[1], the tail's start
  static constexpr double kArea = 0.00492867323399;  // each layer's area (V)
  std::array<double, kLayers + 1> x{};               // layer widths, decreasing; x[0] = V / f(r), x[256] = 0
  std::array<double, kLayers + 1> f{};               // f(x[i])
  NormalZiggurat();
};
extern const NormalZiggurat kNormalZiggurat;

/// xoshiro256** 1.0 (Blackman & Vigna, https://prng.di.unimi.it/xoshiro256starstar.c), a small fast
/// engine with 256 bits of state. Obtain one from RngRoot::stream(); never share one between entities.
class Rng {
 public:
  using State = std::array<std::uint64_t, 4>;

  /// Reference seeding: the four state words are the first four splitmix64 outputs from `seed`.
  explicit Rng(std::uint64_t seed) {
    for (auto& w : s_)
      w = splitmix64(seed);
  }
  /// Engine with an explicit state (tests, known-answer vectors). The state must not be all zero.
  static Rng from_state(const State& s) {
    NAPISIM_ASSERT(s[0] | s[1] | s[2] | s[3], "xoshiro256** state must not be all zero");
    Rng r(0);
    r.s_ = s;
    return r;
  }
  const State& state() const { return s_; }

  /// Next raw 64-bit output.
  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform double in [0, 1) with 53 random bits (multiples of 2^-53).
  double uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  /// Uniform double in [a, b).
  double uniform(double a, double b) { return a + (b - a) * uniform01(); }

  /// Unbiased integer in [0, n), n > 0 (Lemire, "Fast random integer generation in an interval", 2019).
  std::uint64_t uniform_int(std::uint64_t n) {
    NAPISIM_ASSERT(n > 0, "uniform_int(n) needs n > 0");
    U128 m = static_cast<U128>(next_u64()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n
      while (low < threshold) {
        m = static_cast<U128>(next_u64()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  /// True with probability p (p <= 0: never, p >= 1: always). Always consumes exactly one draw.
  bool bernoulli(double p) { return uniform01() < p; }

  /// Exponential with the given mean (inverse transform; 1 - u is in (0, 1], so the result is finite).
  double exponential(double mean) { return -mean * std::log1p(-uniform01()); }

  /// Normal(mu, sigma) by the ziggurat method (NormalZiggurat): one 64-bit draw in ~99% of calls.
  double normal(double mu, double sigma) { return mu + sigma * standard_normal(); }

  /// exp(Normal(mu, sigma)): mu and sigma are the parameters of the underlying normal.
  double lognormal(double mu, double sigma) { return std::exp(normal(mu, sigma)); }

  /// Pareto type I with scale xm > 0 and shape alpha > 0: P(X > x) = (xm / x)^alpha for x >= xm.
  double pareto(double xm, double alpha) { return xm * std::exp(-std::log1p(-uniform01()) / alpha); }

 private:
  __extension__ using U128 = unsigned __int128;

  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  double standard_normal() {
    const NormalZiggurat& z = kNormalZiggurat;
    for (;;) {
      // Independent bits of one draw: the layer (8 low bits), the sign (bit 8), the position (53 high).
      const std::uint64_t b = next_u64();
      const auto i = static_cast<std::size_t>(b & 0xff);
      const double sign = (b & 0x100) ? -1.0 : 1.0;
      const double x = static_cast<double>(b >> 11) * 0x1.0p-53 * z.x[i];
      if (x < z.x[i + 1]) return sign * x;  // inside the layer's part wholly under the curve
      if (i == 0) {
        // The tail beyond r (Marsaglia 1964): r + e1/r, accepted when 2 e2 > (e1/r)^2.
        double t = 0.0;
        double e = 0.0;
        do {
          t = -std::log1p(-uniform01()) / NormalZiggurat::kR;
          e = -std::log1p(-uniform01());
        } while (2.0 * e < t * t);
        return sign * (NormalZiggurat::kR + t);
      }
      // The wedge between the curve and the layer's right edge.
      if (z.f[i] + uniform01() * (z.f[i + 1] - z.f[i]) < std::exp(-0.5 * x * x)) return sign * x;
    }
  }

  State s_{};
};

/// Lognormal(mu, sigma) by its inverse CDF, for the hot path (one draw, no libm call in ~99.8% of
/// samples): F^-1 is tabulated at the kCells + 1 cell boundaries u = k / kCells and interpolated
/// linearly inside the cell the uniform falls in; in the two outer cells (the tails, probability
/// 1 / kCells each) the exact quantile is computed. Every cell keeps exactly its probability, so
/// the CDF is exact at the boundaries and off by a fraction of one cell (< 1e-3) in between.
class LognormalQuantiles {
 public:
  static constexpr int kCells = 1024;
  LognormalQuantiles(double mu, double sigma);

  double sample(Rng& r) const {
    // u = uniform01()'s 53 bits m * 2^-53; its cell k = floor(u * kCells) is m's top 10 bits and
    // the position in the cell u * kCells - k is the other 43 (both exact, so the result is the
    // same as computing them in floating point, without the conversions).
    static_assert(kCells == 1 << 10);
    const std::uint64_t m = r.next_u64() >> 11;
    const auto k = static_cast<std::size_t>(m >> 43);
    if (k - 1 >= static_cast<std::size_t>(kCells - 2)) [[unlikely]]
      return quantile(static_cast<double>(m) * 0x1.0p-53);
    const double frac = static_cast<double>(m & ((std::uint64_t{1} << 43) - 1)) * 0x1.0p-43;
    return q_[k] + frac * (q_[k + 1] - q_[k]);
  }
  /// exp(mu + sigma * Phi^-1(u)), computed (setup and tails).
  double quantile(double u) const;

 private:
  double mu_, sigma_;
  std::vector<double> q_;  // q_[k] = F^-1(k / kCells), k = 1 .. kCells - 1
};

/// Phi^-1(p) of the standard normal, for 0 < p < 1 (Phi(z) = erfc(-z / sqrt 2) / 2): Newton's method
/// on ln Phi, which converges monotonically from below; the upper half by symmetry.
double normal_quantile(double p);

/// Root of all streams of one run: stream seeds depend only on (seed, run, name).
///   root = mix64(seed), run_key = mix64(root ^ run), stream seed = mix64(run_key ^ fnv1a64(name)).
class RngRoot {
 public:
  RngRoot(std::uint64_t seed, std::uint64_t run) : seed_(seed), run_(run), run_key_(mix64(mix64(seed) ^ run)) {}

  /// The stream for entity `name`, e.g. "nic0/rxq3/arrivals". Const: creating or drawing from a stream
  /// never affects any other stream.
  Rng stream(std::string_view name) const { return Rng(mix64(run_key_ ^ fnv1a64(name))); }

  std::uint64_t seed() const { return seed_; }
  std::uint64_t run() const { return run_; }

 private:
  std::uint64_t seed_;
  std::uint64_t run_;
  std::uint64_t run_key_;
};

// ---------------------------------------------------------------------------------------------------
// EmpiricalCdf: a piecewise-linear CDF, e.g. a measured packet-size or service-time distribution
// ---------------------------------------------------------------------------------------------------

/// Built from points (value, cumulative probability). Values and probabilities are non-decreasing,
/// probabilities lie in [0, 1] and the last one is 1 (within 1e-9). The CDF is linear between points;
/// a first probability p0 > 0 is a point mass p0 at the first value. Sampling is inverse transform.
class EmpiricalCdf {
 public:
  struct Point {
    double value;
    double cum_prob;
  };

  /// Validates and throws ConfigError; `path` is the JSON pointer of the points array, and errors name
  /// the offending element ("<path>/3/1").
  explicit EmpiricalCdf(const std::vector<Point>& points, const std::string& path = "");

  /// One draw (exactly one uniform01()).
  double sample(Rng& rng) const {
    const double u = rng.uniform01();
    const auto it = std::lower_bound(probs_.begin(), probs_.end(), u);  // first prob >= u; exists as u < 1
    const auto i = static_cast<std::size_t>(it - probs_.begin());
    if (i == 0) return values_[0];
    const double p0 = probs_[i - 1];
    const double v0 = values_[i - 1];
    return v0 + (values_[i] - v0) * ((u - p0) / (probs_[i] - p0));
  }

  double mean() const { return mean_; }
  std::vector<Point> points() const;

 private:
  friend class Distribution;
  EmpiricalCdf() = default;  // empty placeholder inside non-empirical Distributions; never sampled

  std::vector<double> values_;
  std::vector<double> probs_;  // last is exactly 1
  double mean_ = 0.0;
};

// ---------------------------------------------------------------------------------------------------
// Distribution: the JSON-configured value distribution used by workloads
// ---------------------------------------------------------------------------------------------------

/// A non-negative random quantity (sizes, inter-arrival times, service times) configured in JSON:
///   5                                                    (bare number: constant)
///   {"type": "constant", "value": x}
///   {"type": "uniform", "min": a, "max": b}              [a, b)
///   {"type": "exponential", "mean": m}
///   {"type": "normal", "mean": m, "stddev": s, "min": lo} clamped at lo (default 0): max(lo, N(m, s))
///   {"type": "lognormal", "mean": m, "stddev": s}        arithmetic mean and stddev of the lognormal
///   {"type": "pareto", "scale": xm, "shape": alpha}      mean is infinite for alpha <= 1
///   {"type": "empirical", "points": [[value, cum_prob], ...]}
/// All parameters are finite and non-negative (scale, shape, exponential/lognormal mean: > 0), so
/// every sample is finite and >= 0. Units are the caller's (the field name carries them).
class Distribution {
 public:
  enum class Kind { kConstant, kUniform, kExponential, kNormal, kLognormal, kPareto, kEmpirical };

  /// Constant 0.
  Distribution() = default;

  /// Parses and validates; throws ConfigError naming the offending JSON pointer under `path`.
  static Distribution parse(const Json& j, const std::string& path);
  /// The canonical object form (never a bare number; "normal" always carries "min"). parse(to_json())
  /// gives an identical distribution.
  Json to_json() const;
  /// JSON Schema (draft 2020-12) fragment: {"oneOf": [...]} with one branch per form.
  static Json schema();

  // Convenience constructors for C++ defaults and tests; validated like parse().
  static Distribution constant(double value);
  static Distribution uniform(double min, double max);
  static Distribution exponential(double mean);
  static Distribution normal(double mean, double stddev, double min = 0.0);
  static Distribution lognormal(double mean, double stddev);
  static Distribution pareto(double scale, double shape);

  Kind kind() const { return kind_; }
  /// "constant", "uniform", ... as in the JSON "type" field.
  std::string_view type_name() const;

  /// One draw. Hot path: inline, allocation-free.
  double sample(Rng& rng) const {
    switch (kind_) {
      case Kind::kConstant:
        return a_;
      case Kind::kUniform:
        return rng.uniform(a_, b_);
      case Kind::kExponential:
        return rng.exponential(a_);
      case Kind::kNormal:
        return std::max(c_, rng.normal(a_, b_));
      case Kind::kLognormal:
        return rng.lognormal(mu_, sigma_);
      case Kind::kPareto:
        return rng.pareto(a_, b_);
      case Kind::kEmpirical:
        return cdf_.sample(rng);
    }
    return a_;
  }

  /// Exact mean of what sample() returns (normal: of the clamped variable; pareto alpha <= 1: +inf).
  double mean() const;

 private:
  Kind kind_ = Kind::kConstant;
  // Parameters as written in JSON: constant {value}, uniform {min, max}, exponential {mean},
  // normal {mean, stddev, min}, lognormal {mean, stddev}, pareto {scale, shape}.
  double a_ = 0.0;
  double b_ = 0.0;
  double c_ = 0.0;
  double mu_ = 0.0;     // lognormal: parameters of the underlying normal
  double sigma_ = 0.0;  //
  EmpiricalCdf cdf_;    // empty unless kind_ == kEmpirical
};

}  // namespace napisim
