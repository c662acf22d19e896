// napisim compare: the same seeds under each scenario (common random numbers: every random stream
// is named and seeded from the run's seed, so seed s of each scenario sees the same arrivals and
// cost draws where the scenarios agree), and each scenario's paired per-seed change against the
// first, with its 95% interval (Student t over the seeds). A change is called when its interval
// excludes zero, as VALIDATION.md calls a published direction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/json.hpp"

namespace napisim::calibrate {

struct CompareOptions {
  std::vector<std::string> scenarios;  // files or names; the first is the baseline (one: run --seeds)
  std::vector<std::int64_t> seeds;     // empty = 1..5
  std::vector<std::string> sets;       // --set applied to every run
  int jobs = 0;                        // parallel simulations; 0 = number of CPUs
  bool explain = false;                // --explain: also each band's stages (run --explain)
  std::string exe;                     // the napisim binary ("" = this process's executable)
};

/// The comparison document: {scenarios, seeds, metrics: [{name, unit, per scenario: mean, ci95,
/// values; per scenario after the first: change (mean, ci95, relative mean and ci95, called)}]}.
/// With explain, a row per percentile band and stage of the latency breakdown follows (metric
/// "latency_breakdown.<band>.<stage>", µs, "stage": true; "minor": true when the stage is under 2%
/// of the band's latency in every scenario), its change called on the difference.
Json run_compare(const CompareOptions& opt);
/// The table `napisim compare` prints.
std::string format_compare(const Json& doc);

}  // namespace napisim::calibrate
