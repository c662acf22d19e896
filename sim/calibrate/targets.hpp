// napisim calibrate: the targets file (calibration/README.md), declared once with fields() like a
// scenario's parameters, so its parsing, errors (JSON pointer and expectation), JSON Schema
// (`napisim schema --targets`) and defaults cannot drift apart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/json.hpp"
#include "sim/params/fields.hpp"

namespace napisim::calibrate {

/// Overrides as napisim.run(overrides=...) takes them, {"path": value}, or as --set does,
/// ["path=value", ...]; null is none.
extern const JsonKind kOverrides;
/// A run a relative point is measured against: {"scenario", "overrides"}.
extern const JsonKind kBaselineRun;
/// {cost parameter: {"min", "max", "start"}}: the parameters to fit (sim/kernel/costs.hpp names).
extern const JsonKind kCostBounds;

/// One scenario run: what a point and its baseline name.
struct RunDoc {
  std::string scenario;  // required
  Json overrides;

  template <class V>
  static void fields(V& v) {
    v("scenario", &RunDoc::scenario, "", "Scenario file, relative to the targets file (required)");
    v("overrides", &RunDoc::overrides, "", "Values set on this run after the file's own `sets`", kOverrides);
  }
};

/// The bounds of one fitted cost parameter.
struct BoundsDoc {
  double min = 0;  // required
  double max = 0;  // required
  std::optional<double> start;

  template <class V>
  static void fields(V& v) {
    v("min", &BoundsDoc::min, "", "Lower bound (> 0: the fit is in log space; required)", Range{0, 1e15});
    v("max", &BoundsDoc::max, "", "Upper bound (> min; required)", Range{0, 1e15});
    v("start", &BoundsDoc::start, "", "Starting value (null: the documented default)", Range{0, 1e15});
  }
};

/// One measured point.
struct TargetDoc : RunDoc {
  std::string name;                // "" = the scenario file's stem
  std::string source;              // where the measured value was published
  std::string metric;              // required
  std::optional<double> measured;  // required
  double weight = 1;
  bool fit = true;
  Json baseline;  // null: measured is an absolute value

  template <class V>
  static void fields(V& v) {
    v("name", &TargetDoc::name, "", "Label in the report (default: the scenario file's stem)");
    RunDoc::fields(v);
    v("metric", &TargetDoc::metric, "",
      "Summary path: throughput, latency_p99 (= latency_ns.p99), cpu_us_per_op, mutilate.read.avg, ... (required)");
    v("measured", &TargetDoc::measured, "",
      "Measured value in the summary's units, or the relative change when `baseline` is set (required)");
    v("weight", &TargetDoc::weight, "", "Weight of the point's squared relative error", Range::at_least(0));
    v("fit", &TargetDoc::fit, "", "false: predicted only (reported, not fitted)");
    v("baseline", &TargetDoc::baseline, "", "{scenario, overrides}: `measured` is the change relative to this run",
      kBaselineRun);
    v("source", &TargetDoc::source, "", "Where the measured value was published");
  }
};

/// The whole targets file.
struct TargetsDoc {
  std::string description;
  std::vector<std::int64_t> seeds = {1};
  Json sets;
  Json params;                     // required
  std::vector<TargetDoc> targets;  // required, non-empty
  double prior_weight = 0;
  int max_iterations = 6;
  int max_evaluations = 40;
  double fd_step = 0.05;
  std::string output;

  template <class V>
  static void fields(V& v) {
    v("description", &TargetsDoc::description, "", "Free text");
    v("seeds", &TargetsDoc::seeds, "", "Seeds every point runs with (the same for every parameter set)",
      Range::at_least(0));
    v("sets", &TargetsDoc::sets, "", "Overrides applied to every run, e.g. reduced durations", kOverrides);
    v("params", &TargetsDoc::params, "", "The cost parameters to fit, with their bounds (required)", kCostBounds);
    v("targets", &TargetsDoc::targets, "", "The measured points (required, non-empty)");
    v("prior_weight", &TargetsDoc::prior_weight, "",
      "Weight of the (log p - log p_start) rows that keep weakly identified parameters near their start",
      Range::at_least(0));
    v("max_iterations", &TargetsDoc::max_iterations, "", "Levenberg-Marquardt iteration cap", Range::at_least(0));
    v("max_evaluations", &TargetsDoc::max_evaluations, "", "Parameter-set cap", Range::at_least(1));
    v("fd_step", &TargetsDoc::fd_step, "", "Forward-difference step in log p, in (0, 1)", Range{0, 1});
    v("output", &TargetsDoc::output, "",
      "Where the fitted parameter file goes, relative to this file (empty: only with --out)");
  }
};

/// Parses and checks a targets document: fields() for shapes, types and ranges, then what a field
/// list cannot say (required keys, min < max, start inside the bounds, fd_step exclusive).
/// Throws ConfigError naming the JSON pointer.
TargetsDoc parse_targets_doc(const Json& doc);

/// The JSON Schema of a targets file.
Json targets_schema();

/// One cost parameter to fit: its bounds and its start (the documented default of
/// sim/kernel/costs.hpp when the file gives none); `integral` for the integer costs.
struct FitBounds {
  std::string name;
  double start = 0, min = 0, max = 0;
  bool integral = true;
};

/// The checked entries of TargetsDoc::params (kCostBounds), in the file's order.
std::vector<FitBounds> fit_bounds(const Json& params, const std::string& path = "/params");

/// `--set`-style "path=value" strings of an overrides value (kOverrides).
std::vector<std::string> override_sets(const Json& overrides);

}  // namespace napisim::calibrate
