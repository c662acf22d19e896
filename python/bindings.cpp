// napisim's private Python module `_napisim`: JSON in, JSON out.
//
// Deliberately narrow: scenarios and results cross the boundary as JSON text, so the Python package
// (python/napisim/) owns every convenience and no internal class is bound. ConfigError derives from
// std::invalid_argument, which pybind11 turns into ValueError; the message starts with the JSON
// pointer of the offending value. SimGrid's engine is one per process: run_json() may be called once
// per process and raises RuntimeError on a second call (napisim.run() uses a fresh worker process).
#include <optional>
#include <string>
#include <vector>

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "sim/core/error.hpp"
#include "sim/core/json.hpp"
#include "sim/hostimport/host_import.hpp"
#include "sim/model/model.hpp"
#include "sim/output/writers.hpp"
#include "sim/params/fields.hpp"
#include "sim/params/json_util.hpp"
#include "sim/scenario/host_results.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simgrid/run.hpp"
#include "sim/tune/tune.hpp"
#include "sim/workloads/workload.hpp"

#include "git_sha.h"  // generated at build time (cmake/git_sha.cmake)

namespace py = pybind11;

namespace {

using napisim::Json;

Json parse_doc(const std::string& text) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) throw napisim::ConfigError("/", "scenario is not valid JSON");
  return doc;
}

napisim::RunOptions make_options(const std::vector<std::string>& sets, std::optional<std::int64_t> seed,
                                 const std::string& base_dir) {
  napisim::RunOptions opt;
  opt.sets = sets;
  opt.seed = seed;
  opt.base_dir = base_dir;
  opt.progress = false;  // a worker process has no terminal to draw on
  return opt;
}

std::string run_json(const std::string& scenario, const std::vector<std::string>& sets,
                     std::optional<std::int64_t> seed, const std::string& base_dir, const std::string& trace,
                     std::optional<double> trace_from, double trace_for, double interval, bool explain) {
  napisim::RunOptions opt = make_options(sets, seed, base_dir);
  opt.interval_s = interval;
  opt.explain = explain;
  opt.trace = !trace.empty();
  if (trace_from) opt.trace_from_s = *trace_from;
  opt.trace_for_s = trace_for;
  std::string doc;
  const std::string result = napisim::run_scenario(parse_doc(scenario), opt, &doc).dump();
  if (opt.trace) {
    try {
      napisim::output::write_file_atomic(trace, doc);
    } catch (const std::runtime_error& e) {
      throw napisim::ConfigError("trace", e.what());
    }
  }
  return result;
}

std::string validate_json(const std::string& scenario, const std::vector<std::string>& sets,
                          std::optional<std::int64_t> seed, const std::string& base_dir) {
  return napisim::validate_scenario(parse_doc(scenario), make_options(sets, seed, base_dir)).dump();
}

std::string scenario_sha256(const std::string& scenario, const std::vector<std::string>& sets,
                            std::optional<std::int64_t> seed, const std::string& base_dir) {
  std::string sha;
  (void)napisim::validate_scenario(parse_doc(scenario), make_options(sets, seed, base_dir), &sha);
  return sha;
}

std::string describe(const std::string& name) {
  // A workload type (list_workloads) or a receive-path model (list_models): one table format.
  std::string title, summary, kind;
  std::vector<napisim::FieldInfo> rows;
  Json schema;
  if (const napisim::WorkloadInfo* w = napisim::builtin_workloads().find(name)) {
    title = w->name, summary = w->summary, kind = "workload", rows = w->describe(), schema = w->schema();
  } else {
    const napisim::ModelInfo& m = napisim::builtin_models().get(name, "model");
    title = m.name, summary = m.summary, kind = "model", rows = m.describe(), schema = m.schema();
  }
  Json params = Json::array();
  for (const napisim::FieldInfo& f : rows) {
    params.push_back({{"name", f.name},
                      {"type", f.type},
                      {"unit", f.unit},
                      {"doc", f.doc},
                      {"default", f.default_value},
                      {"constraint", f.constraint}});
  }
  Json out;
  out["name"] = title;
  out["kind"] = kind;
  out["summary"] = summary;
  out["params"] = std::move(params);
  out["schema"] = std::move(schema);
  out["text"] = napisim::format_description(rows);
  return out.dump();
}

std::vector<std::pair<std::string, std::string>> list_workloads() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const napisim::WorkloadInfo& w : napisim::builtin_workloads().list())
    out.emplace_back(w.name, w.summary);
  return out;
}

std::vector<std::pair<std::string, std::string>> list_models() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const napisim::ModelInfo& m : napisim::builtin_models().list())
    out.emplace_back(m.name, m.summary);
  return out;
}

// napisim.tune(): the search of sim/tune, its runs done by `run_batch` (napisim.sweep, in Python):
// it takes {"jobs": [{key, sets, seed}], "metrics": [pointer]} and returns {key: {pointer: value}}.
std::string tune_json(const std::string& resolved, const std::string& options,
                      const std::function<std::string(const std::string&)>& run_batch) {
  const Json o = Json::parse(options);
  napisim::tune::TuneOptions opt;
  opt.objective = o.value("objective", opt.objective);
  opt.cpu_budget = o.value("cpu_budget", opt.cpu_budget);
  opt.seeds = o.value("seeds", opt.seeds);
  opt.duration_s = o.value("duration_s", opt.duration_s);
  opt.eta = o.value("eta", opt.eta);
  opt.rungs = o.value("rungs", opt.rungs);
  opt.strategies = o.value("strategies", opt.strategies);
  opt.what_if = o.value("what_if", opt.what_if);
  opt.base_dir = o.value("base_dir", opt.base_dir);
  const napisim::tune::RunBatch batch = [&](const std::vector<napisim::tune::Job>& jobs,
                                            const std::vector<std::string>& metrics) {
    Json req{{"jobs", Json::array()}, {"metrics", metrics}};
    for (const auto& j : jobs)
      req["jobs"].push_back(Json{{"key", j.key}, {"sets", j.sets}, {"seed", j.seed}});
    const Json res = Json::parse(run_batch(req.dump()));
    std::map<std::string, std::map<std::string, double>> out;
    for (const auto& [key, values] : res.items())
      for (const auto& [m, v] : values.items())
        if (v.is_number()) out[key][m] = v.get<double>();
    return out;
  };
  return napisim::tune::run_tune(Json::parse(resolved), opt, batch).dump();
}

std::string import_host_json(const std::string& options) {
  const Json o = Json::parse(options);
  napisim::hostimport::ImportOptions opt;
  opt.from_dir = o.value("from_dir", opt.from_dir);
  opt.devices = o.value("devices", opt.devices);
  opt.napi_get = o.value("napi_get", opt.napi_get);
  opt.name = o.value("name", opt.name);
  opt.trace = o.value("trace", opt.trace);
  opt.rate_rps = o.value("rate_rps", opt.rate_rps);
  // Distributions travel as JSON text, as the CLI's --request-size takes them.
  if (o.contains("request_size")) opt.request_size = o["request_size"].dump();
  if (o.contains("response_size")) opt.response_size = o["response_size"].dump();
  if (o.contains("service_ns")) opt.service_ns = o["service_ns"].dump();
  opt.flows = o.value("flows", opt.flows);
  opt.threads = o.value("threads", opt.threads);
  const napisim::hostimport::ImportResult r = napisim::hostimport::import_host(opt);
  return Json{{"scenario", r.scenario}, {"notes", r.notes}}.dump();
}

}  // namespace

PYBIND11_MODULE(_napisim, m) {
  m.doc() = "napisim native core (private): JSON in, JSON out. Use the napisim package instead.";
  m.def("run_json", &run_json, py::arg("scenario"), py::arg("sets") = std::vector<std::string>{},
        py::arg("seed") = std::nullopt, py::arg("base_dir") = ".", py::arg("trace") = "",
        py::arg("trace_from") = std::nullopt, py::arg("trace_for") = 0.01, py::arg("interval") = 0.0,
        py::arg("explain") = false, py::call_guard<py::gil_scoped_release>(),
        "Run a scenario (JSON text) and return the result document (JSON text). Once per process. With `trace`, "
        "also write the timeline of [trace_from, trace_from + trace_for) simulated s there (the CLI's --trace); "
        "with `explain`, the latency attribution (the CLI's --explain).");
  m.def("validate_json", &validate_json, py::arg("scenario"), py::arg("sets") = std::vector<std::string>{},
        py::arg("seed") = std::nullopt, py::arg("base_dir") = ".", py::call_guard<py::gil_scoped_release>(),
        "Validate a scenario (JSON text) with overrides; return it with every default resolved (JSON text).");
  m.def("scenario_sha256", &scenario_sha256, py::arg("scenario"), py::arg("sets") = std::vector<std::string>{},
        py::arg("seed") = std::nullopt, py::arg("base_dir") = ".", py::call_guard<py::gil_scoped_release>(),
        "Validate a scenario (JSON text) with overrides; return its fingerprint (results' scenario_sha256: the files "
        "it names by content, not path).");
  m.def(
      "schema_json", [] { return napisim::scenario_schema().dump(); }, "JSON Schema of a scenario (JSON text).");
  m.def(
      "results_schema_json", [] { return napisim::host_results_schema().dump(); },
      "JSON Schema of what results report of each host: {host, per_cpu} (JSON text).");
  m.def(
      "default_scenario_json", [] { return napisim::default_scenario().dump(); },
      "The embedded default scenario (scenarios/quickstart.json), JSON text.");
  m.def("list_models", &list_models, "Receive-path models as (name, summary) pairs, sorted by name.");
  m.def("list_workloads", &list_workloads, "Workload types as (name, summary) pairs, sorted by name.");
  m.def("describe", &describe, py::arg("name"),
        "A model's or workload's parameters as JSON text: name, kind, summary, params[], schema, text (the CLI's "
        "table).");
  m.def("tune_json", &tune_json, py::arg("resolved"), py::arg("options"), py::arg("run_batch"),
        "napisim.tune's search (sim/tune): options as JSON text; run_batch(request JSON) -> results JSON.");
  m.def("import_host_json", &import_host_json, py::arg("options"), py::call_guard<py::gil_scoped_release>(),
        "napisim import-host: {scenario, notes} (JSON text) from options (JSON text).");
  m.attr("MAX_JSON_NESTING") = napisim::kMaxJsonNesting;
  m.attr("MAX_JSON_FILE_BYTES") = napisim::kMaxJsonFileBytes;
  m.def("build_info", [] {
    py::dict d;
    d["napisim_version"] = NAPISIM_VERSION;
    d["git_sha"] = NAPISIM_GIT_SHA;
    d["build_type"] = NAPISIM_BUILD_TYPE;
    return d;
  });
}
