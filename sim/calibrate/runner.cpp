// napisim: child simulations (see runner.hpp).
#include "sim/calibrate/runner.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "sim/core/error.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/params/json_util.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace napisim::calibrate {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

Runner::Runner(std::string exe, int jobs) : exe_(std::move(exe)), jobs_(std::max(1, jobs)) {
  char tmpl[] = "/tmp/napisim-calibrate-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("calibrate: cannot create a temporary directory");
  tmp_ = tmpl;
}

Runner::~Runner() {
  std::error_code ec;
  fs::remove_all(tmp_, ec);
}

std::vector<const Json*> Runner::run(const std::vector<Job>& jobs) {
  std::vector<const Job*> todo;
  std::set<std::string> queued;
  for (const Job& j : jobs)
    if (!done_.count(j.key()) && queued.insert(j.key()).second) todo.push_back(&j);
  std::map<pid_t, std::pair<const Job*, int>> running;  // pid -> (job, slot)
  std::size_t next = 0;
  int counter = 0;
  while (next < todo.size() || !running.empty()) {
    while (next < todo.size() && static_cast<int>(running.size()) < jobs_) {
      const int slot = counter++;
      running[spawn(*todo[next], slot)] = {todo[next], slot};
      ++next;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) throw std::runtime_error("calibrate: waitpid failed");
    if (interrupt::g_signal) {  // SIGINT/SIGTERM: stop the children, then unwind (temporary files)
      running.erase(pid);
      for (auto& [p, _] : running)
        kill(p, interrupt::g_signal);
      for (std::size_t k = 0; k < running.size(); ++k)
        waitpid(-1, nullptr, 0);
      interrupt::throw_if_signalled();
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const auto [job, slot] = it->second;
    running.erase(it);
    const fs::path out = tmp_ / (std::to_string(slot) + ".out"), err = tmp_ / (std::to_string(slot) + ".err");
    const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (rc != 0) {
      for (auto& [p, _] : running)
        kill(p, SIGTERM);
      for (std::size_t k = 0; k < running.size(); ++k)
        waitpid(-1, nullptr, 0);
      std::string e = read_file(err);
      if (e.size() > 2000) e = e.substr(e.size() - 2000);
      const std::string what = "simulation failed (exit " + std::to_string(rc) + ") for " + job->scenario + " seed " +
                               std::to_string(job->seed) + ": " + e;
      if (rc == 2) throw ConfigError(job->origin, what);
      throw std::runtime_error(what);
    }
    Json result = parse_json_text(read_file(out), "simulation output");
    Json& summary = done_[job->key()] = result.value("summary", Json::object());
    if (result.contains("latency_breakdown")) summary["latency_breakdown"] = std::move(result["latency_breakdown"]);
    ++simulations_;
    fs::remove(out);
    fs::remove(err);
  }
  std::vector<const Json*> res;
  for (const Job& j : jobs)
    res.push_back(&done_.at(j.key()));
  return res;
}

pid_t Runner::spawn(const Job& job, int slot) {
  std::vector<std::string> args = {exe_, "run", job.scenario, "--format", "json", "--seed", std::to_string(job.seed)};
  for (const auto& s : job.sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  args.insert(args.end(), job.args.begin(), job.args.end());
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string out = (tmp_ / (std::to_string(slot) + ".out")).string();
  const std::string err = (tmp_ / (std::to_string(slot) + ".err")).string();
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe_.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("calibrate: cannot start " + exe_ + ": " + std::strerror(rc));
  return pid;
}

double t975(std::size_t n) {
  // Student t 0.975 quantiles for n-1 = 1..10 degrees of freedom (then ~normal).
  static constexpr double t[] = {0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228};
  return n < 2 ? 0 : (n - 1 <= 10 ? t[n - 1] : 1.96);
}

MeanCi mean_ci95(const std::vector<double>& xs) {
  MeanCi s;
  if (xs.empty()) return s;
  for (double x : xs)
    s.mean += x;
  s.mean /= static_cast<double>(xs.size());
  if (xs.size() > 1) {
    double ss = 0;
    for (double x : xs)
      ss += (x - s.mean) * (x - s.mean);
    s.ci95 = t975(xs.size()) * std::sqrt(ss / static_cast<double>(xs.size() - 1)) /
             std::sqrt(static_cast<double>(xs.size()));
  }
  return s;
}

}  // namespace napisim::calibrate
