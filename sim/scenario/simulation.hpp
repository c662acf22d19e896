// napisim: Simulation, one scenario assembled on a HostModel: topology, kernel, NICs,
// receive-path models and workload. It knows nothing of SimGrid: sim/simgrid/run.cpp drives it
// through the engine (the only way users run it); tests may drive it through advance_to().
#pragma once

#include <memory>
#include <vector>

#include "sim/core/host_model.hpp"
#include "sim/core/rng.hpp"
#include "sim/hw/topology.hpp"
#include "sim/kernel/kernel.hpp"
#include "sim/kernel/timeline.hpp"
#include "sim/model/model.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/stats/histogram.hpp"
#include "sim/workloads/workload.hpp"

namespace napisim {

class Simulation {
 public:
  Simulation(const Scenario& s, const std::vector<ClientPath>& paths);
  ~Simulation();

  HostModel& host() { return host_; }
  Kernel& kernel() { return *kernel_; }
  /// The kernel of Linux client host `i` (in /platform/clients), or null for an idealised client.
  Kernel* client_kernel(int i);
  Workload& workload() { return *workload_; }
  const Scenario& scenario() const { return s_; }
  Nanos warmup_end() const { return warmup_end_; }
  Nanos run_end() const { return run_end_; }

  /// Kernel::set_lazy_rx() on every kernel of the run (server and Linux client hosts).
  void set_lazy_rx(bool on);
  /// Records every host's timeline into `t` (the server, then each Linux client by name).
  void set_trace(Timeline& t);
  /// Latency attribution (run --explain): every host's kernel stamps the receive path and the
  /// workload cuts each measured request into stages (result["latency_breakdown"]). Throws
  /// ConfigError("--explain") for a workload that cannot.
  void set_explain();
  /// Starts the workload at time 0.
  void start();
  void begin_measurement();
  void end_measurement();
  /// Interval reports (neper -I, sar 1): every `interval` of the measured window, and the last,
  /// shorter one at its end, become result["intervals"]. 0: none (the default).
  void set_interval(Nanos interval) { interval_ = interval; }
  Nanos interval() const { return interval_; }
  /// Closes the interval that ends now (the runner calls it at each boundary inside the window).
  void end_interval();
  /// Applies scenario change i (attaches its model at the current simulated time).
  void apply_change(std::size_t i);
  /// Runs the whole scenario on the host model alone (tests; users go through SimGrid).
  void run_standalone();
  /// The client paths run_standalone() needs: each client's own link_latency_ns / link_gbps and
  /// NIC (no SimGrid platform: the route is the scenario's link as written).
  static std::vector<ClientPath> standalone_paths(const Scenario& s);
  /// The result document (context is provided by the caller: provenance, wall time).
  Json result(const Json& context) const;

 private:
  void attach_model(const ModelSpec& m, const std::string& path);

  Scenario s_;
  HostModel host_;
  RngRoot rng_;
  std::unique_ptr<Topology> topo_;
  std::unique_ptr<Kernel> kernel_;
  /// The receive-path models attached to one host's kernel, with their names (result["models"]).
  struct HostModels {
    std::vector<std::unique_ptr<RxModel>> models;
    std::vector<std::string> names;  // parallel to models
    /// Creates `m` and attaches it to `k`'s NICs: m.nics, or all `nr_nics` when empty.
    void attach(Kernel& k, const ModelSpec& m, std::size_t nr_nics, const std::string& path);
    /// RxModel::report() of each, keyed by model name (a name used twice gets "#k").
    Json report() const;
  };
  HostModels models_;
  std::unique_ptr<Workload> workload_;
  /// A Linux client host (ClientSpec "stack": "linux").
  struct ClientHost {
    int index = 0;  // in /platform/clients
    std::unique_ptr<Topology> topo;
    std::unique_ptr<Kernel> kernel;
    HostModels models;
    Kernel::Snapshot at_begin, at_end;
  };
  std::vector<std::unique_ptr<ClientHost>> clients_;
  /// Its name in /platform/clients (results and traces key client hosts by it).
  const std::string& client_name(const ClientHost& h) const {
    return s_.platform.clients[static_cast<std::size_t>(h.index)].name;
  }
  Nanos warmup_end_, run_end_;
  Kernel::Snapshot at_begin_, at_end_;
  // Interval reports: the counters where the open interval began.
  Nanos interval_ = 0;
  Kernel::Snapshot interval_begin_;
  std::vector<Kernel::Snapshot> client_interval_begin_;
  Histogram interval_hist_;  // the latency histogram at the interval's start
  std::uint64_t interval_completed_ = 0;
  Json intervals_ = Json::array();
};

}  // namespace napisim
