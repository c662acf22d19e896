// napisim: log-linear (HdrHistogram-style) histogram of non-negative int64 values, e.g. latencies in ns.
//
// Layout follows neper's histo.c (google/neper @ ea5890f: lr_bucket / lr_bucket_lo / lr_bucket_hi) with
// k = kSubBucketBits = 7 instead of neper's 6:
//   top = v >> k;  b = fls64(top);  index = (b == 0) ? v : (b << k) | ((v >> (b - 1)) & (2^k - 1))
// Values below 2^(k+1) get exact, width-1 buckets; a value in [2^(k+b-1), 2^(k+b)) lands in a bucket of
// width 2^(b-1), so every bucket's width is at most v / 2^k. Percentiles report the bucket's inclusive
// upper bound, which is >= the true sample and above it by less than width, i.e. the reported value's
// relative error is < 2^-7 = 0.78% (the design bound is 1%). int64 values need 57 * 128 = 7296 buckets
// (58 KiB), allocated once in the constructor; record() never allocates.
//
// min/max/mean/stddev are exact: Σx is kept in 128-bit integers, Σx² too as long as it fits (it falls
// back to long double only beyond 2^128, e.g. 10^13 samples of 10^12 ns). stddev is neper's and
// netperf's population form sqrt(N·Σx² − (Σx)²) / N.
//
// Percentile rule (neper histo.c histo_all_finalize): the upper bound of the first bucket whose
// cumulative count reaches ceil(p·N/100) (at least 1), clamped into [min, max]. Merge histograms, never
// percentiles (validation-targets.md §4.3).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "sim/core/json.hpp"

namespace napisim {

class Histogram {
 public:
  static constexpr int kSubBucketBits = 7;
  static constexpr std::uint64_t kSubBuckets = std::uint64_t{1} << kSubBucketBits;
  /// Buckets needed for every non-negative int64: fls64((2^63 - 1) >> 7) = 56, so indices < 57 << 7.
  static constexpr std::size_t kNumBuckets = std::size_t{57} << kSubBucketBits;

  Histogram() : buckets_(kNumBuckets, 0) {}

  /// Records value v, n times. Negative values are clamped to 0 and counted in negatives().
  void record(std::int64_t v, std::uint64_t n = 1) {
    if (n == 0) {
      return;
    }
    if (v < 0) {
      negatives_ += n;
      v = 0;
    }
    const std::size_t i = bucket_index(v);
    buckets_[i] += n;
    count_ += n;
    if (v < min_) {
      min_ = v;
    }
    if (v > max_) {
      max_ = v;
    }
    if (i < min_index_) {
      min_index_ = i;
    }
    if (i > max_index_) {
      max_index_ = i;
    }
    const auto uv = static_cast<U128>(static_cast<std::uint64_t>(v));
    sum_ += uv * n;  // v < 2^63, n < 2^64: the product fits
    add_sum_sq(uv * uv, n);
  }

  /// Adds every sample of `other` (same as having recorded them here).
  void merge(const Histogram& other);
  /// Removes the samples of `earlier`, a histogram this one has recorded on top of (a copy taken
  /// before): what remains are the samples since. Counts, mean and stddev stay exact; min and max
  /// become the bounds of the first and last non-empty bucket (to within the bucket width).
  void subtract(const Histogram& earlier);
  /// Empties the histogram (keeps the allocation).
  void reset();

  std::uint64_t count() const { return count_; }
  /// Samples in bucket i (i < kNumBuckets).
  std::uint64_t bucket_count(std::size_t i) const { return buckets_[i]; }
  /// Number of negative values that were clamped to 0.
  std::uint64_t negatives() const { return negatives_; }
  /// Smallest/largest recorded value (after clamping); 0 when empty.
  std::int64_t min() const { return count_ == 0 ? 0 : min_; }
  std::int64_t max() const { return count_ == 0 ? 0 : max_; }
  /// Exact mean (from Σx); 0 when empty.
  double mean() const;
  /// Exact population standard deviation sqrt(N·Σx² − (Σx)²)/N; 0 when empty.
  double stddev() const;
  /// Upper bound of the first bucket whose cumulative count >= ceil(p·N/100), clamped into [min, max].
  /// p is clamped into [0, 100]. Returns 0 when empty.
  std::int64_t percentile(double p) const;
  /// (bucket upper bound clamped into [min, max], cumulative fraction) for every non-empty bucket.
  std::vector<std::pair<std::int64_t, double>> cdf() const;

  /// {"count","negatives","min","max","mean","stddev","sum","sum_sq","sub_bucket_bits","buckets"}.
  /// buckets = [[lower, upper (inclusive), count], ...] for non-empty buckets only. sum and sum_sq are
  /// JSON integers when they fit in uint64, else decimal strings (exact); sum_sq is a float only after
  /// the long double fallback.
  Json to_json() const;
  /// Inverse of to_json(). Throws ConfigError (JSON pointer relative to `j`) on malformed input.
  static Histogram from_json(const Json& j);

  bool operator==(const Histogram& other) const;

  /// Bucket layout, exposed for tests and plotting.
  static constexpr std::size_t bucket_index(std::int64_t v) {
    const auto u = static_cast<std::uint64_t>(v < 0 ? 0 : v);
    const std::uint64_t top = u >> kSubBucketBits;
    if (top == 0) {
      return static_cast<std::size_t>(u);
    }
    const auto b = static_cast<unsigned>(64 - std::countl_zero(top));
    return static_cast<std::size_t>((std::uint64_t{b} << kSubBucketBits) | ((u >> (b - 1)) & (kSubBuckets - 1)));
  }
  /// Smallest value mapped to bucket i (i <= kNumBuckets; i == kNumBuckets gives 2^63 as uint64).
  static constexpr std::uint64_t bucket_lower_u(std::size_t i) {
    if (i < kSubBuckets) {
      return i;
    }
    const auto power = static_cast<unsigned>((i >> kSubBucketBits) - 1);
    return (std::uint64_t{1} << power) * (kSubBuckets + (i & (kSubBuckets - 1)));
  }
  static constexpr std::int64_t bucket_lower(std::size_t i) { return static_cast<std::int64_t>(bucket_lower_u(i)); }
  /// Largest value mapped to bucket i (inclusive).
  static constexpr std::int64_t bucket_upper(std::size_t i) {
    return static_cast<std::int64_t>(bucket_lower_u(i + 1) - 1);
  }

 private:
  __extension__ using U128 = unsigned __int128;

  void add_sum_sq(U128 sq, std::uint64_t n) {
    U128 t = 0;
    U128 s = 0;
    if (!sum_sq_overflow_ && !__builtin_mul_overflow(sq, static_cast<U128>(n), &t) &&
        !__builtin_add_overflow(sum_sq_, t, &s)) {
      sum_sq_ = s;
      return;
    }
    add_sum_sq_slow(sq, n);
  }
  void add_sum_sq_slow(U128 sq, std::uint64_t n);
  long double sum_sq_ld() const;

  std::vector<std::uint64_t> buckets_;
  std::uint64_t count_ = 0;
  std::uint64_t negatives_ = 0;
  std::int64_t min_ = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_ = 0;
  std::size_t min_index_ = kNumBuckets;  // scan range of non-empty buckets; [kNumBuckets, 0] when empty
  std::size_t max_index_ = 0;
  U128 sum_ = 0;
  U128 sum_sq_ = 0;
  long double sum_sq_approx_ = 0;  // used once sum_sq_overflow_ is set
  bool sum_sq_overflow_ = false;
};

}  // namespace napisim
