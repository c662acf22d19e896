// napisim: latency attribution (see breakdown.hpp).
#include "sim/stats/breakdown.hpp"

#include <algorithm>
#include <cstdio>

namespace napisim {

LatencyBreakdown::LatencyBreakdown(std::vector<Stage> stages)
    : stages_(std::move(stages))
    , sums_(Histogram::kNumBuckets * stages_.size(), 0)
    , scratch_(stages_.size(), 0) {}

LatencyBreakdown::Cut::Cut(LatencyBreakdown& b, Nanos begin, Nanos end)
    : b_(b)
    , begin_(begin)
    , end_(std::max(begin, end))
    , at_(begin)
    , ns_(b.scratch_) {
  std::fill(ns_.begin(), ns_.end(), 0);
}

void LatencyBreakdown::Cut::next(std::size_t stage, Nanos t) {
  if (t < at_ || t > end_) {
    clamped_ = true;
    t = std::clamp(t, at_, end_);
  }
  ns_[stage] += t - at_;
  at_ = t;
}

void LatencyBreakdown::Cut::split(std::size_t a, Nanos a_ns, std::size_t b, Nanos t) {
  const Nanos from = at_;
  next(b, t);
  const Nanos first = std::clamp<Nanos>(a_ns, 0, at_ - from);
  ns_[b] -= first;
  ns_[a] += first;
}

void LatencyBreakdown::Cut::record(std::size_t last_stage) {
  next(last_stage, end_);
  const std::size_t i = Histogram::bucket_index(end_ - begin_);
  b_.hist_.record(end_ - begin_);
  std::int64_t* row = &b_.sums_[i * ns_.size()];
  for (std::size_t s = 0; s < ns_.size(); ++s)
    row[s] += ns_[s];
  if (clamped_) ++b_.clamped_;
}

namespace {

std::string pct_name(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "p%g", p);
  return buf;
}

}  // namespace

Json LatencyBreakdown::report(const std::vector<double>& percentiles) const {
  Json stages = Json::array();
  Json docs = Json::object();
  for (const Stage& s : stages_) {
    stages.push_back(s.name);
    docs[s.name] = s.doc;
  }
  std::vector<double> edges;
  for (double p : percentiles)
    if (p > 0 && p < 100) edges.push_back(p);
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  edges.push_back(100);
  Json bands = Json::array();
  auto band = [&](const std::string& name, double from, double to, std::size_t lo, std::size_t hi) {
    // Buckets [lo, hi) of the histogram.
    std::uint64_t n = 0;
    std::vector<double> sum(stages_.size(), 0.0);
    for (std::size_t i = lo; i < hi; ++i) {
      const std::uint64_t in = hist_.bucket_count(i);
      if (in == 0) continue;
      n += in;
      for (std::size_t s = 0; s < stages_.size(); ++s)
        sum[s] += static_cast<double>(sums_[i * stages_.size() + s]);
    }
    Json b = {{"band", name}, {"from_percentile", from}, {"to_percentile", to}, {"requests", n}};
    double total = 0;
    Json per = Json::object();
    for (std::size_t s = 0; s < stages_.size(); ++s) {
      const double mean = n > 0 ? sum[s] / static_cast<double>(n) : 0.0;
      per[stages_[s].name] = mean;
      total += sum[s];
    }
    b["latency_ns"] = n > 0 ? total / static_cast<double>(n) : 0.0;
    b["stage_ns"] = per;
    bands.push_back(b);
  };
  double from = 0;
  std::size_t lo = 0;
  for (double p : edges) {
    const std::size_t hi =
        hist_.count() == 0 ? 0 : (p >= 100 ? Histogram::kNumBuckets : Histogram::bucket_index(hist_.percentile(p)) + 1);
    band(pct_name(from) + "-" + pct_name(p), from, p, lo, std::max(lo, hi));
    lo = std::max(lo, hi);
    from = p;
  }
  band("all", 0, 100, 0, Histogram::kNumBuckets);
  return Json{{"stages", stages}, {"docs", docs}, {"bands", bands}, {"clamped", clamped_}};
}

}  // namespace napisim
