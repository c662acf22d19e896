// napisim: what results report of each host, declared once (see host_results.hpp).
#include "sim/scenario/host_results.hpp"

#include <array>
#include <cstdio>
#include <vector>

namespace napisim {

namespace {

double pct(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : 0.0;
}

/// A host's window [b, e] as the figures read it: counter differences, and CPU time by class
/// summed in one fixed order (CPU by CPU, class by class) so that every figure is reproducible.
struct Window {
  const Snapshot& b;
  const Snapshot& e;
  double transactions = 0;
  double measured = 0;  // ns
  int ncpu = 0;
  std::vector<std::array<double, kNumCpuClasses>> cpu_cls;  // per CPU: ns per class
  std::vector<double> cpu_busy;                             // per CPU: non-idle ns
  std::array<double, kNumCpuClasses> cls{};                 // the host's ns per class
  double busy = 0;                                          // the host's non-idle ns
  double psi_weighted = 0, nonidle_total = 0;               // psi.c: SOME weighted by NONIDLE

  Window(const Snapshot& b_, const Snapshot& e_, double transactions_)
      : b(b_)
      , e(e_)
      , transactions(transactions_)
      , measured(static_cast<double>(e_.t - b_.t))
      , ncpu(static_cast<int>(e_.cpu_time.size())) {
    cpu_cls.resize(static_cast<std::size_t>(ncpu));
    cpu_busy.resize(static_cast<std::size_t>(ncpu));
    for (std::size_t u = 0; u < static_cast<std::size_t>(ncpu); ++u) {
      double cbusy = 0;
      for (std::size_t k = 0; k < kNumCpuClasses; ++k) {
        const double d = static_cast<double>(e.cpu_time[u][k] - b.cpu_time[u][k]);
        cpu_cls[u][k] = d;
        cls[k] += d;
        if (k != static_cast<std::size_t>(CpuClass::kIdle)) cbusy += d;
      }
      cpu_busy[u] = cbusy;
      busy += cbusy;
      const double nonidle = static_cast<double>(e.psi_nonidle[u] - b.psi_nonidle[u]);
      psi_weighted += psi_some(static_cast<int>(u)) * nonidle;
      nonidle_total += nonidle;
    }
  }
  std::uint64_t delta(Counter c) const { return e[c] - b[c]; }
  std::uint64_t delta(int cpu, Counter c) const { return e.cpu(cpu, c) - b.cpu(cpu, c); }
  double psi_some(int cpu) const {
    const auto u = static_cast<std::size_t>(cpu);
    return static_cast<double>(e.psi_some[u] - b.psi_some[u]);
  }
};

Json by_class(const std::array<double, kNumCpuClasses>& ns, double whole) {
  Json by = Json::object();
  for (std::size_t k = 0; k < kNumCpuClasses; ++k)
    by[cpu_class_name(static_cast<CpuClass>(k))] = pct(ns[k], whole);
  return by;
}

/// One reported figure: `key` ("group.name" nests it in the object "group"), unit, description,
/// JSON type and value.
template <class... Args>
struct Figure {
  const char* key;
  const char* unit;
  const char* type;  // JSON Schema type: "integer", "number" or "object"
  const char* doc;
  Json (*value)(const Window&, Args...);
};
using HostFigure = Figure<>;
using CpuFigure = Figure<int>;

Json count(std::uint64_t v) {
  return v;
}
/// The value of a figure that reports one counter: its difference over the window, host-wide or
/// on one CPU.
template <Counter C>
Json counted(const Window& w) {
  return count(w.delta(C));
}
template <Counter C>
Json counted_on_cpu(const Window& w, int c) {
  return count(w.delta(c, C));
}

// The host-wide figures, in the order results print them.
const HostFigure kHostFigures[] = {
    {"cpu.busy_pct", "%", "number", "CPU time not idle, over all CPUs",
     [](const Window& w) -> Json { return pct(w.busy, w.measured * w.ncpu); }},
    {"cpu.busy_cpus", "CPUs", "number", "CPU time not idle, in CPUs kept busy",
     [](const Window& w) -> Json { return w.busy / (w.measured > 0 ? w.measured : 1); }},
    {"cpu.cpu_us_per_op", "us", "number", "CPU time not idle per transaction (0 without transactions)",
     [](const Window& w) -> Json { return w.transactions > 0 ? w.busy / w.transactions / 1000.0 : 0.0; }},
    {"cpu.by_class_pct", "%", "object",
     "CPU time by class over all CPUs: idle, hardirq, softirq, ksoftirqd, kthread (NAPI kthreads, kworkers), "
     "user, system, busy_poll (polls that processed packets), busy_spin (busy polling that found none)",
     [](const Window& w) -> Json { return by_class(w.cls, w.measured * w.ncpu); }},
    {"irqs", "interrupts", "integer", "NIC completion interrupts, all queues", counted<Counter::kNicIrqs>},
    {"irqs_all", "interrupts", "integer", "hard interrupts of every source (NIC, timer tick, IPIs), all CPUs",
     counted<Counter::kIrqs>},
    {"packets_per_irq", "packets", "number", "RX segments per NIC interrupt (0 without interrupts)",
     [](const Window& w) -> Json {
       const std::uint64_t irqs = w.delta(Counter::kNicIrqs);
       return irqs > 0 ? static_cast<double>(w.delta(Counter::kRxPackets)) / static_cast<double>(irqs) : 0.0;
     }},
    {"rx_packets", "segments", "integer", "segments that entered the NICs' RX rings", counted<Counter::kRxPackets>},
    {"tx_packets", "segments", "integer", "segments the NICs transmitted", counted<Counter::kTxPackets>},
    {"ring_drops", "segments", "integer", "segments dropped on a full RX ring", counted<Counter::kRingDrops>},
    {"backlog_drops", "packets", "integer", "packets dropped by enqueue_to_backlog() (netdev_max_backlog, flow_limit)",
     counted<Counter::kBacklogDrops>},
    {"received_rps", "IPIs", "integer", "RPS IPIs received", counted<Counter::kReceivedRps>},
    {"time_squeeze", "rounds", "integer", "net_rx_action() rounds that stopped with work left (budget or time)",
     counted<Counter::kTimeSqueeze>},
    {"napi_polls", "polls", "integer", "napi_poll() calls of the NICs' NAPIs", counted<Counter::kNapiPolls>},
    {"napi_full_polls", "polls", "integer", "NAPI polls that used their whole weight",
     counted<Counter::kNapiFullPolls>},
    {"context_switches", "switches", "integer", "context switches, all CPUs", counted<Counter::kContextSwitches>},
    {"wakeups", "wakeups", "integer", "try_to_wake_up() of any task", counted<Counter::kWakeups>},
    {"migrations", "migrations", "integer", "tasks moved to another CPU", counted<Counter::kMigrations>},
    {"thread_wakeups.count", "wakeups", "integer",
     "wakeups of the workload's threads (user tasks; /proc/<pid>/sched nr_wakeups, summed)",
     counted<Counter::kThreadWakeups>},
    {"thread_wakeups.local", "wakeups", "integer", "of them, onto the waking CPU (nr_wakeups_local)",
     counted<Counter::kThreadWakeupsLocal>},
    {"thread_wakeups.remote", "wakeups", "integer", "onto another CPU than the waking one (nr_wakeups_remote)",
     [](const Window& w) { return count(w.delta(Counter::kThreadWakeups) - w.delta(Counter::kThreadWakeupsLocal)); }},
    {"thread_wakeups.migrate", "wakeups", "integer",
     "onto another CPU than the one the thread last ran on (nr_wakeups_migrate)",
     counted<Counter::kThreadWakeupsMigrate>},
    {"thread_wakeups.sync", "wakeups", "integer", "with WF_SYNC (nr_wakeups_sync)",
     counted<Counter::kThreadWakeupsSync>},
    {"thread_wakeups.affine_attempts", "wakeups", "integer",
     "that asked wake_affine() to choose between the waking and the previous CPU (nr_wakeups_affine_attempts)",
     counted<Counter::kThreadWakeupsAffineAttempts>},
    {"thread_wakeups.affine", "wakeups", "integer", "that wake_affine() pulled to the waking CPU (nr_wakeups_affine)",
     counted<Counter::kThreadWakeupsAffine>},
    {"thread_wakeups.onto_softirq", "wakeups", "integer",
     "napisim's own: placed on a CPU that was running softirq work (in interrupt context or ksoftirqd) or a "
     "NAPI kernel thread at that moment, which the thread then waits behind",
     counted<Counter::kThreadWakeupsOntoSoftirq>},
    {"tcp.retrans_segs", "segments", "integer",
     "segments the kernel's TCP retransmitted (connections to a Linux client host; sim/kernel/tcp.hpp)",
     counted<Counter::kTcpRetransSegs>},
    {"tcp.fast_retrans", "segments", "integer", "of them, retransmitted by fast recovery (RACK)",
     counted<Counter::kTcpFastRetrans>},
    {"tcp.loss_probes", "probes", "integer", "tail loss probes sent", counted<Counter::kTcpLossProbes>},
    {"tcp.timeouts", "timeouts", "integer", "retransmission timeouts (RTO)", counted<Counter::kTcpTimeouts>},
    {"tcp.recoveries", "recoveries", "integer", "fast recoveries started", counted<Counter::kTcpRecoveries>},
    {"tcp.delayed_acks", "ACKs", "integer", "ACKs sent by the delayed-ACK timer", counted<Counter::kTcpDelayedAcks>},
    {"tcp.tsq_throttled", "times", "integer", "times TCP Small Queues stopped a flow until a TX completion",
     counted<Counter::kTcpTsqThrottled>},
    {"switch_drops", "segments", "integer",
     "segments the switch's egress buffer in front of this host's NICs dropped (NicParams switch_buffer_bytes)",
     counted<Counter::kSwitchDrops>},
    {"events", "events", "integer",
     "napisim's own work, not a kernel figure: the simulator events this host's kernel model handled (the "
     "rest of a run's events are its workload's)",
     counted<Counter::kEvents>},
    {"psi_cpu_some_pct", "%", "number",
     "PSI cpu some: time with a runnable task waiting, per CPU weighted by its non-idle time (psi.c)",
     [](const Window& w) -> Json {
       return w.nonidle_total > 0 ? pct(w.psi_weighted / w.nonidle_total, w.measured) : 0.0;
     }},
};

// Each CPU's figures, in the order results print them.
const CpuFigure kCpuFigures[] = {
    {"cpu", "", "integer", "the CPU's number", [](const Window&, int c) -> Json { return c; }},
    {"busy_pct", "%", "number", "CPU time not idle",
     [](const Window& w, int c) -> Json { return pct(w.cpu_busy[static_cast<std::size_t>(c)], w.measured); }},
    {"by_class_pct", "%", "object", "CPU time by class (the classes of cpu.by_class_pct)",
     [](const Window& w, int c) -> Json { return by_class(w.cpu_cls[static_cast<std::size_t>(c)], w.measured); }},
    {"irqs", "interrupts", "integer", "hard interrupts of every source on this CPU", counted_on_cpu<Counter::kIrqs>},
    {"context_switches", "switches", "integer", "context switches on this CPU",
     counted_on_cpu<Counter::kContextSwitches>},
    {"time_squeeze", "rounds", "integer", "this CPU's net_rx_action() rounds that stopped with work left",
     counted_on_cpu<Counter::kTimeSqueeze>},
    {"processed", "packets", "integer", "packets this CPU's NET_RX took (softnet_stat processed)",
     counted_on_cpu<Counter::kProcessed>},
    {"ksoftirqd_wakeups", "wakeups", "integer", "wakeups of this CPU's ksoftirqd",
     counted_on_cpu<Counter::kKsoftirqdWakeups>},
    {"psi_some_pct", "%", "number", "PSI cpu some on this CPU: time with a runnable task waiting",
     [](const Window& w, int c) -> Json { return pct(w.psi_some(c), w.measured); }},
};

/// Sets `key` of `obj`, nesting "group.name" in the object "group".
void put(Json& obj, const std::string& key, Json v) {
  const auto dot = key.find('.');
  if (dot == std::string::npos)
    obj[key] = std::move(v);
  else
    obj[key.substr(0, dot)][key.substr(dot + 1)] = std::move(v);
}

template <class F>
Json schema_of(const F& figures) {
  Json props = Json::object();
  for (const auto& f : figures) {
    Json p{{"type", f.type}, {"description", f.doc}};
    if (*f.unit) p["x-unit"] = f.unit;
    if (std::string(f.type) == "object") p["additionalProperties"] = Json{{"type", "number"}};
    const std::string key = f.key;
    const auto dot = key.find('.');
    if (dot == std::string::npos) {
      props[key] = p;
    } else {
      Json& group = props[key.substr(0, dot)];
      group["type"] = "object";
      group["properties"][key.substr(dot + 1)] = p;
    }
  }
  return Json{{"type", "object"}, {"properties", props}};
}

template <class F>
void markdown_table(std::string& out, const F& figures) {
  out += "| key | unit | type | description |\n|---|---|---|---|\n";
  for (const auto& f : figures)
    out += std::string("| `") + f.key + "` | " + f.unit + " | " + f.type + " | " + f.doc + " |\n";
}

}  // namespace

void host_results(const Snapshot& b, const Snapshot& e, double transactions, Json& summary, Json& per_cpu) {
  const Window w(b, e, transactions);
  per_cpu = Json::array();
  for (int c = 0; c < w.ncpu; ++c) {
    Json pc;
    for (const CpuFigure& f : kCpuFigures)
      put(pc, f.key, f.value(w, c));
    per_cpu.push_back(std::move(pc));
  }
  for (const HostFigure& f : kHostFigures)
    put(summary, f.key, f.value(w));
}

Json host_results_schema() {
  return Json{{"host", schema_of(kHostFigures)}, {"per_cpu", schema_of(kCpuFigures)}};
}

std::string host_results_markdown() {
  std::string out =
      "# What results report of each host\n\n"
      "Generated by `napisim describe results` from sim/scenario/host_results.cpp, where each figure\n"
      "is declared once; `napisim schema --results` gives the same as JSON Schema. The server's\n"
      "figures are in a result's `summary` and `per_cpu`, each Linux client host's in\n"
      "`clients.<host>` (its CPUs under `per_cpu`), each interval's in `intervals[]`. Counts and times\n"
      "cover the measured window (or the interval).\n\n"
      "## Host-wide (`summary`, `clients.<host>`, `intervals[]`)\n\n";
  markdown_table(out, kHostFigures);
  out += "\n## Each CPU (`per_cpu[]`, `clients.<host>.per_cpu[]`)\n\n";
  markdown_table(out, kCpuFigures);
  out += "\n## The counters they read (sim/kernel/counters.hpp)\n\n| counter | kept per | mirrors |\n|---|---|---|\n";
  static const char* const kScope[] = {"CPU", "NIC queue", "task", "host"};
  for (const CounterDef& d : counter_defs())
    out += std::string("| ") + d.name + " | " + kScope[static_cast<std::size_t>(d.scope)] + " | " + d.source + " |\n";
  return out;
}

}  // namespace napisim
