// napisim: latency attribution. Each measured request's latency, cut into consecutive stages
// (wire, ring, NET_RX wait, run-queue wait, ...) whose durations sum to it exactly, accumulated
// per latency-histogram bucket so that the breakdown can be reported for the requests of each
// percentile band ("the p99.9 requests spent 610 us waiting for ksoftirqd").
//
// Stages come from Marks: the times a request passed consecutive points of its path. A mark
// earlier than the one before it (or later than the request's end) is pulled into order and
// counted in clamped(): the stages still sum exactly, and a test can insist none was needed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/json.hpp"
#include "sim/core/time.hpp"
#include "sim/stats/histogram.hpp"

namespace napisim {

class LatencyBreakdown {
 public:
  struct Stage {
    std::string name;  // "<host>.<stage>" or "wire.<direction>"
    std::string doc;
  };
  explicit LatencyBreakdown(std::vector<Stage> stages);

  std::size_t num_stages() const { return stages_.size(); }
  const std::vector<Stage>& stages() const { return stages_; }

  /// Cuts one request, from `begin` to `end`, into stages. Call next(stage, t) for the point that
  /// ends each stage, in path order (a stage never named gets 0), then record().
  class Cut {
   public:
    Cut(LatencyBreakdown& b, Nanos begin, Nanos end);
    /// Stage `stage` lasts from the previous point to `t` (clamped into [previous point, end]).
    void next(std::size_t stage, Nanos t);
    /// Splits the time from the previous point to `t` between stage `a`, which gets at most
    /// `a_ns` of it, and stage `b`, which gets the rest.
    void split(std::size_t a, Nanos a_ns, std::size_t b, Nanos t);
    /// The last stage runs to the end; adds the request to the breakdown.
    void record(std::size_t last_stage);
    /// Each stage's ns (complete after record()).
    const std::vector<Nanos>& stage_ns() const { return ns_; }

   private:
    LatencyBreakdown& b_;
    Nanos begin_, end_, at_;
    std::vector<Nanos>& ns_;
    bool clamped_ = false;
  };

  /// {"stages": [names in path order], "docs": {...}, "bands": [{"band", "from_percentile",
  ///  "to_percentile", "requests", "latency_ns" (mean), "stage_ns": {name: mean}}], "clamped": n}.
  /// The bands are cut at `percentiles` (as the latency histogram reports them: a band holds the
  /// requests whose histogram bucket lies between two consecutive percentiles' buckets), plus
  /// "all".
  Json report(const std::vector<double>& percentiles) const;
  std::uint64_t count() const { return hist_.count(); }
  std::uint64_t clamped() const { return clamped_; }

 private:
  std::vector<Stage> stages_;
  Histogram hist_;                  // the recorded latencies (percentile edges, requests per bucket)
  std::vector<std::int64_t> sums_;  // per bucket, per stage: summed ns
  std::vector<Nanos> scratch_;      // the Cut in progress
  std::uint64_t clamped_ = 0;
};

}  // namespace napisim
