// napisim: latency attribution (see breakdown.hpp).
#include "sim/stats/breakdown.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>

#include "sim/core/error.hpp"

namespace napisim {

LatencyBreakdown::LatencyBreakdown(std::vector<Stage> stages, std::vector<std::string> classes)
    : stages_(std::move(stages))
    , classes_(std::move(classes))
    , split_at_(stages_.size(), 0) {
  for (Stage& st : stages_) {
    st.split = st.split && !classes_.empty();  // without classes nothing is split
    columns_.push_back(st.name);
  }
  for (std::size_t i = 0; i < stages_.size(); ++i) {
    if (!stages_[i].split) continue;
    split_at_[i] = columns_.size();
    for (const std::string& c : classes_)
      columns_.push_back(stages_[i].name + "[" + c + "]");
  }
  sums_.assign(Histogram::kNumBuckets * columns_.size(), 0);
  scratch_.assign(columns_.size(), 0);
}

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

void LatencyBreakdown::Cut::by_class(std::size_t stage, const Nanos* ns) {
  if (b_.classes_.empty()) return;  // a breakdown without classes keeps its stages whole
  NAPISIM_ASSERT(b_.stages_[stage].split, "LatencyBreakdown: by_class() of a stage that is not split");
  std::copy(ns, ns + b_.classes_.size(), ns_.begin() + static_cast<std::ptrdiff_t>(b_.split_at_[stage]));
}

void LatencyBreakdown::Cut::record(std::size_t last_stage) {
  next(last_stage, end_);
  // Each split stage's sub-rows are >= 0 and sum to it: a difference goes to (or comes from) its
  // largest rows.
  for (std::size_t s = 0; s < b_.stages_.size(); ++s) {
    if (!b_.stages_[s].split) continue;
    Nanos* row = &ns_[b_.split_at_[s]];
    const std::size_t n = b_.classes_.size();
    Nanos diff = ns_[s];
    for (std::size_t i = 0; i < n; ++i) {
      if (row[i] < 0) {
        clamped_ = true;
        row[i] = 0;
      }
      diff -= row[i];
    }
    if (diff == 0) continue;
    clamped_ = true;
    while (diff != 0) {
      Nanos* big = std::max_element(row, row + n);
      const Nanos d = diff > 0 ? diff : std::max(diff, -*big);
      *big += d;
      diff -= d;
    }
  }
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
    const std::size_t cols = columns_.size();
    std::vector<double> sum(cols, 0.0);
    for (std::size_t i = lo; i < hi; ++i) {
      const std::uint64_t in = hist_.bucket_count(i);
      if (in == 0) continue;
      n += in;
      for (std::size_t s = 0; s < cols; ++s)
        sum[s] += static_cast<double>(sums_[i * cols + s]);
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
    Json split = Json::object();
    for (std::size_t s = stages_.size(); s < cols; ++s)
      split[columns_[s]] = n > 0 ? sum[s] / static_cast<double>(n) : 0.0;
    b["split_ns"] = split;
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
  Json splits = Json::array();
  for (std::size_t s = stages_.size(); s < columns_.size(); ++s)
    splits.push_back(columns_[s]);
  return Json{{"stages", stages}, {"docs", docs}, {"splits", splits}, {"bands", bands}, {"clamped", clamped_}};
}

}  // namespace napisim
