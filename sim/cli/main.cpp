// napisim command line: run | validate | compare | schema | list-models | list-workloads | list-scenarios |
// describe | calibrate | trace-gen | import-host | tune.
// Exit codes: 0 ok, 2 bad input (ConfigError, bad arguments), 1 internal error, 128 + signal (SIGINT, SIGTERM).
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "sim/calibrate/calibrate.hpp"
#include "sim/calibrate/compare.hpp"
#include "sim/calibrate/targets.hpp"
#include "sim/cli/host_commands.hpp"
#include "sim/core/error.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/model/model.hpp"
#include "sim/output/writers.hpp"
#include "sim/params/json_util.hpp"
#include "sim/scenario/host_results.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simgrid/run.hpp"
#include "sim/workloads/trace.hpp"
#include "sim/workloads/workload.hpp"

#include "git_sha.h"  // generated at build time (cmake/git_sha.cmake)
#include <unistd.h>

namespace {

using napisim::Json;

constexpr const char* kFormats[] = {
    "text",     "neper",    "json", "csv", "netperf-legacy", "netperf-omni-csv", "netperf-omni-keyval",
    "mutilate", "intervals"};

void check_format(const std::string& format) {
  for (const char* f : kFormats)
    if (format == f) return;
  throw napisim::ConfigError("--format", "unknown format \"" + format +
                                             "\"; expected text, neper, json, csv, netperf-legacy, netperf-omni-csv, "
                                             "netperf-omni-keyval, mutilate or intervals");
}

std::string format_result(const Json& r, const std::string& format) {
  namespace out = napisim::output;
  if (format == "json") return out::format_json(r);
  if (format == "csv") return out::format_csv(r);
  if (format == "intervals") return out::format_intervals(r);
  if (format == "text") return out::format_summary(r);
  if (format == "mutilate") return out::format_mutilate(r);
  if (format == "neper") return out::format_neper(r);
  if (format == "netperf-legacy") return out::format_netperf(r, "legacy");
  if (format == "netperf-omni-csv") return out::format_netperf(r, "omni-csv");
  if (format == "netperf-omni-keyval") return out::format_netperf(r, "omni-keyval");
  throw napisim::ConfigError("--format", "unknown format \"" + format + "\"");
}

// A seed as --seed and --seeds take it: an integer in the scenario's /seed range, never ignored.
std::int64_t parse_seed(const std::string& text, const std::string& option) {
  std::int64_t v = -1;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < 0 || v > napisim::kMaxSeed)
    throw napisim::ConfigError(
        option, "expected an integer in [0, " + std::to_string(napisim::kMaxSeed) + "], got '" + text + "'");
  return v;
}

// A comma-separated list of seeds (--seeds), each as parse_seed() takes it.
std::vector<std::int64_t> parse_seeds(const std::string& text) {
  std::vector<std::int64_t> seeds;
  std::stringstream ss(text);
  for (std::string tok; std::getline(ss, tok, ',');)
    seeds.push_back(parse_seed(tok, "--seeds"));
  return seeds;
}

// -j of run --seeds, calibrate and compare: 0 means one simulation per CPU.
void check_jobs(int jobs) {
  if (jobs < 0)
    throw napisim::ConfigError(
        "-j", "expected a number of parallel simulations >= 0 (0: one per CPU), got " + std::to_string(jobs));
}

// run --seeds and compare: one paired comparison, printed as a table or as JSON.
int print_compare(const napisim::calibrate::CompareOptions& o, const std::string& format) {
  const napisim::Json doc = napisim::calibrate::run_compare(o);
  if (format == "json")
    std::cout << doc.dump(2) << "\n";
  else
    std::cout << napisim::calibrate::format_compare(doc);
  return 0;
}

// Output paths are checked before the work that fills them (a run, a fit), so that a bad path is
// bad input (exit 2) and never costs the run or leaves some of the files written.
void check_output_dir(const std::string& dir, const std::vector<std::string>& names, const std::string& option) {
  if (!std::filesystem::is_directory(dir)) throw napisim::ConfigError(option, "not a directory: '" + dir + "'");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw napisim::ConfigError(option, "cannot write to directory '" + dir + "'");
  for (const std::string& n : names)
    if (std::filesystem::is_directory(dir + "/" + n))
      throw napisim::ConfigError(option, "'" + dir + "/" + n + "' is a directory, expected a file name");
}

void check_output_file(const std::string& path, const std::string& option) {
  if (path.empty() || path.back() == '/')
    throw napisim::ConfigError(option, "expected a file path, got '" + path + "'");
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  check_output_dir(dir, {p.filename().string()}, option);
}

// A file the user named that cannot be written (no such directory, a read-only or special
// filesystem, a full disk) is bad input, not an internal error. write_files_atomic() leaves neither
// a partial file nor a partial set of files behind.
void write_outputs(const std::vector<std::pair<std::string, std::string>>& files, const std::string& option) {
  try {
    napisim::output::write_files_atomic(files);
  } catch (const std::runtime_error& e) {
    throw napisim::ConfigError(option, e.what());
  }
}

void write_output(const std::string& path, std::string_view content, const std::string& option) {
  write_outputs({{path, std::string(content)}}, option);
}

// run --trace FILE [--trace-from S] [--trace-for S]
struct TraceArgs {
  std::string file;
  double from_s = std::numeric_limits<double>::quiet_NaN();  // NaN: the measured window's start
  double for_s = 0.01;
};

int cmd_run(const std::string& file, const std::vector<std::string>& sets, std::optional<std::int64_t> seed,
            const std::string& out_dir, const std::string& format, const TraceArgs& trace, double interval_s,
            bool explain) {
  check_format(format);  // before the run, not after it
  if (format == "intervals" && interval_s == 0)
    throw napisim::ConfigError("--format", "intervals prints the reports of --interval S, which is not given");
  napisim::RunOptions opt;
  opt.sets = sets;
  opt.seed = seed;
  opt.interval_s = interval_s;
  opt.explain = explain;
  opt.progress = isatty(2) != 0;
  if (!trace.file.empty()) {
    check_output_file(trace.file, "--trace");
    opt.trace = true;
    opt.trace_from_s = trace.from_s;
    opt.trace_for_s = trace.for_s;
  }
  const std::string path = napisim::find_scenario_file(file);
  Json doc = path.empty() ? napisim::default_scenario() : napisim::load_json_file(path);
  if (!path.empty()) opt.base_dir = std::filesystem::absolute(path).parent_path().string();
  if (!out_dir.empty()) check_output_dir(out_dir, {"result.json", "result.csv", "result.txt"}, "--out");
  std::string trace_doc;
  const Json result = napisim::run_scenario(doc, opt, &trace_doc);
  std::string text = format_result(result, format);
  // The summary is followed by the --interval and --explain tables (JSON and CSV carry them
  // themselves; neper's format adds the --explain table only, as it always has).
  if (interval_s > 0 && format == "text") text += "\n" + napisim::output::format_intervals(result);
  if (explain && (format == "text" || format == "neper")) {
    if (format == "text") text += "\n";
    text += napisim::output::format_breakdown(result);
  }
  if (!out_dir.empty()) {
    namespace out = napisim::output;
    write_outputs({{out_dir + "/result.json", out::format_json(result)},
                   {out_dir + "/result.csv", out::format_csv(result)},
                   {out_dir + "/result.txt", format_result(result, "text")}},
                  "--out");
  }
  if (!trace.file.empty()) write_output(trace.file, trace_doc, "--trace");
  std::fwrite(text.data(), 1, text.size(), stdout);
  // A signal that came while the results were written is honoured now that they all are.
  napisim::interrupt::exit_if_signalled("after the run's results were written in full");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  napisim::interrupt::install();
  CLI::App app{"napisim: a discrete-event simulator of Linux network receive scheduling"};
  app.require_subcommand(1);
  std::string file, format = "text", out_dir, model;
  std::vector<std::string> sets;
  std::string seed;  // checked by parse_seed(), which says what it expected

  auto* run = app.add_subcommand("run", "Run a scenario (default: the embedded quickstart scenario)");
  run->add_option("file", file,
                  "Scenario JSON file or name (napisim list-scenarios; default: the embedded quickstart)");
  run->add_option("--set", sets,
                  "Override a value: path=value (a JSON pointer such as /nics/0/queues, or a dotted path such as "
                  "nics[0].queues); repeatable");
  auto* seed_opt = run->add_option("--seed", seed, "Random seed, an integer >= 0 (overrides the scenario's)");
  std::string run_seeds;
  int run_jobs = 0;
  run->add_option("--seeds", run_seeds,
                  "Comma-separated seeds: one run each, printed as mean +- 95% CI over them (--format text or json)");
  run->add_option("-j,--jobs", run_jobs, "With --seeds: simulations run in parallel (default: number of CPUs)");
  run->add_option("--out", out_dir, "Directory to write result.json, result.csv and result.txt to");
  run->add_option("--format", format,
                  "Output on stdout: text (a summary for reading), neper (neper tcp_rr's key=value), json, csv, "
                  "netperf-legacy, netperf-omni-csv, netperf-omni-keyval, mutilate, intervals");
  TraceArgs trace;
  auto* trace_opt =
      run->add_option("--trace", trace.file,
                      "Write the timeline (per-CPU classes, IRQs, NAPI polls, task states, both hosts) as a "
                      "Chrome JSON trace for the Perfetto UI");
  auto* trace_from = run->add_option("--trace-from", trace.from_s,
                                     "Trace start, simulated s (default: the measured window's start, warmup_s)");
  auto* trace_for = run->add_option("--trace-for", trace.for_s, "Trace length, simulated s (default 0.01)");
  double interval_s = 0;
  bool explain = false;
  auto* explain_opt = run->add_flag(
      "--explain", explain,
      "Latency attribution: cut each measured request's latency into the stages of its path on both hosts "
      "(wire, ring, NET_RX wait, run-queue wait, ...) and report each stage's mean per percentile band "
      "(result.json's \"latency_breakdown\"; a table after the text output)");
  auto* interval_opt = run->add_option(
      "--interval", interval_s,
      "Report every S simulated seconds of the measured window (neper -I, sar): result.json's \"intervals\"; "
      "--format intervals prints them as a table");

  auto* validate = app.add_subcommand("validate", "Check a scenario and print it with every default resolved");
  validate->add_option("file", file, "Scenario JSON file or name (napisim list-scenarios)")->required();
  validate->add_option("--set", sets, "Override a value: path=value; repeatable");

  bool schema_results = false, schema_targets = false;
  auto* schema = app.add_subcommand("schema", "Print the scenario JSON Schema");
  auto* schema_results_flag =
      schema->add_flag("--results", schema_results,
                       "Print the JSON Schema of what results report of each host instead (docs/results.md)");
  schema
      ->add_flag("--targets", schema_targets,
                 "Print the JSON Schema of a calibration targets file instead (calibration/README.md)")
      ->excludes(schema_results_flag);
  app.add_subcommand("list-models", "List the receive-path models");
  app.add_subcommand("list-workloads", "List the workload types");
  app.add_subcommand("list-scenarios", "List the scenario names run and validate accept (and napisim.run in Python)");
  app.set_version_flag("--version", std::string("napisim ") + NAPISIM_VERSION + " (" + NAPISIM_GIT_SHA + ")");
  auto* describe = app.add_subcommand(
      "describe", "Describe a receive-path model's or a workload's parameters, or (\"results\") what results report");
  describe->add_option("name", model, "Model name (list-models), workload type (list-workloads) or results")
      ->required();

  napisim::calibrate::CalibrateOptions cal;
  std::string cal_seeds;
  auto* calibrate = app.add_subcommand("calibrate", "Fit cost parameters to measured points (calibration/README.md)");
  calibrate->add_option("targets", cal.targets_file, "Targets JSON file")->required();
  calibrate->add_option("-j,--jobs", cal.jobs, "Simulations run in parallel (default: number of CPUs)");
  calibrate->add_flag("--dry-run", cal.dry_run, "Only print the residuals of the starting (default) parameters");
  calibrate->add_option("--out", cal.out, "Write the fitted parameters as an includable scenario fragment");
  calibrate->add_option("--report", cal.report, "Write the full report JSON (default: OUT with .report.json)");
  calibrate->add_option("--max-iterations", cal.max_iterations, "Levenberg-Marquardt iterations (default: file's)");
  calibrate->add_option("--set", cal.sets, "Override applied to every simulation (e.g. duration_s=0.05)");
  calibrate->add_option("--seeds", cal_seeds, "Comma-separated seeds (default: the targets file's)");

  napisim::calibrate::CompareOptions cmp;
  std::string cmp_seeds, cmp_format = "text";
  auto* compare = app.add_subcommand("compare", "Run scenarios on the same seeds; paired changes against the first");
  compare->add_option("scenarios", cmp.scenarios, "Two or more scenario files or names; the first is the baseline")
      ->required();
  compare->add_option("--seeds", cmp_seeds, "Comma-separated seeds (default 1,2,3,4,5)");
  compare->add_option("-j,--jobs", cmp.jobs, "Simulations run in parallel (default: number of CPUs)");
  compare->add_option("--set", cmp.sets, "Override applied to every run: path=value; repeatable");
  compare->add_option("--format", cmp_format, "Output: text (a table) or json");
  compare->add_flag("--explain", cmp.explain,
                    "Also compare the latency breakdown (run --explain): each percentile band's stages, paired per "
                    "seed, the change in us");

  // trace-gen: a CSV request trace from a distribution spec (sim/workloads/trace.hpp).
  std::string gen_spec = "{}", gen_out;
  auto* tracegen = app.add_subcommand("trace-gen", "Write a CSV request trace (for the trace workload) from a spec");
  tracegen->add_option("spec", gen_spec,
                       "JSON object, inline or a file: duration_s, rate_rps, interarrival, flows, request_size, "
                       "response_size, service_ns, seed");
  tracegen->add_option("--out", gen_out, "Output file (default: stdout)");

  const auto host_commands = napisim::cli::add_host_commands(app);  // import-host, tune

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    if (const auto rc = napisim::cli::run_host_commands(*host_commands)) return *rc;
    if (run->parsed() && !run_seeds.empty()) {
      // Several seeds: each its own child run (one SimGrid engine per process), as compare runs them.
      if (seed_opt->count() > 0) throw napisim::ConfigError("--seeds", "give --seed or --seeds, not both");
      if (!out_dir.empty()) throw napisim::ConfigError("--out", "writes one run's results; not with --seeds");
      if (trace_opt->count() > 0) throw napisim::ConfigError("--trace", "traces one run; not with --seeds");
      if (interval_opt->count() > 0) throw napisim::ConfigError("--interval", "reports one run; not with --seeds");
      if (explain_opt->count() > 0) throw napisim::ConfigError("--explain", "explains one run; not with --seeds");
      if (format != "text" && format != "json")
        throw napisim::ConfigError("--format", "with --seeds, expected text or json, got \"" + format + "\"");
      check_jobs(run_jobs);
      napisim::calibrate::CompareOptions o;
      o.scenarios = {file.empty() ? std::string("quickstart") : file};
      o.sets = sets;
      o.jobs = run_jobs;
      o.seeds = parse_seeds(run_seeds);
      return print_compare(o, format);
    }
    if (run->parsed()) {
      if (trace_opt->count() == 0 && (trace_from->count() > 0 || trace_for->count() > 0))
        throw napisim::ConfigError(trace_from->count() > 0 ? "--trace-from" : "--trace-for",
                                   "sets the window of --trace FILE, which is not given");
      return cmd_run(file, sets,
                     seed_opt->count() > 0 ? std::optional<std::int64_t>(parse_seed(seed, "--seed")) : std::nullopt,
                     out_dir, format, trace, interval_s, explain);
    }
    if (validate->parsed()) {
      napisim::RunOptions opt;
      opt.sets = sets;
      const std::string path = napisim::find_scenario_file(file);
      if (!path.empty()) opt.base_dir = std::filesystem::absolute(path).parent_path().string();
      const Json doc = path.empty() ? napisim::default_scenario() : napisim::load_json_file(path);
      std::cout << napisim::validate_scenario(doc, opt).dump(2) << "\n";
      return 0;
    }
    if (calibrate->parsed()) {
      check_jobs(cal.jobs);
      if (!cal.out.empty()) check_output_file(cal.out, "--out");
      if (!cal.report.empty()) check_output_file(cal.report, "--report");
      cal.seeds = parse_seeds(cal_seeds);
      const napisim::Json report = napisim::calibrate::run_calibration(cal);
      (void)report;
      return 0;
    }
    if (compare->parsed()) {
      if (cmp.scenarios.size() < 2)
        throw napisim::ConfigError("compare", "expected at least two scenarios (the first is the baseline), got " +
                                                  std::to_string(cmp.scenarios.size()));
      check_jobs(cmp.jobs);
      if (cmp_format != "text" && cmp_format != "json")
        throw napisim::ConfigError("--format", "expected text or json, got \"" + cmp_format + "\"");
      cmp.seeds = parse_seeds(cmp_seeds);
      return print_compare(cmp, cmp_format);
    }
    if (tracegen->parsed()) {
      if (!gen_out.empty()) check_output_file(gen_out, "--out");
      const bool inline_json = gen_spec.find('{') != std::string::npos;
      const std::string csv = napisim::generate_trace_csv(inline_json ? napisim::parse_json_text(gen_spec, "spec")
                                                                      : napisim::load_json_file(gen_spec));
      if (gen_out.empty())
        std::fwrite(csv.data(), 1, csv.size(), stdout);
      else
        write_output(gen_out, csv, "--out");
      return 0;
    }
    if (schema->parsed()) {
      const napisim::Json doc = schema_targets   ? napisim::calibrate::targets_schema()
                                : schema_results ? napisim::host_results_schema()
                                                 : napisim::scenario_schema();
      std::cout << doc.dump(2) << "\n";
      return 0;
    }
    if (app.got_subcommand("list-scenarios")) {
      for (const std::string& n : napisim::list_scenarios())
        std::printf("%s\n", n.c_str());
      return 0;
    }
    if (app.got_subcommand("list-models")) {
      for (const auto& m : napisim::builtin_models().list())
        std::printf("%-20s %s\n", m.name.c_str(), m.summary.c_str());
      return 0;
    }
    if (app.got_subcommand("list-workloads")) {
      for (const auto& w : napisim::builtin_workloads().list())
        std::printf("%-20s %s\n", w.name.c_str(), w.summary.c_str());
      return 0;
    }
    if (describe->parsed()) {
      if (model == "results") {
        std::fputs(napisim::host_results_markdown().c_str(), stdout);
        return 0;
      }
      if (const auto* w = napisim::builtin_workloads().find(model)) {
        std::printf("%s (workload): %s\n\n%s", w->name.c_str(), w->summary.c_str(),
                    napisim::format_description(w->describe()).c_str());
        return 0;
      }
      if (!napisim::builtin_models().find(model)) {
        std::string valid;
        for (const auto& m : napisim::builtin_models().list())
          valid += (valid.empty() ? "" : ", ") + m.name;
        for (const auto& w : napisim::builtin_workloads().list())
          valid += ", " + w.name;
        throw napisim::ConfigError(
            "describe", "unknown model or workload \"" + model + "\"; expected one of " + valid + ", or results");
      }
      const auto& m = napisim::builtin_models().get(model, "model");
      std::printf("%s: %s\n\n%s", m.name.c_str(), m.summary.c_str(), napisim::format_description(m.describe()).c_str());
      return 0;
    }
  } catch (const napisim::ConfigError& e) {
    std::fprintf(stderr, "napisim: error: %s\n", e.what());
    return 2;
  } catch (const napisim::interrupt::Interrupted& e) {
    napisim::interrupt::exit_if_signalled("stopped; nothing written");
    return 128 + e.signal;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "napisim: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
