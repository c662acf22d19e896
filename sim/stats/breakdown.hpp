// napisim: latency attribution. Each measured request's latency, cut into consecutive stages
// (wire, ring, NET_RX wait, run-queue wait, ...) whose durations sum to it exactly, accumulated
// per latency-histogram bucket so that the breakdown can be reported for the requests of each
// percentile band ("the p99.9 requests spent 610 us waiting for ksoftirqd").
//
// Stages come from Marks: the times a request passed consecutive points of its path. A mark
// earlier than the one before it (or later than the request's end) is pulled into order and
// counted in clamped(): the stages still sum exactly, and a test can insist none was needed.
//
// A waiting stage may be split by what held up the request meanwhile ("who was running instead"):
// its sub-rows "<stage>[<class>]", one per class the breakdown is built with, sum to it exactly.
// A split that does not sum to its stage (it should not happen) is made to and counted in
// clamped() too.
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
    bool split = false;  // has a sub-row per class
  };
  /// `classes`: the names of the classes split stages are divided into.
  explicit LatencyBreakdown(std::vector<Stage> stages, std::vector<std::string> classes = {});

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
    /// Divides split stage `stage` by class: `ns` holds one value per class, summing to it.
    void by_class(std::size_t stage, const Nanos* ns);
    /// The last stage runs to the end; adds the request to the breakdown.
    void record(std::size_t last_stage);
    /// Each stage's ns, then the split stages' sub-rows (complete after record()).
    const std::vector<Nanos>& stage_ns() const { return ns_; }

   private:
    LatencyBreakdown& b_;
    Nanos begin_, end_, at_;
    std::vector<Nanos>& ns_;
    bool clamped_ = false;
  };

  /// {"stages": [names in path order], "docs": {...}, "splits": ["<stage>[<class>]" of each split
  ///  stage, in order], "bands": [{"band", "from_percentile", "to_percentile", "requests",
  ///  "latency_ns" (mean), "stage_ns": {name: mean}, "split_ns": {sub-row: mean}}], "clamped": n}.
  /// The bands are cut at `percentiles` (as the latency histogram reports them: a band holds the
  /// requests whose histogram bucket lies between two consecutive percentiles' buckets), plus
  /// "all".
  Json report(const std::vector<double>& percentiles) const;
  std::uint64_t count() const { return hist_.count(); }
  std::uint64_t clamped() const { return clamped_; }

 private:
  std::vector<Stage> stages_;
  std::vector<std::string> classes_;
  std::vector<std::size_t> split_at_;  // per stage: its first sub-row's column (split stages only)
  std::vector<std::string> columns_;   // the stages' names, then the sub-rows'
  Histogram hist_;                     // the recorded latencies (percentile edges, requests per bucket)
  std::vector<std::int64_t> sums_;     // per bucket, per column: summed ns
  std::vector<Nanos> scratch_;         // the Cut in progress
  std::uint64_t clamped_ = 0;
};

}  // namespace napisim
