// napisim calibrate: fits named CPU cost parameters (sim/kernel/costs.hpp) to measured points.
//
// A targets file lists measured points (scenario + overrides + summary metric + measured value +
// weight) and the cost parameters to fit with their bounds; see calibration/README.md. Each
// evaluation of the residuals runs `napisim run --format json` child processes (SimGrid allows one
// engine per process), -j at a time, with the same seeds for every parameter set (common random
// numbers), and the fit is fit_bounded_log() (Eigen Levenberg-Marquardt in log space).
#pragma once

#include <string>
#include <vector>

#include "sim/core/json.hpp"

namespace napisim::calibrate {

struct CalibrateOptions {
  std::string targets_file;
  int jobs = 0;                     // parallel simulations; 0 = number of CPUs
  bool dry_run = false;             // only print the residuals of the starting parameters
  std::string out;                  // includable parameter file ("" = the targets file's "output")
  std::string report;               // full report JSON ("" = out with .report.json)
  int max_iterations = -1;          // -1 = the targets file's value
  std::vector<std::string> sets;    // extra --set applied to every run (after the targets file's)
  std::vector<std::int64_t> seeds;  // empty = the targets file's
  std::string exe;                  // the napisim binary to run ("" = this process's executable)
};

/// Runs the calibration (or dry run); prints tables on stdout and returns the report document.
/// Throws ConfigError (JSON pointer into the targets file) on bad input or a failing simulation.
Json run_calibration(const CalibrateOptions& opt);

/// A value from a result summary by path: "throughput", "latency_ns.p99.9" (keys containing dots
/// are matched whole), or the aliases latency_pNN -> latency_ns.pNN, cpu_us_per_op ->
/// cpu.cpu_us_per_op, cpu_busy_pct -> cpu.busy_pct. Returns false when absent or not a number.
bool summary_metric(const Json& summary, const std::string& metric, double* out);

}  // namespace napisim::calibrate
