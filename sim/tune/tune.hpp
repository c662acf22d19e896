// napisim tune: search the receive-path strategies and their knobs for a scenario's workload
// (docs/import-and-tune.md).
//
// The search is one implementation, here; it does not run simulations itself. It asks a RunBatch
// callback for batches of runs (a job = overrides of the scenario and a seed) and reads their
// summaries back: the CLI answers with its child-process Runner (sim/calibrate/runner.hpp), Python's
// napisim.tune() with napisim.sweep() (local processes or a Dask cluster, and its result cache).
//
// Successive halving over a fixed candidate grid: rung r runs the surviving candidates on the
// first n_r seeds for d_r simulated seconds (n_r = ceil(S / eta^(R-1-r)) of the S seeds,
// d_r = D / 2^(R-1-r)); a rung keeps whole Pareto layers of (objective, CPU) until it has at least
// 1/eta of its candidates. Every candidate of a rung runs on the same seeds (common random
// numbers: the arrivals and cost draws of seed s are the same for every candidate), so their
// differences are paired. CPU is the server's busy CPUs (summary cpu.busy_cpus: CPU-seconds per
// second over all its CPUs, every class but idle). The search is deterministic: no sampling, and
// the report is a function of the results, which are a function of (scenario, overrides, seed).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sim/core/json.hpp"

namespace napisim::tune {

struct TuneOptions {
  std::string objective = "p99";        // p50, p90, p99, p99.9 or mean latency
  std::string cpu_budget;               // "20%" of the host's CPUs or "6" CPUs; "" = none
  std::vector<std::int64_t> seeds;      // the last rung's seeds; empty = 1..5
  double duration_s = 0;                // the last rung's measured time; 0 = the scenario's
  int eta = 3;                          // each rung keeps about 1/eta of the candidates
  int rungs = 3;                        // successive-halving rungs
  std::vector<std::string> strategies;  // empty = every strategy (strategy_names())
  bool what_if = true;                  // the front again at 0.5x and 2x load
  std::string base_dir = ".";           // the scenario file's directory (the files it names)
};

/// One simulation: overrides of the scenario (JSON pointer -> value) and a seed.
struct Job {
  std::string key;  // unique within a search; the result is looked up by it
  Json sets = Json::object();
  std::int64_t seed = 1;
};

/// Runs the jobs and returns, per job key, the summary metrics asked for (JSON pointers into the
/// run's "summary", e.g. "/latency_ns/p99" -> value).
using RunBatch = std::function<std::map<std::string, std::map<std::string, double>>(
    const std::vector<Job>& jobs, const std::vector<std::string>& metrics)>;

/// The strategy names --strategies takes.
std::vector<std::string> strategy_names();

/// The search. `resolved` is the scenario with every default spelled out (validate_scenario()).
/// Returns the report: options, candidates, rungs, front, recommended (with commands and 95%
/// intervals), what_if. ConfigError for bad options (naming the option).
Json run_tune(const Json& resolved, const TuneOptions& opt, const RunBatch& run);

/// The report as text (tables and the commands).
std::string format_tune(const Json& report);

/// The commands that put a host in the configuration of scenario `config` (a candidate's
/// overrides applied to the resolved scenario, then resolved again: every parameter spelled out): sysctl, ethtool,
/// sysfs writes, netlink (ynl) and, as comments, what only the application can set (EPIOCSPARAMS).
std::vector<std::string> host_commands(const Json& config);

/// `resolved` with the overrides of `sets` applied (JSON pointer -> value).
Json apply_sets(Json resolved, const Json& sets);

/// The candidates of the search for a scenario: [{id, strategy, label, sets}], `sets` including
/// the overrides that hold the client hosts fixed.
Json candidates(const Json& resolved, const std::vector<std::string>& strategies);

/// The overrides that scale the scenario's offered load by `factor` (per workload type: mutilate
/// qps, app rate_rps or flows, trace rate_scale, tcp_rr flows, ...), and how, for the report.
Json load_sets(const Json& resolved, double factor, std::string* how);

}  // namespace napisim::tune
