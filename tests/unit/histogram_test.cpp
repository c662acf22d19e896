// Tests for the log-linear Histogram (sim/stats/histogram.hpp), the TimeWeighted gauge and
// between_group_share() (sim/stats/grouping.hpp).
#include "sim/stats/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/stats/grouping.hpp"
#include "sim/stats/time_weighted.hpp"

namespace napisim {
namespace {

// A tiny deterministic generator (Knuth's MMIX LCG), so the test data is the same everywhere.
class Lcg {
 public:
  explicit Lcg(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    s_ = s_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return s_ >> 11;  // 53 good bits
  }
  /// Uniform in (0, 1].
  double uniform() { return (static_cast<double>(next()) + 1.0) / 9007199254740992.0; }

 private:
  std::uint64_t s_;
};

enum class Shape { kUniform, kExponential, kPareto, kBimodal, kSmallInts };

std::vector<std::int64_t> make_samples(Shape shape, std::size_t n, std::uint64_t seed) {
  Lcg rng(seed);
  std::vector<std::int64_t> v;
  v.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = rng.uniform();
    double x = 0;
    switch (shape) {
      case Shape::kUniform:
        x = u * 1e6;
        break;
      case Shape::kExponential:
        x = -20000.0 * std::log(u);  // mean 20 µs
        break;
      case Shape::kPareto:
        x = 5000.0 / std::pow(u, 1.0 / 1.2);  // heavy tail, alpha 1.2, xm 5 µs
        break;
      case Shape::kBimodal:
        x = (rng.next() % 10 == 0) ? 2e6 + u * 1e6 : 8000.0 + u * 4000.0;
        break;
      case Shape::kSmallInts:
        x = static_cast<double>(rng.next() % 300);
        break;
    }
    v.push_back(static_cast<std::int64_t>(std::min(x, 4e18)));
  }
  return v;
}

Histogram histogram_of(const std::vector<std::int64_t>& v) {
  Histogram h;
  for (const auto x : v) {
    h.record(x);
  }
  return h;
}

// Percentile p = num/den, so the nearest rank ceil(p·N/100) is computed exactly in integers.
struct Pct {
  std::uint64_t num;
  std::uint64_t den;
};

TEST(HistogramTest, PercentilesWithinOnePercentOfExactSortedSamples) {
  const Pct pcts[] = {{0, 1},  {1, 1},  {10, 1}, {25, 1},   {50, 1},     {75, 1},
                      {90, 1}, {95, 1}, {99, 1}, {999, 10}, {9999, 100}, {100, 1}};
  const Shape shapes[] = {Shape::kUniform, Shape::kExponential, Shape::kPareto, Shape::kBimodal, Shape::kSmallInts};
  std::uint64_t seed = 1;
  for (const Shape shape : shapes) {
    for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{100000}}) {
      auto samples = make_samples(shape, n, seed++);
      const Histogram h = histogram_of(samples);
      std::sort(samples.begin(), samples.end());
      for (const Pct& pc : pcts) {
        const double p = static_cast<double>(pc.num) / static_cast<double>(pc.den);
        const std::uint64_t rank = std::max<std::uint64_t>(1, (pc.num * n + 100 * pc.den - 1) / (100 * pc.den));
        const std::int64_t exact = samples[rank - 1];
        const std::int64_t got = h.percentile(p);
        SCOPED_TRACE(testing::Message() << "shape " << static_cast<int>(shape) << " n " << n << " p " << p);
        EXPECT_GE(got, exact);  // the upper bound of the sample's bucket, clamped to max
        EXPECT_LE(static_cast<double>(got - exact), 0.01 * static_cast<double>(exact));
        if (exact < 256) {
          EXPECT_EQ(got, exact);  // width-1 buckets below 2^(k+1)
        }
      }
      EXPECT_EQ(h.percentile(100), samples.back());
      EXPECT_EQ(h.min(), samples.front());
      EXPECT_EQ(h.max(), samples.back());
    }
  }
}

TEST(HistogramTest, PercentileArgumentIsClampedIntoRange) {
  Histogram h;
  for (int i = 1; i <= 100; ++i) {
    h.record(i);
  }
  EXPECT_EQ(h.percentile(-5), h.percentile(0));
  EXPECT_EQ(h.percentile(250), 100);
  EXPECT_EQ(h.percentile(std::nan("")), 1);
  EXPECT_EQ(h.percentile(50), 50);
  EXPECT_EQ(h.percentile(99.9), 100);
  EXPECT_EQ(h.percentile(99), 99);
}

TEST(HistogramTest, MergeEqualsRecordingEverything) {
  const auto a = make_samples(Shape::kPareto, 20000, 11);
  const auto b = make_samples(Shape::kBimodal, 30000, 12);
  Histogram ha = histogram_of(a);
  const Histogram hb = histogram_of(b);
  Histogram all = histogram_of(a);
  for (const auto x : b) {
    all.record(x);
  }
  ha.merge(hb);
  EXPECT_EQ(ha, all);
  EXPECT_EQ(ha.count(), 50000U);
  for (const double p : {0.0, 50.0, 99.0, 99.99, 100.0}) {
    EXPECT_EQ(ha.percentile(p), all.percentile(p));
  }
  EXPECT_DOUBLE_EQ(ha.mean(), all.mean());
  EXPECT_DOUBLE_EQ(ha.stddev(), all.stddev());

  Histogram empty;
  ha.merge(empty);
  EXPECT_EQ(ha, all);
  empty.merge(all);
  EXPECT_EQ(empty, all);
}

TEST(HistogramTest, BucketLayoutIsContiguousAndWithinRelativeBound) {
  for (std::size_t i = 0; i + 1 < Histogram::kNumBuckets; ++i) {
    ASSERT_EQ(Histogram::bucket_upper(i) + 1, Histogram::bucket_lower(i + 1)) << i;
  }
  for (std::size_t i = 0; i < Histogram::kNumBuckets; ++i) {
    const std::int64_t lo = Histogram::bucket_lower(i);
    const std::int64_t hi = Histogram::bucket_upper(i);
    ASSERT_EQ(Histogram::bucket_index(lo), i);
    ASSERT_EQ(Histogram::bucket_index(hi), i);
    ASSERT_LE(static_cast<double>(hi - lo), static_cast<double>(lo) / 128.0) << i;
  }
  EXPECT_EQ(Histogram::bucket_upper(Histogram::kNumBuckets - 1), std::numeric_limits<std::int64_t>::max());
}

TEST(HistogramTest, BucketEdgesAtZeroOneAndPowersOfTwo) {
  EXPECT_EQ(Histogram::bucket_index(0), 0U);
  EXPECT_EQ(Histogram::bucket_index(1), 1U);
  EXPECT_EQ(Histogram::bucket_index(127), 127U);
  EXPECT_EQ(Histogram::bucket_index(128), 128U);
  EXPECT_EQ(Histogram::bucket_index(255), 255U);
  EXPECT_EQ(Histogram::bucket_index(256), 256U);
  EXPECT_EQ(Histogram::bucket_index(257), 256U);  // first width-2 bucket
  EXPECT_EQ(Histogram::bucket_upper(256), 257);
  for (int j = 8; j <= 62; ++j) {
    const std::int64_t v = std::int64_t{1} << j;
    const std::size_t i = Histogram::bucket_index(v);
    EXPECT_EQ(Histogram::bucket_lower(i), v) << j;
    EXPECT_EQ(Histogram::bucket_upper(i), v + (v >> 7) - 1) << j;
    EXPECT_EQ(Histogram::bucket_index(v - 1), i - 1) << j;
  }
  EXPECT_EQ(Histogram::bucket_index(std::int64_t{1} << 62), 56U << 7);

  Histogram h;
  h.record(0);
  h.record(1);
  h.record(std::int64_t{1} << 62);
  EXPECT_EQ(h.percentile(0), 0);
  EXPECT_EQ(h.percentile(50), 1);
  EXPECT_EQ(h.percentile(100), std::int64_t{1} << 62);  // clamped to max, not the bucket's upper bound
  EXPECT_EQ(h.max(), std::int64_t{1} << 62);
  h.record(std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(h.percentile(100), std::numeric_limits<std::int64_t>::max());
}

TEST(HistogramTest, StddevIsExactPopulationForm) {
  Histogram h;
  for (const int x : {2, 4, 4, 4, 5, 5, 7, 9}) {
    h.record(x);
  }
  EXPECT_DOUBLE_EQ(h.mean(), 5.0);
  EXPECT_DOUBLE_EQ(h.stddev(), 2.0);

  const auto v = make_samples(Shape::kPareto, 50000, 99);
  const Histogram hv = histogram_of(v);
  long double sum = 0;
  for (const auto x : v) {
    sum += static_cast<long double>(x);
  }
  const long double mean = sum / static_cast<long double>(v.size());
  long double ss = 0;
  for (const auto x : v) {
    ss += (static_cast<long double>(x) - mean) * (static_cast<long double>(x) - mean);
  }
  const double two_pass = static_cast<double>(std::sqrt(ss / static_cast<long double>(v.size())));
  EXPECT_NEAR(hv.mean(), static_cast<double>(mean), 1e-9 * static_cast<double>(mean));
  EXPECT_NEAR(hv.stddev(), two_pass, 1e-12 * two_pass);
}

TEST(HistogramTest, HugeValuesKeepMeanAndStddevFinite) {
  Histogram h;
  const std::int64_t big = std::int64_t{1} << 62;
  h.record(big, 20);  // Σx² = 20·2^124 exceeds 128 bits: long double fallback
  EXPECT_DOUBLE_EQ(h.mean(), static_cast<double>(big));
  EXPECT_DOUBLE_EQ(h.stddev(), 0.0);
  h.record(0, 20);
  EXPECT_DOUBLE_EQ(h.mean(), static_cast<double>(big) / 2);
  EXPECT_NEAR(h.stddev(), static_cast<double>(big) / 2, 1e-9 * static_cast<double>(big));
}

TEST(HistogramTest, RecordWithMultiplicityEqualsRepeatedRecord) {
  Histogram a;
  Histogram b;
  a.record(12345, 1000);
  for (int i = 0; i < 1000; ++i) {
    b.record(12345);
  }
  EXPECT_EQ(a, b);
  a.record(5, 0);  // no-op
  EXPECT_EQ(a, b);
}

TEST(HistogramTest, NegativeValuesAreClampedAndCounted) {
  Histogram h;
  h.record(-5);
  h.record(-1, 2);
  h.record(10);
  EXPECT_EQ(h.negatives(), 3U);
  EXPECT_EQ(h.count(), 4U);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.percentile(50), 0);
}

TEST(HistogramTest, EmptyHistogramReportsZeros) {
  const Histogram h;
  EXPECT_EQ(h.count(), 0U);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.mean(), 0.0);
  EXPECT_EQ(h.stddev(), 0.0);
  EXPECT_EQ(h.percentile(50), 0);
  EXPECT_TRUE(h.cdf().empty());
  const Json j = h.to_json();
  EXPECT_EQ(j["count"], 0);
  EXPECT_TRUE(j["buckets"].empty());
  EXPECT_EQ(Histogram::from_json(j), h);
}

TEST(HistogramTest, ResetEmptiesButKeepsWorking) {
  Histogram h = histogram_of(make_samples(Shape::kExponential, 1000, 5));
  h.reset();
  EXPECT_EQ(h, Histogram());
  h.record(300);
  EXPECT_EQ(h.percentile(50), 300);
  EXPECT_EQ(h.count(), 1U);
}

TEST(HistogramTest, CdfIsMonotoneAndEndsAtOne) {
  const Histogram h = histogram_of(make_samples(Shape::kBimodal, 10000, 8));
  const auto cdf = h.cdf();
  ASSERT_FALSE(cdf.empty());
  for (std::size_t i = 1; i < cdf.size(); ++i) {
    EXPECT_GT(cdf[i].first, cdf[i - 1].first);
    EXPECT_GT(cdf[i].second, cdf[i - 1].second);
  }
  EXPECT_DOUBLE_EQ(cdf.back().second, 1.0);
  EXPECT_EQ(cdf.back().first, h.max());
}

TEST(HistogramTest, JsonRoundTripIsExact) {
  Histogram h = histogram_of(make_samples(Shape::kPareto, 30000, 21));
  h.record(-3);
  h.record(std::int64_t{1} << 40, 100000);  // Σx² > 2^64: written as a decimal string
  const Json j = h.to_json();
  EXPECT_TRUE(j["sum_sq"].is_string());
  EXPECT_EQ(j["sub_bucket_bits"], 7);
  const Histogram back = Histogram::from_json(Json::parse(j.dump()));
  EXPECT_EQ(back, h);
  EXPECT_EQ(back.to_json(), j);
  EXPECT_EQ(back.percentile(99.9), h.percentile(99.9));
  EXPECT_DOUBLE_EQ(back.stddev(), h.stddev());
  for (const auto& b : j["buckets"]) {
    EXPECT_LE(b[0].get<std::int64_t>(), b[1].get<std::int64_t>());
  }
}

TEST(HistogramTest, FromJsonRejectsMalformedInput) {
  Histogram h;
  h.record(1000);
  Json j = h.to_json();
  Json bad_bounds = j;
  bad_bounds["buckets"][0][1] = 1001;  // the bucket of 1000 is [1000, 1003]
  EXPECT_THROW(Histogram::from_json(bad_bounds), ConfigError);
  Json bad_count = j;
  bad_count["count"] = 2;
  EXPECT_THROW(Histogram::from_json(bad_count), ConfigError);
  Json bad_k = j;
  bad_k["sub_bucket_bits"] = 6;
  EXPECT_THROW(Histogram::from_json(bad_k), ConfigError);
  EXPECT_THROW(Histogram::from_json(Json::array()), ConfigError);
  try {
    Json no_buckets = j;
    no_buckets.erase("buckets");
    Histogram::from_json(no_buckets);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/buckets");
  }
}

TEST(TimeWeightedTest, IntegratesSampleAndHold) {
  TimeWeighted g(0, 0.0);
  g.set(2.0, 100);  // 0 over [0, 100)
  g.add(1.0, 300);  // 2 over [100, 300) = 400
  g.set(0.0, 400);  // 3 over [300, 400) = 300
  EXPECT_DOUBLE_EQ(g.value(), 0.0);
  EXPECT_DOUBLE_EQ(g.integral(400), 700.0);
  EXPECT_DOUBLE_EQ(g.integral(1000), 700.0);
  EXPECT_DOUBLE_EQ(g.average(1000), 0.7);
  EXPECT_DOUBLE_EQ(g.average(0, 1000), 0.7);
}

TEST(TimeWeightedTest, ResetRestartsTheWindowAndKeepsTheValue) {
  TimeWeighted g(0, 5.0);
  g.add(-1.0, 1000);
  g.reset(2000);  // warm-up ends: value 4 held
  EXPECT_EQ(g.start(), 2000);
  EXPECT_DOUBLE_EQ(g.value(), 4.0);
  EXPECT_DOUBLE_EQ(g.integral(2000), 0.0);
  EXPECT_DOUBLE_EQ(g.average(2000), 4.0);  // empty window: the current value
  g.set(8.0, 3000);
  EXPECT_DOUBLE_EQ(g.average(4000), 6.0);
  EXPECT_DOUBLE_EQ(g.average(2000, 4000), 6.0);
}

}  // namespace
}  // namespace napisim

namespace napisim {
namespace {

// An interval's histogram is the cumulative one minus a copy taken at its start: its counts,
// percentiles, mean and stddev are those of the samples recorded since.
TEST(HistogramTest, SubtractLeavesTheSamplesRecordedSinceTheCopy) {
  Histogram h, since;
  for (std::int64_t v = 1; v <= 1000; ++v)
    h.record(v * 1000);
  const Histogram copy = h;
  for (std::int64_t v = 1; v <= 500; ++v) {
    h.record(v * 7);
    since.record(v * 7);
  }
  h.subtract(copy);
  EXPECT_EQ(h.count(), since.count());
  // The same bucket (exact but for the clamp into [min, max], which is known to a bucket's width).
  for (double p : {0.0, 50.0, 90.0, 99.0, 99.9, 100.0})
    EXPECT_EQ(Histogram::bucket_index(h.percentile(p)), Histogram::bucket_index(since.percentile(p))) << p;
  EXPECT_EQ(h.percentile(50), since.percentile(50));
  EXPECT_DOUBLE_EQ(h.mean(), since.mean());
  EXPECT_DOUBLE_EQ(h.stddev(), since.stddev());
  EXPECT_EQ(h.min(), since.min());  // 7 and 3500: exact buckets and bucket bounds agree here
  EXPECT_LE(h.max(), Histogram::bucket_upper(Histogram::bucket_index(since.max())));
  h.subtract(h);
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.percentile(50), 0);
}

// Hand-computed one-way ANOVA: epsilon^2 = 1 - (SS_w / (n - k)) / (SS_t / (n - 1)).
TEST(GroupingTest, BetweenGroupShareIsEpsilonSquared) {
  // Groups {1, 2} and {4, 5}: mean 3, SS_t = 4 + 1 + 1 + 4 = 10, SS_w = 0.5 + 0.5 = 1;
  // 1 - (1 / 2) / (10 / 3) = 0.85.
  EXPECT_NEAR(between_group_share({1, 2, 4, 5}, {0, 0, 1, 1}), 0.85, 1e-12);
  // Each group a constant: all of the spread is between the groups.
  EXPECT_DOUBLE_EQ(between_group_share({1, 1, 3, 3}, {0, 0, 1, 1}), 1.0);
  // Both groups alike ({1, 3} and {1, 3}): SS_w = SS_t = 4, 1 - 2 / (4 / 3) = -0.5, clamped to 0.
  EXPECT_DOUBLE_EQ(between_group_share({1, 3, 1, 3}, {0, 0, 1, 1}), 0.0);
  // Any keys: {1, 2} and {4, 5} as groups 0 and 3 are two groups (k = 2).
  EXPECT_NEAR(between_group_share({1, 2, 4, 5}, {0, 0, 3, 3}), 0.85, 1e-12);
  // No spread, or as many groups as values: nothing to attribute.
  EXPECT_DOUBLE_EQ(between_group_share({2, 2, 2}, {0, 1, 1}), 0.0);
  EXPECT_DOUBLE_EQ(between_group_share({1, 2, 3}, {0, 1, 2}), 0.0);
  EXPECT_DOUBLE_EQ(between_group_share({}, {}), 0.0);
}

}  // namespace
}  // namespace napisim
