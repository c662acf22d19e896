// napisim: running a scenario through SimGrid's engine — the only way users run simulations.
//
// SimGrid's s4u::Engine is a process-wide singleton whose clock carries over between engines
// (docs/design.md), so run_scenario() may be called once per process; the CLI runs one scenario
// per process and the Python package runs each in a fresh worker process.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/json.hpp"
#include "sim/core/time.hpp"

namespace napisim {

struct RunOptions {
  std::vector<std::string> sets;     // --set path=value overrides
  std::optional<std::int64_t> seed;  // --seed
  std::string base_dir = ".";        // resolves relative paths inside the scenario
  bool progress = false;             // a progress line on stderr
  // --trace: the timeline of [trace_from_s, trace_from_s + trace_for_s) in simulated seconds
  // (NaN: the warm-up's end, where the measured window starts).
  bool trace = false;
  double trace_from_s = std::numeric_limits<double>::quiet_NaN();
  double trace_for_s = 0.01;
  // --interval: a report every interval_s simulated seconds of the measured window (0: none).
  double interval_s = 0;
  // --explain: latency attribution by stage and percentile band (result["latency_breakdown"]).
  bool explain = false;
};

/// At most this many interval reports in a run (they are kept in the result).
inline constexpr double kMaxIntervals = 100000;

struct Scenario;
struct TimelineOptions;

/// Parses and validates `doc` (with overrides) and returns the resolved scenario; with
/// `scenario_sha256`, also its fingerprint (napisim::scenario_sha256()).
Json validate_scenario(Json doc, const RunOptions& opt, std::string* scenario_sha256 = nullptr);
/// Runs the scenario and returns the result document. Throws ConfigError on bad input and
/// std::logic_error on a second call in the same process. With opt.trace, `trace` receives the
/// timeline (sim/kernel/timeline.hpp).
Json run_scenario(Json doc, const RunOptions& opt, std::string* trace = nullptr);
/// The trace window opt asks for in scenario `s`, checked (ConfigError naming --trace-from/-for).
TimelineOptions trace_window(const RunOptions& opt, const Scenario& s);
/// opt.interval_s in ns, checked against `s` (ConfigError naming --interval); 0: no reports.
Nanos interval_ns(const RunOptions& opt, const Scenario& s);
/// Provenance block shared by results: version, build, SimGrid version, scenario hash (content of
/// the files it names included, not their paths), the files' hashes, seed, run.
Json make_context(const Scenario& s);

}  // namespace napisim
