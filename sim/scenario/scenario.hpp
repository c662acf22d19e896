// napisim: the scenario — everything one run needs, declared once with defaults.
//
// A scenario JSON is parsed strictly (unknown keys, wrong types, out-of-range values are errors
// naming the JSON pointer); every omitted value takes its documented default. The resolved form
// (resolve_scenario) spells out every default, including model and workload parameters, and is
// what results record as provenance and what sweep caches hash.
#pragma once

#include <string>
#include <vector>

#include "sim/core/json.hpp"
#include "sim/hw/nic.hpp"
#include "sim/hw/topology.hpp"
#include "sim/kernel/costs.hpp"
#include "sim/kernel/params.hpp"
#include "sim/params/fields.hpp"

namespace napisim {

// Limits that keep bad input from hanging a run (README.md); the schema states them as maxItems/maximum.
// Besides these: kMaxJsonFileBytes and kMaxJsonNesting (json_util.hpp), kMaxArrayItems for every other
// array, kMaxCpus (topology.hpp), and the workloads' own ranges (flows, threads).
inline constexpr std::size_t kMaxNics = 64;      // server NICs
inline constexpr std::size_t kMaxClients = 256;  // client hosts
inline constexpr std::size_t kMaxModels = 64;    // receive-path models of one host
inline constexpr std::size_t kMaxChanges = 4096;
/// Seeds and run numbers: integers a JSON reader that holds numbers as doubles keeps exact (< 2^53).
inline constexpr std::int64_t kMaxSeed = 9'000'000'000'000'000;
inline constexpr std::size_t kMaxPlatformFileBytes = std::size_t{8} << 20;  // SimGrid platform XML
inline constexpr std::size_t kMaxTraceFileBytes = std::size_t{256} << 20;
inline constexpr std::size_t kMaxTraceRequests = 10'000'000;  // lines of a trace file (after its header)

/// A file the scenario names (platform XML, request trace). Results and fingerprints use its content
/// (sha256) and the path as the scenario wrote it, never where the scenario happens to be.
struct InputFile {
  std::string pointer;  // of the path in the scenario, e.g. "/workload/params/file"
  std::string path;     // as written (relative to the scenario file's directory)
  std::string sha256;   // of the content
  bool operator==(const InputFile&) const = default;
};

struct ModelSpec {
  std::string name = "napi_irq";
  Json params = Json::object();
  std::vector<std::int64_t> nics;  // empty = every NIC

  template <class V>
  static void fields(V& v) {
    v("name", &ModelSpec::name, "", "Receive-path model (napisim list-models)");
    v("params", &ModelSpec::params, "", "The model's parameters (napisim describe MODEL)");
    v("nics", &ModelSpec::nics, "", "NICs the model applies to (empty = all)", Range{0, kMaxNics - 1},
      MaxItems{kMaxNics});
  }
  bool operator==(const ModelSpec&) const = default;
};

/// A client host. By default it is a simulated Linux host like the server (`"like": "server"`):
/// its topology, NIC, kernel settings, CPU costs and receive-path models are the server's
/// (/topology, /nics/<nic>, /kernel, /costs, and the /models that apply to NIC <nic>), each of
/// which the client may override key by key (parse_scenario merges the server's values under the
/// client's own). `"stack": "idealised"` replaces the host by the idealised load generator
/// (workload.hpp), which turns every flow around in a fixed client_tx_ns + client_rx_ns.
struct ClientSpec {
  std::string name = "client0";
  std::string stack = "auto";   // linux | idealised | auto (linux where the workload has a Linux client)
  std::string like = "server";  // server: inherit the server host's settings; none: the defaults
  double link_gbps = 100.0;
  std::int64_t link_latency_ns = 5000;  // one way, client NIC to server NIC (switch included)
  std::int64_t nic = 0;                 // server NIC this client reaches
  TopologyParams topology;              // the client host (stack linux)
  NicParams host_nic;
  KernelParams kernel;
  CostParams costs;
  std::vector<ModelSpec> models = {ModelSpec{}};

  template <class V>
  static void fields(V& v) {
    v("name", &ClientSpec::name, "", "Client host name (a host of the platform XML when one is given)");
    v("stack", &ClientSpec::stack, "",
      "linux: the client host runs on the full kernel model (its own CPUs, NIC, softirq, scheduler, receive-path "
      "models) with the workload's real client loops; idealised: a load generator that turns each flow around in "
      "client_tx_ns + client_rx_ns; auto: linux where the workload has a Linux client (tcp_rr, app, trace, mutilate), "
      "else idealised",
      Choices{"auto", "linux", "idealised"});
    v("like", &ClientSpec::like, "",
      "server: topology, host_nic, kernel, costs and models not given here are the server's (/topology, "
      "/nics/<nic>, /kernel, /costs, the /models applying to that NIC); none: napisim's defaults",
      Choices{"server", "none"});
    v("link_gbps", &ClientSpec::link_gbps, "Gb/s", "Client link bandwidth", Range{0.001, 1e4});
    v("link_latency_ns", &ClientSpec::link_latency_ns, "ns", "One-way latency between client and server NIC",
      Range{0, 1e10});
    v("nic", &ClientSpec::nic, "", "Index of the server NIC this client's traffic arrives on", Range{0, kMaxNics - 1});
    v("topology", &ClientSpec::topology, "", "Client host CPU topology (stack linux)");
    v("host_nic", &ClientSpec::host_nic, "", "The client host's NIC (stack linux)");
    v("kernel", &ClientSpec::kernel, "", "Client kernel configuration and sysctls (stack linux)");
    v("costs", &ClientSpec::costs, "", "Client CPU cost parameters (ns) (stack linux)");
    v("models", &ClientSpec::models, "", "Client receive-path models, applied in order (stack linux)",
      MaxItems{kMaxModels});
  }
  bool linux_host() const { return stack == "linux"; }
  bool operator==(const ClientSpec&) const = default;
};

struct PlatformSpec {
  std::string xml = "";  // optional SimGrid platform XML; then latency/bandwidth come from its routes
  std::string server = "server";
  std::vector<ClientSpec> clients = {ClientSpec{}};

  template <class V>
  static void fields(V& v) {
    v("xml", &PlatformSpec::xml, "path",
      "SimGrid platform XML (relative to the scenario file); empty = built from the clients list");
    v("server", &PlatformSpec::server, "", "Name of the server host");
    v("clients", &PlatformSpec::clients, "", "Client hosts", MaxItems{kMaxClients});
  }
  bool operator==(const PlatformSpec&) const = default;
};

/// A change of receive-path strategy during the run, like writing /sys/class/net/DEV/threaded:
/// at `at_s` the model is attached to its NICs. NAPIs that are being polled finish in the old
/// executor; the next napi_schedule() uses the new one (dev_set_threaded()).
struct ChangeSpec {
  double at_s = 0.0;
  ModelSpec model;

  template <class V>
  static void fields(V& v) {
    v("at_s", &ChangeSpec::at_s, "s", "Simulated time of the change (from the start of the run, warm-up included)",
      Range{0, 1e5});
    v("model", &ChangeSpec::model, "", "Receive-path model attached at that time");
  }
  bool operator==(const ChangeSpec&) const = default;
};

struct WorkloadSpec {
  std::string type = "tcp_rr";
  Json params = Json::object();

  template <class V>
  static void fields(V& v) {
    v("type", &WorkloadSpec::type, "", "Workload",
      Choices{"tcp_rr", "app", "trace", "mutilate", "stream", "super_netperf", "xsk_rr"});
    v("params", &WorkloadSpec::params, "", "The workload's parameters");
  }
  bool operator==(const WorkloadSpec&) const = default;
};

struct Scenario {
  std::string name = "unnamed";
  std::string description = "";
  std::int64_t seed = 1;
  std::int64_t run = 0;
  double warmup_s = 0.05;
  double duration_s = 0.5;
  PlatformSpec platform;
  TopologyParams topology;
  std::vector<NicParams> nics = {NicParams{}};
  KernelParams kernel;
  CostParams costs;
  std::vector<ModelSpec> models = {ModelSpec{}};
  std::vector<ChangeSpec> changes;
  WorkloadSpec workload;
  /// The files the scenario names, found by parse_scenario (not a field: resolve_scenario() writes
  /// their paths as written; the Scenario's own paths are resolved, for the run).
  std::vector<InputFile> inputs;

  template <class V>
  static void fields(V& v) {
    v("name", &Scenario::name, "", "Scenario name (printed in results)");
    v("description", &Scenario::description, "", "What the scenario reproduces and where its values come from");
    v("seed", &Scenario::seed, "", "Random seed", Range{0, static_cast<double>(kMaxSeed)});
    v("run", &Scenario::run, "", "Run number (independent replications with the same seed)",
      Range{0, static_cast<double>(kMaxSeed)});
    v("warmup_s", &Scenario::warmup_s, "s", "Warm-up excluded from statistics", Range{0, 1e5});
    v("duration_s", &Scenario::duration_s, "s", "Measured time after warm-up (neper -l)", Range{1e-6, 1e5});
    v("platform", &Scenario::platform, "", "Hosts and links (SimGrid platform)");
    v("topology", &Scenario::topology, "", "Server CPU topology");
    v("nics", &Scenario::nics, "", "Server NICs", MaxItems{kMaxNics});
    v("kernel", &Scenario::kernel, "", "Kernel configuration and sysctls");
    v("costs", &Scenario::costs, "", "CPU cost parameters (ns)");
    v("models", &Scenario::models, "", "Receive-path models, applied in order", MaxItems{kMaxModels});
    v("changes", &Scenario::changes, "", "Run-time strategy changes (sysfs threaded-style), in time order",
      MaxItems{kMaxChanges});
    v("workload", &Scenario::workload, "", "Workload");
  }
  bool operator==(const Scenario&) const = default;
};

/// Strict parse plus cross-field checks (topology, NIC indices, models, workload params).
/// `base_dir` resolves relative paths in the scenario (platform XML, `include` files).
/// `"include": ["../../calibration/fitted_costs.json"]` merges scenario fragments under the
/// document (objects key by key, later includes over earlier ones, the document's own values and
/// --set overrides over all); each included file is checked strictly on its own.
Scenario parse_scenario(const Json& doc, const std::string& base_dir = ".");
/// The document with its `include` files merged in (and the `include` key removed).
Json expand_scenario_includes(const Json& doc, const std::string& base_dir);
/// Every value spelled out, model and workload parameters included; the files it names as written.
Json resolve_scenario(const Scenario& s);
/// SHA-256 of the resolved scenario with each file it names replaced by the file's content hash:
/// the same scenario and files give the same fingerprint wherever they are (results' scenario_sha256,
/// the Python sweep cache's key).
std::string scenario_sha256(const Scenario& s);
/// JSON Schema (draft 2020-12) of a scenario document.
Json scenario_schema();
/// The embedded default scenario (scenarios/quickstart.json, compiled in).
Json default_scenario();
/// Directories searched for named scenarios, in the Python package's order (napisim.scenario_dirs):
/// $NAPISIM_SCENARIOS (':'-separated), the installed scenarios of an installed napisim
/// (<prefix>/share/napisim/scenarios beside <prefix>/bin/napisim) or else the source tree's
/// scenarios/ this build came from, then ./scenarios.
std::vector<std::string> scenario_dirs();
/// Names of the scenarios found there, e.g. "quickstart", "wei2020/tcp_rr_1B", sorted.
std::vector<std::string> list_scenarios();
/// The file a scenario argument names: a file path, else a name under scenario_dirs() with or
/// without ".json"; "" for the embedded default ("" or "quickstart" when no file has that name).
/// ConfigError("/") otherwise, with the directories searched and the known names.
std::string find_scenario_file(const std::string& path_or_name);
/// Loads a scenario document: find_scenario_file()'s file, or the embedded default.
Json load_scenario_doc(const std::string& path_or_name);
/// Applies `--set path=value` overrides to a document (same validation as the file, at parse). The
/// document must be an object (a file holding `null` is not a scenario, with or without --set).
void apply_overrides(Json& doc, const std::vector<std::string>& sets);

}  // namespace napisim
