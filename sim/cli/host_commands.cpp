// napisim import-host and napisim tune (see host_commands.hpp).
#include "sim/cli/host_commands.hpp"

#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "sim/calibrate/runner.hpp"
#include "sim/core/error.hpp"
#include "sim/hostimport/host_import.hpp"
#include "sim/output/writers.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simgrid/run.hpp"
#include "sim/tune/tune.hpp"

#include <unistd.h>

namespace napisim::cli {

namespace fs = std::filesystem;

struct HostCommands {
  CLI::App* import = nullptr;
  CLI::App* tune = nullptr;
  hostimport::ImportOptions imp;
  std::string imp_out;
  std::string scenario;
  tune::TuneOptions opt;
  std::string seeds, strategies, format = "text", out;
  std::vector<std::string> sets;
  int jobs = 0;
  bool no_what_if = false;
};

namespace {

// An output file is checked before the work that fills it, so a bad path costs nothing.
void check_output_file(const std::string& path, const std::string& option) {
  const fs::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  if (path.empty() || path.back() == '/' || fs::is_directory(p))
    throw ConfigError(option, "expected a file path, got '" + path + "'");
  if (!fs::is_directory(dir)) throw ConfigError(option, "not a directory: '" + dir + "'");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) throw ConfigError(option, "cannot write to directory '" + dir + "'");
}

void write_output(const std::string& path, const std::string& text, const std::string& option) {
  try {
    output::write_file_atomic(path, text);
  } catch (const std::runtime_error& e) {
    throw ConfigError(option, e.what());
  }
}

std::vector<std::int64_t> parse_seeds(const std::string& text) {
  std::vector<std::int64_t> seeds;
  std::stringstream ss(text);
  for (std::string tok; std::getline(ss, tok, ',');) {
    std::int64_t v = -1;
    const auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (tok.empty() || ec != std::errc() || p != tok.data() + tok.size() || v < 0 || v > kMaxSeed)
      throw ConfigError(
          "--seeds", "expected comma-separated integers in [0, " + std::to_string(kMaxSeed) + "], got '" + tok + "'");
    seeds.push_back(v);
  }
  return seeds;
}

int cmd_import(HostCommands& c) {
  if (!c.imp_out.empty()) check_output_file(c.imp_out, "--out");
  const fs::path out_dir = c.imp_out.empty() ? fs::current_path() : fs::absolute(c.imp_out).parent_path();
  if (!c.imp.trace.empty()) {
    // The scenario names the trace relative to where it is written, as scenarios name their files.
    std::error_code ec;
    const fs::path rel = fs::relative(fs::absolute(c.imp.trace), out_dir, ec);
    c.imp.trace_ref = ec || rel.empty() ? fs::absolute(c.imp.trace).string() : rel.string();
  }
  const hostimport::ImportResult r = hostimport::import_host(c.imp);
  for (const std::string& n : r.notes)
    std::fprintf(stderr, "napisim: import-host: note: %s\n", n.c_str());
  RunOptions ro;
  ro.base_dir = out_dir.string();
  try {
    (void)validate_scenario(r.scenario, ro);
  } catch (const ConfigError& e) {
    throw ConfigError("import-host", std::string("the imported host is outside what napisim models: ") + e.what());
  }
  const std::string text = r.scenario.dump(2) + "\n";
  if (c.imp_out.empty())
    std::fwrite(text.data(), 1, text.size(), stdout);
  else
    write_output(c.imp_out, text, "--out");
  return 0;
}

int cmd_tune(HostCommands& c) {
  if (c.jobs < 0)
    throw ConfigError("-j", "expected a number of parallel simulations >= 0, got " + std::to_string(c.jobs));
  if (c.format != "text" && c.format != "json")
    throw ConfigError("--format", "expected text or json, got \"" + c.format + "\"");
  if (!c.out.empty()) check_output_file(c.out, "--out");
  if (!c.seeds.empty()) c.opt.seeds = parse_seeds(c.seeds);
  std::stringstream ss(c.strategies);
  for (std::string s; std::getline(ss, s, ',');)
    if (!s.empty()) c.opt.strategies.push_back(s);
  c.opt.what_if = !c.no_what_if;
  if (c.opt.duration_s < 0) throw ConfigError("--duration", "expected a time in s > 0");

  const std::string path = find_scenario_file(c.scenario);
  RunOptions ro;
  ro.sets = c.sets;
  if (!path.empty()) ro.base_dir = fs::absolute(path).parent_path().string();
  const Json doc = path.empty() ? default_scenario() : load_json_file(path);
  const Json resolved = validate_scenario(doc, ro);
  c.opt.base_dir = ro.base_dir;

  const int jobs = c.jobs > 0 ? c.jobs : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  calibrate::Runner runner(fs::canonical("/proc/self/exe").string(), jobs);
  const tune::RunBatch batch = [&](const std::vector<tune::Job>& js, const std::vector<std::string>& metrics) {
    std::vector<calibrate::Job> cj;
    for (const tune::Job& j : js) {
      calibrate::Job k;
      k.scenario = c.scenario.empty() ? "quickstart" : c.scenario;
      k.sets = c.sets;
      for (const auto& [ptr, v] : j.sets.items())
        k.sets.push_back(ptr + "=" + v.dump());
      k.seed = j.seed;
      k.origin = "tune: " + j.key;
      cj.push_back(std::move(k));
    }
    const std::vector<const Json*> res = runner.run(cj);
    std::map<std::string, std::map<std::string, double>> out;
    for (std::size_t i = 0; i < js.size(); ++i)
      for (const std::string& m : metrics) {
        const Json::json_pointer p(m);
        if (res[i]->contains(p) && res[i]->at(p).is_number()) out[js[i].key][m] = res[i]->at(p).get<double>();
      }
    return out;
  };
  const auto t0 = std::chrono::steady_clock::now();
  const Json report = tune::run_tune(resolved, c.opt, batch);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!c.out.empty()) write_output(c.out, report.dump(2) + "\n", "--out");
  const std::string text = c.format == "json" ? report.dump(2) + "\n" : tune::format_tune(report);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fprintf(stderr, "napisim: tune: %d simulations in %.1f s wall, %d at a time\n", runner.simulations(), wall,
               jobs);
  return 0;
}

}  // namespace

std::shared_ptr<HostCommands> add_host_commands(CLI::App& app) {
  auto c = std::make_shared<HostCommands>();
  auto* im = c->import = app.add_subcommand(
      "import-host", "Write a scenario whose server is this machine, or the host whose files --from DIR holds");
  im->add_option("--from", c->imp.from_dir,
                 "Directory of files collected on another host (layout: docs/import-and-tune.md; "
                 "tools/collect-host.sh writes it)");
  im->add_option("--dev", c->imp.devices,
                 "Network device to import (repeatable; default: every device with a bus device)");
  im->add_option("--napi-get", c->imp.napi_get,
                 "JSON of `ynl --family netdev --dump napi-get --output-json` (per-NAPI settings and IRQs)");
  im->add_option("--name", c->imp.name, "Scenario name (default: imported)");
  im->add_option("--out", c->imp_out, "Write the scenario here (atomically) instead of stdout");
  im->add_option("--trace", c->imp.trace, "Workload: replay this request trace (neper --log-rtt or CSV)");
  im->add_option("--rate", c->imp.rate_rps, "Workload without a trace: open-loop requests/s (default 10000)");
  im->add_option("--request-size", c->imp.request_size, "Request bytes: a number or a distribution (JSON)");
  im->add_option("--response-size", c->imp.response_size, "Response bytes: a number or a distribution (JSON)");
  im->add_option("--service-ns", c->imp.service_ns, "Server CPU per request, ns: a number or a distribution (JSON)");
  im->add_option("--flows", c->imp.flows, "Client connections (default 64)");
  im->add_option("--threads", c->imp.threads, "Server worker threads (default: one per CPU taking a queue IRQ)");

  auto* t = c->tune =
      app.add_subcommand("tune",
                         "Search the receive-path strategies for a scenario: Pareto front of tail latency vs CPU, a "
                         "recommendation as host commands, and the front at 0.5x and 2x load");
  t->add_option("scenario", c->scenario, "Scenario file or name (napisim list-scenarios)")->required();
  t->add_option("--objective", c->opt.objective, "Latency to minimise: p50, p90, p99 (default), p99.9 or mean");
  t->add_option("--cpu-budget", c->opt.cpu_budget, "CPU the recommendation may use: 20% of the host's CPUs, or 4 CPUs");
  t->add_option("--seeds", c->seeds, "Seeds of the last rung, comma-separated (default 1,2,3,4,5)");
  t->add_option("--duration", c->opt.duration_s, "Measured seconds of the last rung (default: the scenario's)");
  t->add_option("--strategies", c->strategies,
                "Comma-separated subset: softirq, threaded, defer, suspend, busy_poll, threaded_busy_poll, rps");
  t->add_option("--eta", c->opt.eta, "Successive halving: each rung keeps about 1/eta (default 3)");
  t->add_option("--rungs", c->opt.rungs, "Successive-halving rungs (default 3)");
  t->add_flag("--no-what-if", c->no_what_if, "Skip the front at 0.5x and 2x load");
  t->add_option("--set", c->sets, "Override applied to every run: path=value; repeatable");
  t->add_option("-j,--jobs", c->jobs, "Simulations run in parallel (default: number of CPUs)");
  t->add_option("--format", c->format, "Output: text or json (the report)");
  t->add_option("--out", c->out, "Also write the JSON report here (atomically)");
  return c;
}

std::optional<int> run_host_commands(HostCommands& c) {
  if (c.import->parsed()) return cmd_import(c);
  if (c.tune->parsed()) return cmd_tune(c);
  return std::nullopt;
}

}  // namespace napisim::cli
