// napisim: child simulations for calibrate and compare. SimGrid allows one engine per process, so
// every run is a `napisim run FILE --format json --seed S --set ...` child, spawned with
// posix_spawn, its stdout and stderr in temporary files, at most `jobs` at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sim/core/json.hpp"

#include <sys/types.h>

namespace napisim::calibrate {

/// One child run: a scenario (file path or name) with overrides and a seed.
struct Job {
  std::string scenario;
  std::vector<std::string> sets;
  std::int64_t seed = 1;
  std::vector<std::string> args;  // more `napisim run` options (compare --explain: "--explain")
  std::string origin;             // who asked for it, for errors ("/targets/3", "compare: A"); not in key()
  std::string key() const {
    std::string k = scenario + "\n" + std::to_string(seed);
    for (const auto& s : sets)
      k += "\n" + s;
    for (const auto& a : args)
      k += "\n" + a;
    return k;
  }
};

class Runner {
 public:
  /// `exe`: the napisim binary; `jobs`: children at once (at least 1).
  Runner(std::string exe, int jobs);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  int simulations() const { return simulations_; }

  /// The result summary of every job, with the result's "latency_breakdown" in it when the run has
  /// one (memoised: a job already run is not run again). A child that
  /// fails stops the others; exit 2 throws ConfigError naming the job's origin, other failures
  /// std::runtime_error; SIGINT/SIGTERM stop the children and throw interrupt::Interrupted.
  std::vector<const Json*> run(const std::vector<Job>& jobs);

 private:
  pid_t spawn(const Job& job, int slot);

  std::string exe_;
  int jobs_;
  std::filesystem::path tmp_;
  std::map<std::string, Json> done_;
  int simulations_ = 0;
};

/// Student t 0.975 quantile for a sample of n (n - 1 degrees of freedom; ~normal beyond 10).
double t975(std::size_t n);

/// A sample's mean and the half-width of its 95% interval (t975; 0 for fewer than two values).
struct MeanCi {
  double mean = 0, ci95 = 0;
};
MeanCi mean_ci95(const std::vector<double>& xs);

}  // namespace napisim::calibrate
