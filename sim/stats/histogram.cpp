// napisim: log-linear histogram (see histogram.hpp for the layout, error bound and percentile rule).
#include "sim/stats/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/core/error.hpp"

namespace napisim {

namespace {

__extension__ using U128 = unsigned __int128;

constexpr U128 kU64Max = std::numeric_limits<std::uint64_t>::max();

std::string u128_to_string(U128 v) {
  if (v == 0) {
    return "0";
  }
  std::string s;
  while (v != 0) {
    s.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  std::reverse(s.begin(), s.end());
  return s;
}

Json u128_to_json(U128 v) {
  if (v <= kU64Max) {
    return Json(static_cast<std::uint64_t>(v));
  }
  return Json(u128_to_string(v));
}

// Exact 128-bit integer from a JSON unsigned/integer or decimal string; false if it is neither.
bool json_to_u128(const Json& j, U128& out) {
  if (j.is_number_unsigned()) {
    out = j.get<std::uint64_t>();
    return true;
  }
  if (j.is_number_integer()) {
    const auto v = j.get<std::int64_t>();
    if (v < 0) {
      return false;
    }
    out = static_cast<std::uint64_t>(v);
    return true;
  }
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s.empty() || s.size() > 39) {
      return false;
    }
    U128 v = 0;
    for (const char c : s) {
      if (c < '0' || c > '9') {
        return false;
      }
      U128 next = 0;
      if (__builtin_mul_overflow(v, static_cast<U128>(10), &next) ||
          __builtin_add_overflow(next, static_cast<U128>(c - '0'), &v)) {
        return false;
      }
    }
    out = v;
    return true;
  }
  return false;
}

const Json& require(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) {
    throw ConfigError(std::string("/") + key, "missing histogram field");
  }
  return j.at(key);
}

std::uint64_t get_u64(const Json& j, const std::string& path) {
  if (j.is_number_unsigned()) {
    return j.get<std::uint64_t>();
  }
  if (j.is_number_integer() && j.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(j.get<std::int64_t>());
  }
  throw ConfigError(path, "expected a non-negative integer, got " + j.dump());
}

std::int64_t get_i64(const Json& j, const std::string& path) {
  if (j.is_number_integer() && !j.is_number_unsigned()) {
    return j.get<std::int64_t>();
  }
  if (j.is_number_unsigned() && j.get<std::uint64_t>() <= std::uint64_t{std::numeric_limits<std::int64_t>::max()}) {
    return static_cast<std::int64_t>(j.get<std::uint64_t>());
  }
  throw ConfigError(path, "expected an int64 integer, got " + j.dump());
}

}  // namespace

void Histogram::add_sum_sq_slow(U128 sq, std::uint64_t n) {
  if (!sum_sq_overflow_) {
    sum_sq_approx_ = static_cast<long double>(sum_sq_);
    sum_sq_overflow_ = true;
  }
  sum_sq_approx_ += static_cast<long double>(sq) * static_cast<long double>(n);
}

long double Histogram::sum_sq_ld() const {
  return sum_sq_overflow_ ? sum_sq_approx_ : static_cast<long double>(sum_sq_);
}

void Histogram::merge(const Histogram& other) {
  if (other.count_ == 0) {
    return;
  }
  for (std::size_t i = other.min_index_; i <= other.max_index_; ++i) {
    buckets_[i] += other.buckets_[i];
  }
  count_ += other.count_;
  negatives_ += other.negatives_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  min_index_ = std::min(min_index_, other.min_index_);
  max_index_ = std::max(max_index_, other.max_index_);
  sum_ += other.sum_;
  U128 s = 0;
  if (!sum_sq_overflow_ && !other.sum_sq_overflow_ && !__builtin_add_overflow(sum_sq_, other.sum_sq_, &s)) {
    sum_sq_ = s;
  } else {
    sum_sq_approx_ = sum_sq_ld() + other.sum_sq_ld();
    sum_sq_overflow_ = true;
  }
}

void Histogram::subtract(const Histogram& earlier) {
  if (earlier.count_ == 0) {
    return;
  }
  if (earlier.count_ >= count_) {
    reset();
    return;
  }
  for (std::size_t i = earlier.min_index_; i <= earlier.max_index_; ++i) {
    buckets_[i] -= earlier.buckets_[i];
  }
  count_ -= earlier.count_;
  negatives_ -= earlier.negatives_;
  sum_ -= earlier.sum_;
  if (!sum_sq_overflow_ && !earlier.sum_sq_overflow_) {
    sum_sq_ -= earlier.sum_sq_;
  } else {
    sum_sq_approx_ = sum_sq_ld() - earlier.sum_sq_ld();
    sum_sq_overflow_ = true;
  }
  while (min_index_ < max_index_ && buckets_[min_index_] == 0) {
    ++min_index_;
  }
  while (max_index_ > min_index_ && buckets_[max_index_] == 0) {
    --max_index_;
  }
  min_ = std::max(min_, bucket_lower(min_index_));
  max_ = std::min(max_, bucket_upper(max_index_));
}

void Histogram::reset() {
  if (count_ != 0) {
    std::fill(buckets_.begin() + static_cast<std::ptrdiff_t>(min_index_),
              buckets_.begin() + static_cast<std::ptrdiff_t>(max_index_) + 1, 0);
  }
  count_ = 0;
  negatives_ = 0;
  min_ = std::numeric_limits<std::int64_t>::max();
  max_ = 0;
  min_index_ = kNumBuckets;
  max_index_ = 0;
  sum_ = 0;
  sum_sq_ = 0;
  sum_sq_approx_ = 0;
  sum_sq_overflow_ = false;
}

double Histogram::mean() const {
  if (count_ == 0) {
    return 0.0;
  }
  return static_cast<double>(static_cast<long double>(sum_) / static_cast<long double>(count_));
}

double Histogram::stddev() const {
  if (count_ == 0) {
    return 0.0;
  }
  const long double n = static_cast<long double>(count_);
  if (!sum_sq_overflow_) {
    U128 nq = 0;
    U128 s2 = 0;
    if (!__builtin_mul_overflow(static_cast<U128>(count_), sum_sq_, &nq) && !__builtin_mul_overflow(sum_, sum_, &s2)) {
      const U128 n2_var = nq >= s2 ? nq - s2 : 0;  // N²·variance, exact (Cauchy-Schwarz: nq >= s2)
      return static_cast<double>(std::sqrt(static_cast<long double>(n2_var)) / n);
    }
  }
  const long double s = static_cast<long double>(sum_);
  const long double n2_var = n * sum_sq_ld() - s * s;
  return n2_var <= 0 ? 0.0 : static_cast<double>(std::sqrt(n2_var) / n);
}

std::int64_t Histogram::percentile(double p) const {
  if (count_ == 0) {
    return 0;
  }
  if (!(p > 0.0)) {  // also catches NaN
    p = 0.0;
  }
  if (p > 100.0) {
    p = 100.0;
  }
  // p·N/100, minus a 1e-12 relative tolerance so that decimal percentiles such as 99.9 (not exact in
  // binary) are not pushed one rank up when p·N/100 is an integer.
  long double rank = static_cast<long double>(p) * static_cast<long double>(count_) / 100.0L;
  rank -= rank * 1e-12L;
  std::uint64_t target = rank <= 1.0L ? 1 : static_cast<std::uint64_t>(std::ceil(rank));
  target = std::min(target, count_);
  std::uint64_t cum = 0;
  for (std::size_t i = min_index_; i <= max_index_; ++i) {
    cum += buckets_[i];
    if (cum >= target) {
      return std::clamp(bucket_upper(i), min_, max_);
    }
  }
  return max_;  // unreachable: the buckets sum to count_
}

std::vector<std::pair<std::int64_t, double>> Histogram::cdf() const {
  std::vector<std::pair<std::int64_t, double>> out;
  if (count_ == 0) {
    return out;
  }
  std::uint64_t cum = 0;
  const auto n = static_cast<double>(count_);
  for (std::size_t i = min_index_; i <= max_index_; ++i) {
    if (buckets_[i] == 0) {
      continue;
    }
    cum += buckets_[i];
    out.emplace_back(std::clamp(bucket_upper(i), min_, max_), static_cast<double>(cum) / n);
  }
  return out;
}

Json Histogram::to_json() const {
  Json j = Json::object();
  j["count"] = count_;
  j["negatives"] = negatives_;
  j["min"] = min();
  j["max"] = max();
  j["mean"] = mean();
  j["stddev"] = stddev();
  j["sum"] = u128_to_json(sum_);
  j["sum_sq"] = sum_sq_overflow_ ? Json(static_cast<double>(sum_sq_approx_)) : u128_to_json(sum_sq_);
  j["sub_bucket_bits"] = kSubBucketBits;
  Json buckets = Json::array();
  if (count_ != 0) {
    for (std::size_t i = min_index_; i <= max_index_; ++i) {
      if (buckets_[i] != 0) {
        buckets.push_back(Json::array({bucket_lower(i), bucket_upper(i), buckets_[i]}));
      }
    }
  }
  j["buckets"] = std::move(buckets);
  return j;
}

Histogram Histogram::from_json(const Json& j) {
  if (!j.is_object()) {
    throw ConfigError("", "expected a histogram object, got " + j.dump());
  }
  if (j.contains("sub_bucket_bits") && get_i64(j.at("sub_bucket_bits"), "/sub_bucket_bits") != kSubBucketBits) {
    throw ConfigError("/sub_bucket_bits",
                      "expected " + std::to_string(kSubBucketBits) + ", got " + j.at("sub_bucket_bits").dump());
  }
  Histogram h;
  const Json& buckets = require(j, "buckets");
  if (!buckets.is_array()) {
    throw ConfigError("/buckets", "expected an array of [lower, upper, count]");
  }
  for (std::size_t k = 0; k < buckets.size(); ++k) {
    const std::string path = "/buckets/" + std::to_string(k);
    const Json& b = buckets[k];
    if (!b.is_array() || b.size() != 3) {
      throw ConfigError(path, "expected [lower, upper, count], got " + b.dump());
    }
    const std::int64_t lower = get_i64(b[0], path + "/0");
    const std::int64_t upper = get_i64(b[1], path + "/1");
    const std::uint64_t n = get_u64(b[2], path + "/2");
    if (lower < 0) {
      throw ConfigError(path + "/0", "bucket lower bound must be >= 0");
    }
    const std::size_t i = bucket_index(lower);
    if (bucket_lower(i) != lower || bucket_upper(i) != upper) {
      throw ConfigError(path, "[" + std::to_string(lower) + ", " + std::to_string(upper) +
                                  "] is not a bucket of the k=7 log-linear layout");
    }
    if (n == 0) {
      continue;
    }
    h.buckets_[i] += n;
    h.count_ += n;
    h.min_index_ = std::min(h.min_index_, i);
    h.max_index_ = std::max(h.max_index_, i);
  }
  const std::uint64_t count = get_u64(require(j, "count"), "/count");
  if (count != h.count_) {
    throw ConfigError("/count", std::to_string(count) + " does not match the bucket total " + std::to_string(h.count_));
  }
  if (j.contains("negatives")) {
    h.negatives_ = get_u64(j.at("negatives"), "/negatives");
  }
  if (h.count_ != 0) {
    h.min_ = get_i64(require(j, "min"), "/min");
    h.max_ = get_i64(require(j, "max"), "/max");
    if (h.min_ < 0 || h.min_ > h.max_ || bucket_index(h.min_) != h.min_index_ || bucket_index(h.max_) != h.max_index_) {
      throw ConfigError("/min", "min/max are inconsistent with the buckets");
    }
    if (!json_to_u128(require(j, "sum"), h.sum_)) {
      throw ConfigError("/sum", "expected a non-negative integer or decimal string, got " + j.at("sum").dump());
    }
    const Json& sq = require(j, "sum_sq");
    if (sq.is_number_float()) {
      h.sum_sq_overflow_ = true;
      h.sum_sq_approx_ = static_cast<long double>(sq.get<double>());
    } else if (!json_to_u128(sq, h.sum_sq_)) {
      throw ConfigError("/sum_sq", "expected a non-negative integer, decimal string or float, got " + sq.dump());
    }
  }
  return h;
}

bool Histogram::operator==(const Histogram& other) const {
  if (count_ != other.count_ || negatives_ != other.negatives_ || min() != other.min() || max() != other.max() ||
      sum_ != other.sum_ || sum_sq_overflow_ != other.sum_sq_overflow_) {
    return false;
  }
  if (sum_sq_overflow_ ? sum_sq_approx_ != other.sum_sq_approx_ : sum_sq_ != other.sum_sq_) {
    return false;
  }
  return buckets_ == other.buckets_;
}

}  // namespace napisim
