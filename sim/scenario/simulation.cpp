#include "sim/scenario/simulation.hpp"

#include <cstdio>

#include "sim/core/error.hpp"
#include "sim/scenario/host_results.hpp"

namespace napisim {

Simulation::Simulation(const Scenario& s, const std::vector<ClientPath>& paths)
    : s_(s)
    , rng_(static_cast<std::uint64_t>(s.seed), static_cast<std::uint64_t>(s.run))
    , warmup_end_(from_seconds(s.warmup_s))
    , run_end_(from_seconds(s.warmup_s + s.duration_s)) {
  topo_ = std::make_unique<Topology>(s_.topology, "/topology");
  kernel_ = std::make_unique<Kernel>(host_, *topo_, s_.kernel, s_.costs, &rng_);
  for (std::size_t i = 0; i < s_.nics.size(); ++i)
    kernel_->add_nic(s_.nics[i], "/nics/" + std::to_string(i));
  for (std::size_t i = 0; i < s_.models.size(); ++i)
    attach_model(s_.models[i], "/models/" + std::to_string(i));
  // Run-time changes attach later, inside the run: their host-dependent values are checked now.
  for (std::size_t i = 0; i < s_.changes.size(); ++i) {
    const ModelSpec& m = s_.changes[i].model;
    const std::string path = "/changes/" + std::to_string(i) + "/model";
    builtin_models().get(m.name, path + "/name").create(m.params, path + "/params")->check(*kernel_);
  }
  workload_ = make_workload(s_.workload.type, s_.workload.params, "/workload/params");
  // Linux client hosts share the host model's clock and event queue; each has its own topology,
  // NIC, kernel settings, costs and receive-path models (the server's unless the client says otherwise).
  std::vector<ClientPath> with_kernels = paths;
  for (std::size_t i = 0; i < s_.platform.clients.size() && i < with_kernels.size(); ++i) {
    const ClientSpec& c = s_.platform.clients[i];
    if (!c.linux_host()) continue;
    const std::string p = "/platform/clients/" + std::to_string(i);
    auto h = std::make_unique<ClientHost>();
    h->index = static_cast<int>(i);
    h->topo = std::make_unique<Topology>(c.topology, p + "/topology");
    h->kernel = std::make_unique<Kernel>(host_, *h->topo, c.kernel, c.costs, &rng_, c.name + "/");
    h->kernel->add_nic(c.host_nic, p + "/host_nic");
    for (std::size_t m = 0; m < c.models.size(); ++m)
      h->models.attach(*h->kernel, c.models[m], 1, p + "/models/" + std::to_string(m));
    with_kernels[i].kernel = h->kernel.get();
    clients_.push_back(std::move(h));
  }
  workload_->setup(*kernel_, with_kernels, rng_);
  workload_->set_window(warmup_end_, run_end_);
}

Simulation::~Simulation() = default;

void Simulation::attach_model(const ModelSpec& m, const std::string& path) {
  models_.attach(*kernel_, m, s_.nics.size(), path);
}

void Simulation::HostModels::attach(Kernel& k, const ModelSpec& m, std::size_t nr_nics, const std::string& path) {
  auto model = builtin_models().get(m.name, path + "/name").create(m.params, path + "/params");
  std::vector<int> nics;
  if (m.nics.empty()) {
    for (std::size_t n = 0; n < nr_nics; ++n)
      nics.push_back(static_cast<int>(n));
  } else {
    for (auto n : m.nics)
      nics.push_back(static_cast<int>(n));
  }
  model->attach(k, nics);
  models.push_back(std::move(model));
  names.push_back(m.name);
}

Json Simulation::HostModels::report() const {
  Json out = Json::object();
  for (std::size_t i = 0; i < models.size(); ++i) {
    Json m = Json::object();
    models[i]->report(m);
    if (m.empty()) continue;
    std::string key = names[i];
    for (int k = 2; out.contains(key); ++k)
      key = names[i] + "#" + std::to_string(k);
    out[key] = m;
  }
  return out;
}

void Simulation::apply_change(std::size_t i) {
  attach_model(s_.changes.at(i).model, "/changes/" + std::to_string(i) + "/model");
}

void Simulation::set_lazy_rx(bool on) {
  kernel_->set_lazy_rx(on);
  for (auto& h : clients_)
    h->kernel->set_lazy_rx(on);
}

void Simulation::start() {
  workload_->start();
}

void Simulation::begin_measurement() {
  at_begin_ = kernel_->snapshot();
  for (auto& h : clients_)
    h->at_begin = h->kernel->snapshot();
  workload_->begin_measurement();
  if (interval_ > 0) {
    interval_begin_ = at_begin_;
    client_interval_begin_.clear();
    for (auto& h : clients_)
      client_interval_begin_.push_back(h->at_begin);
    interval_hist_.reset();
    if (const Histogram* hist = workload_->latency_histogram()) interval_hist_ = *hist;
    interval_completed_ = workload_->completed();
  }
}

void Simulation::end_measurement() {
  if (interval_ > 0 && host_.now() > interval_begin_.t) end_interval();
  at_end_ = kernel_->snapshot();
  for (auto& h : clients_)
    h->at_end = h->kernel->snapshot();
  workload_->end_measurement();
}

std::vector<ClientPath> Simulation::standalone_paths(const Scenario& s) {
  std::vector<ClientPath> paths;
  for (const ClientSpec& c : s.platform.clients) {
    ClientPath p;
    p.name = c.name;
    p.latency_ns = c.link_latency_ns;
    p.bandwidth_gbps = c.link_gbps;
    p.nic = static_cast<int>(c.nic);
    paths.push_back(p);
  }
  return paths;
}

void Simulation::run_standalone() {
  start();
  // Phase changes and scenario changes in time order (a change at the warm-up end comes first).
  std::size_t next = 0;
  auto advance_with_changes = [&](Nanos horizon) {
    for (; next < s_.changes.size(); ++next) {
      const Nanos at = from_seconds(s_.changes[next].at_s);
      if (at > horizon) break;
      host_.advance_to(at);
      apply_change(next);
    }
    host_.advance_to(horizon);
  };
  advance_with_changes(warmup_end_);
  begin_measurement();
  if (interval_ > 0) {
    for (Nanos t = warmup_end_ + interval_; t < run_end_; t += interval_) {
      advance_with_changes(t);
      end_interval();
    }
  }
  advance_with_changes(run_end_);
  end_measurement();
}

void Simulation::set_trace(Timeline& t) {
  kernel_->set_trace(&t, t.add_host("server", kernel_->nr_cpus()));
  for (auto& h : clients_)
    h->kernel->set_trace(&t, t.add_host(client_name(*h), h->kernel->nr_cpus()));
  if (workload_->trace_requests(t)) {
    kernel_->set_stamps(true);
    for (auto& h : clients_)
      h->kernel->set_stamps(true);
  }
}

void Simulation::set_explain() {
  if (!workload_->enable_breakdown()) {
    std::string msg =
        "latency attribution needs a workload with requests (tcp_rr, app, trace, mutilate, super_netperf, xsk_rr; app "
        "and trace with the default server_arch, persistent connections and no spin_us); \"";
    msg += s_.workload.type;
    msg += "\" does not";
    throw ConfigError("--explain", msg);
  }
  kernel_->set_stamps(true);
  for (auto& h : clients_)
    h->kernel->set_stamps(true);
}

Kernel* Simulation::client_kernel(int i) {
  for (auto& h : clients_)
    if (h->index == i) return h->kernel.get();
  return nullptr;
}

void Simulation::end_interval() {
  // One interval's figures, as the run's summary has them for the whole window: the latency
  // samples recorded since it began (the histogram's difference), transactions, CPU by class,
  // IRQs and drops of the server and each Linux client.
  Json iv;
  const Kernel::Snapshot now = kernel_->snapshot();
  const Nanos len = now.t - interval_begin_.t;
  iv["t_start_s"] = to_seconds(interval_begin_.t);
  iv["t_end_s"] = to_seconds(now.t);
  double transactions = static_cast<double>(workload_->completed() - interval_completed_);
  if (const Histogram* hist = workload_->latency_histogram()) {
    Histogram d = *hist;
    d.subtract(interval_hist_);
    transactions = static_cast<double>(d.count());
    iv["latency_ns"] = latency_json(d, report_percentiles({}));
    interval_hist_ = *hist;
  }
  iv["transactions"] = transactions;
  iv["throughput"] = len > 0 ? transactions / to_seconds(len) : 0.0;
  Json per_cpu;
  host_results(interval_begin_, now, transactions, iv, per_cpu);
  interval_begin_ = now;
  if (!clients_.empty()) {
    Json clients = Json::object();
    for (std::size_t i = 0; i < clients_.size(); ++i) {
      const Kernel::Snapshot cnow = clients_[i]->kernel->snapshot();
      Json c;
      host_results(client_interval_begin_[i], cnow, transactions, c, per_cpu);
      clients[client_name(*clients_[i])] = c;
      client_interval_begin_[i] = cnow;
    }
    iv["clients"] = clients;
  }
  interval_completed_ = workload_->completed();
  intervals_.push_back(std::move(iv));
}

Json Simulation::result(const Json& context) const {
  Json r;
  r["context"] = context;
  Json summary, workload;
  const Nanos measured = at_end_.t - at_begin_.t;
  summary["measured_s"] = to_seconds(measured);
  summary["time_start_ns"] = at_begin_.t;
  summary["time_end_ns"] = at_end_.t;
  workload_->report(summary, workload);
  // A workload reports the files it read as resolved for the run; results name them as the scenario
  // does, so that they do not depend on where the scenario is.
  const std::string params = "/workload/params/";
  for (const InputFile& f : s_.inputs)
    if (f.pointer.rfind(params, 0) == 0 && workload.contains(f.pointer.substr(params.size())))
      workload[f.pointer.substr(params.size())] = f.path;
  workload["test_length"] = s_.duration_s;
  const double transactions = summary.value("transactions", 0.0);
  Json per_cpu;
  host_results(at_begin_, at_end_, transactions, summary, per_cpu);
  r["workload"] = workload;
  r["summary"] = summary;
  r["conservation"] = workload_->conservation();
  r["per_cpu"] = per_cpu;
  Json models = models_.report();
  if (!models.empty()) r["models"] = models;
  // Linux client hosts: the same figures for each, keyed by its host name (cpu_us_per_op is the
  // client host's CPU per transaction of the whole run).
  if (!clients_.empty()) {
    Json clients = Json::object();
    for (const auto& h : clients_) {
      Json c;
      c["host"] = client_name(*h);
      Json cpus;
      host_results(h->at_begin, h->at_end, transactions, c, cpus);
      c["per_cpu"] = cpus;
      Json m = h->models.report();
      if (!m.empty()) c["models"] = m;
      clients[c["host"].get<std::string>()] = c;
    }
    r["clients"] = clients;
  }
  r["scenario"] = resolve_scenario(s_);
  if (const Histogram* h = workload_->latency_histogram()) r["histogram"] = h->to_json();
  if (Json b = workload_->latency_breakdown(); !b.is_null()) r["latency_breakdown"] = std::move(b);
  char fp[20];
  std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(host_.fingerprint()));
  r["fingerprint"] = fp;
  r["events"] = host_.events_processed();
  if (interval_ > 0) r["intervals"] = intervals_;
  return r;
}

}  // namespace napisim
