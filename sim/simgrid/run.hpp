// napisim: running a scenario through SimGrid's engine — the only way users run simulations.
//
// SimGrid's s4u::Engine is a process-wide singleton whose clock carries over between engines
// (docs/design.md), so run_scenario() may be called once per process; the CLI runs one scenario
// per process and the Python package runs each in a fresh worker process.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/json.hpp"

namespace napisim {

struct RunOptions {
  std::vector<std::string> sets;     // --set path=value overrides
  std::optional<std::int64_t> seed;  // --seed
  std::string base_dir = ".";        // resolves relative paths inside the scenario
  bool progress = false;             // a progress line on stderr
};

struct Scenario;

/// Parses and validates `doc` (with overrides) and returns the resolved scenario; with
/// `scenario_sha256`, also its fingerprint (napisim::scenario_sha256()).
Json validate_scenario(Json doc, const RunOptions& opt, std::string* scenario_sha256 = nullptr);
/// Runs the scenario and returns the result document. Throws ConfigError on bad input and
/// std::logic_error on a second call in the same process.
Json run_scenario(Json doc, const RunOptions& opt);
/// Provenance block shared by results: version, build, SimGrid version, scenario hash (content of
/// the files it names included, not their paths), the files' hashes, seed, run.
Json make_context(const Scenario& s);

}  // namespace napisim
