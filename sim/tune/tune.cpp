// napisim tune (see tune.hpp).
#include "sim/tune/tune.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>

#include "sim/calibrate/runner.hpp"
#include "sim/core/error.hpp"
#include "sim/simgrid/run.hpp"

namespace napisim::tune {

namespace {

// The objective's summary metric.
struct Objective {
  const char* name;
  const char* pointer;
};
constexpr Objective kObjectives[] = {{"p50", "/latency_ns/p50"},
                                     {"p90", "/latency_ns/p90"},
                                     {"p99", "/latency_ns/p99"},
                                     {"p99.9", "/latency_ns/p99.9"},
                                     {"mean", "/latency_ns/mean"}};
constexpr const char* kCpu = "/cpu/busy_cpus";
constexpr const char* kCpuPct = "/cpu/busy_pct";
constexpr const char* kThroughput = "/throughput";

const char* const kStrategies[] = {"softirq", "threaded", "defer", "suspend", "busy_poll", "threaded_busy_poll", "rps"};

// v with `digits` significant digits (%g), a sign when `plus`.
std::string fmt(double v, int digits = 4, bool plus = false) {
  char b[64];
  std::snprintf(b, sizeof b, plus ? "%+.*g" : "%.*g", digits, v);
  return b;
}

std::int64_t nr_cpus_of(const Json& r) {
  const Json& t = r["topology"];
  return t["numa_nodes"].get<std::int64_t>() * t["llcs_per_node"].get<std::int64_t>() *
         t["cores_per_llc"].get<std::int64_t>() * t["threads_per_core"].get<std::int64_t>();
}

// The CPUs of a NUMA node in napisim's numbering (sim/hw/topology.hpp), as a cpulist.
std::string node_cpulist(const Json& r, std::int64_t node) {
  const Json& t = r["topology"];
  const std::int64_t per_node = t["llcs_per_node"].get<std::int64_t>() * t["cores_per_llc"].get<std::int64_t>();
  const std::int64_t cores = per_node * t["numa_nodes"].get<std::int64_t>();
  std::string s;
  for (std::int64_t th = 0; th < t["threads_per_core"].get<std::int64_t>(); ++th) {
    const std::int64_t a = th * cores + node * per_node;
    if (!s.empty()) s += ',';  // appended piecewise: GCC 12's -Wrestrict false positive on "" + string
    s += std::to_string(a);
    if (per_node > 1) s += "-" + std::to_string(a + per_node - 1);
  }
  return s;
}

// A cpulist ("0-7,16") as the kernel's hex cpumask ("00000000,000100ff"): 32-bit words, high first.
std::string hex_mask(const std::string& cpulist, std::int64_t nr_cpus) {
  std::vector<std::uint32_t> words(static_cast<std::size_t>((nr_cpus + 31) / 32), 0);
  std::size_t i = 0;
  while (i < cpulist.size()) {
    std::size_t e = cpulist.find(',', i);
    if (e == std::string::npos) e = cpulist.size();
    const std::string g = cpulist.substr(i, e - i);
    const std::size_t dash = g.find('-');
    const long a = std::stol(g.substr(0, dash)), b = dash == std::string::npos ? a : std::stol(g.substr(dash + 1));
    for (long c = a; c <= b && c < nr_cpus; ++c)
      words[static_cast<std::size_t>(c / 32)] |= 1U << (c % 32);
    i = e + 1;
  }
  std::string s;
  for (std::size_t w = words.size(); w-- > 0;) {
    char b[16];
    std::snprintf(b, sizeof b, "%08x", words[w]);
    if (!s.empty()) s += ',';
    s += b;
  }
  return s;
}

Json model(const char* name, Json params = Json::object()) {
  return Json{{"name", name}, {"params", std::move(params)}, {"nics", Json::array()}};
}

struct Stats {
  double mean = 0, ci95 = 0;
};
Stats stats_of(const std::vector<double>& xs) {
  const calibrate::MeanCi m = calibrate::mean_ci95(xs);
  return {m.mean, m.ci95};
}

// Pareto layers of points (lower is better in both), each layer in input order.
std::vector<std::vector<std::size_t>> pareto_layers(const std::vector<std::pair<double, double>>& pts) {
  std::vector<std::vector<std::size_t>> layers;
  std::vector<bool> taken(pts.size(), false);
  std::size_t left = pts.size();
  while (left > 0) {
    std::vector<std::size_t> layer;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      if (taken[i]) continue;
      bool dominated = false;
      for (std::size_t j = 0; j < pts.size() && !dominated; ++j)
        dominated = j != i && !taken[j] && pts[j].first <= pts[i].first && pts[j].second <= pts[i].second &&
                    (pts[j].first < pts[i].first || pts[j].second < pts[i].second);
      if (!dominated) layer.push_back(i);
    }
    for (std::size_t i : layer)
      taken[i] = true;
    left -= layer.size();
    layers.push_back(std::move(layer));
  }
  return layers;
}

}  // namespace

std::vector<std::string> strategy_names() {
  return {std::begin(kStrategies), std::end(kStrategies)};
}

Json apply_sets(Json resolved, const Json& sets) {
  for (const auto& [ptr, value] : sets.items())
    resolved[Json::json_pointer(ptr)] = value;
  return resolved;
}

Json candidates(const Json& resolved, const std::vector<std::string>& strategies) {
  const Json& nics = resolved["nics"];
  // The client hosts stay as they are in every candidate: a client "like" the server would
  // otherwise inherit the server's models, NIC and sysctls under test.
  // The resolved clients spell out what they inherited, so they keep it whatever the server gets.
  Json fixed = Json::object();
  const Json& clients = resolved["platform"]["clients"];
  for (const Json& c : clients)
    if (c.value("stack", "auto") != "idealised") fixed["/platform/clients"] = clients;

  Json out = Json::array();
  auto add = [&](const std::string& strategy, const std::string& label, Json models, Json extra) {
    Json sets = fixed;
    sets["/models"] = std::move(models);
    // Every candidate states the knobs the search moves, so each is a complete configuration.
    sets["/kernel/net/busy_poll"] = 0;
    sets["/kernel/net/busy_read"] = 0;
    sets["/kernel/net/netdev_budget"] = 300;
    for (std::size_t i = 0; i < nics.size(); ++i) {
      const std::string n = "/nics/" + std::to_string(i) + "/";
      sets[n + "napi_defer_hard_irqs"] = 0;
      sets[n + "gro_flush_timeout_ns"] = 0;
    }
    for (const auto& [k, v] : extra.items())
      sets[k] = v;
    out.push_back(Json{{"id", strategy + ": " + label}, {"strategy", strategy}, {"label", label}, {"sets", sets}});
  };
  auto want = [&](const char* s) {
    return strategies.empty() || std::find(strategies.begin(), strategies.end(), s) != strategies.end();
  };
  auto each_nic = [&](const char* key, const Json& v) {
    Json e = Json::object();
    for (std::size_t i = 0; i < nics.size(); ++i)
      e["/nics/" + std::to_string(i) + "/" + key] = v;
    return e;
  };
  auto merge = [](Json a, const Json& b) {
    for (const auto& [k, v] : b.items())
      a[k] = v;
    return a;
  };
  const Json irq = model("napi_irq");
  // The scenario as given (its own knobs), the baseline every change is paired against.
  out.push_back(Json{{"id", "current"}, {"strategy", "current"}, {"label", "the scenario as given"}, {"sets", fixed}});

  if (want("softirq")) {
    add("softirq", "netdev_budget=300", Json::array({irq}), {});
    add("softirq", "netdev_budget=1200", Json::array({irq}), {{"/kernel/net/netdev_budget", 1200}});
    add("softirq", "rx-usecs=0", Json::array({irq}),
        merge(merge(each_nic("adaptive_rx", false), each_nic("rx_usecs", 0)), each_nic("rx_frames", 1)));
    add("softirq", "rx-usecs=32", Json::array({irq}), merge(each_nic("adaptive_rx", false), each_nic("rx_usecs", 32)));
    add("softirq", "adaptive-rx", Json::array({irq}), each_nic("adaptive_rx", true));
  }
  if (want("threaded")) {
    std::string irq_cpus;
    for (const Json& n : nics) {
      const std::string a = n.value("irq_affinity", "");
      const std::string c = a.empty() ? node_cpulist(resolved, n.value("numa_node", std::int64_t{0})) : a;
      irq_cpus += (irq_cpus.empty() ? "" : ",") + c;
    }
    add("threaded", "nice 0", Json::array({irq, model("napi_threaded")}), {});
    add("threaded", "nice -20", Json::array({irq, model("napi_threaded", {{"nice", -20}})}), {});
    add("threaded", "nice 0, taskset IRQ CPUs", Json::array({irq, model("napi_threaded", {{"cpumask", irq_cpus}})}),
        {});
    add("threaded", "FIFO 50, taskset IRQ CPUs",
        Json::array({irq, model("napi_threaded", {{"policy", "fifo"}, {"rt_priority", 50}, {"cpumask", irq_cpus}})}),
        {});
  }
  if (want("defer"))
    for (std::int64_t d : {2, 100})
      for (std::int64_t g : {10000, 20000, 50000, 200000})
        add("defer", "defer_hard_irqs=" + std::to_string(d) + " gro_flush_timeout=" + std::to_string(g / 1000) + "us",
            Json::array({irq, model("napi_defer_irq", {{"defer_hard_irqs", d}, {"gro_flush_timeout_ns", g}})}), {});
  if (want("suspend"))
    for (std::int64_t g : {20000, 50000})
      add("suspend", "irq_suspend_timeout=20ms gro_flush_timeout=" + std::to_string(g / 1000) + "us",
          Json::array(
              {irq, model("napi_defer_irq", {{"defer_hard_irqs", 100}, {"gro_flush_timeout_ns", g}}),
               model("irq_suspend",
                     {{"irq_suspend_timeout_ns", 20000000}, {"busy_poll_usecs", 0}, {"busy_poll_budget", 64}})}),
          {});
  if (want("busy_poll")) {
    struct B {
      std::int64_t gft, usecs, budget;
    };
    for (const B b : {B{200000, 64, 8}, B{200000, 64, 64}, B{200000, 1000, 64}, B{5000000, 1000, 64}})
      add("busy_poll",
          "epoll busy_poll_usecs=" + std::to_string(b.usecs) + " budget=" + std::to_string(b.budget) +
              " gro_flush_timeout=" + std::to_string(b.gft / 1000) + "us",
          Json::array(
              {irq, model("napi_defer_irq", {{"defer_hard_irqs", 100}, {"gro_flush_timeout_ns", b.gft}}),
               model("epoll_busy_poll",
                     {{"busy_poll_usecs", b.usecs}, {"busy_poll_budget", b.budget}, {"prefer_busy_poll", true}})}),
          {});
    add("busy_poll", "sysctl net.core.busy_poll=50", Json::array({irq}), {{"/kernel/net/busy_poll", 50}});
  }
  if (want("threaded_busy_poll"))
    add("threaded_busy_poll", "a pinned kthread per NAPI", Json::array({irq, model("threaded_busy_poll")}), {});
  if (want("rps")) {
    std::string node_cpus;
    for (const Json& n : nics)
      node_cpus = node_cpulist(resolved, n.value("numa_node", std::int64_t{0}));
    add("rps", "RPS over the NIC node's CPUs",
        Json::array({irq, model("rps_rfs", {{"rps_cpus", node_cpus}, {"rps_sock_flow_entries", 0}})}), {});
    add("rps", "RFS (rps_sock_flow_entries=32768)",
        Json::array({irq, model("rps_rfs", {{"rps_cpus", node_cpus}, {"rps_sock_flow_entries", 32768}})}), {});
  }
  return out;
}

Json load_sets(const Json& resolved, double factor, std::string* how) {
  const Json& w = resolved["workload"];
  const std::string type = w.value("type", "");
  const Json& p = w["params"];
  auto scaled_int = [&](const char* key) {
    const auto v = std::max<std::int64_t>(1, std::llround(static_cast<double>(p[key].get<std::int64_t>()) * factor));
    *how = std::string(key) + " " + std::to_string(p[key].get<std::int64_t>()) + " -> " + std::to_string(v);
    return Json{{"/workload/params/" + std::string(key), v}};
  };
  auto scaled = [&](const char* key) {
    const double v = p[key].get<double>() * factor;
    *how = std::string(key) + " " + fmt(p[key].get<double>()) + " -> " + fmt(v);
    return Json{{"/workload/params/" + std::string(key), v}};
  };
  if (type == "mutilate") return p["qps"].get<double>() > 0 ? scaled("qps") : scaled_int("connections");
  if (type == "app") return p.value("load", "closed") == "open" ? scaled("rate_rps") : scaled_int("num_flows");
  if (type == "trace") return scaled("rate_scale");
  if (type == "tcp_rr") return scaled_int("num_flows");
  if (type == "super_netperf") return scaled_int("num_instances");
  if (type == "stream") return scaled_int("num_streams");
  throw ConfigError("/workload/type", "tune cannot scale the load of workload \"" + type + "\"");
}

std::vector<std::string> host_commands(const Json& c) {
  std::vector<std::string> cmd;
  const Json& net = c["kernel"]["net"];
  const std::int64_t hz = c["kernel"].value("hz", std::int64_t{1000});
  const std::int64_t nr = nr_cpus_of(c);
  const std::int64_t budget_usecs = net.value("netdev_budget_usecs", std::int64_t{0});
  cmd.push_back("sysctl -w net.core.netdev_budget=" + std::to_string(net.value("netdev_budget", std::int64_t{300})));
  cmd.push_back("sysctl -w net.core.netdev_budget_usecs=" +
                std::to_string(budget_usecs > 0 ? budget_usecs : 2 * 1000000 / hz));
  cmd.push_back("sysctl -w net.core.dev_weight=" + std::to_string(net.value("dev_weight", std::int64_t{64})));
  cmd.push_back("sysctl -w net.core.busy_poll=" + std::to_string(net.value("busy_poll", std::int64_t{0})));
  cmd.push_back("sysctl -w net.core.busy_read=" + std::to_string(net.value("busy_read", std::int64_t{0})));
  const Json& models = c["models"];
  std::int64_t rfs_entries = 0;
  std::vector<std::string> app;
  for (std::size_t i = 0; i < c["nics"].size(); ++i) {
    const Json& nic = c["nics"][i];
    const std::string dev = nic["name"].get<std::string>();
    const std::string sys = "/sys/class/net/" + dev + "/";
    auto applies = [&](const Json& m) {
      const Json& ns = m["nics"];
      return ns.empty() || std::find(ns.begin(), ns.end(), Json(static_cast<std::int64_t>(i))) != ns.end();
    };
    // The last model of a kind that applies to this NIC is the one in force (models apply in order).
    auto find = [&](const char* name) -> const Json* {
      const Json* f = nullptr;
      for (const Json& m : models)
        if (m["name"] == name && applies(m)) f = &m;
      return f;
    };
    cmd.push_back("ethtool -C " + dev + " adaptive-rx " + (nic["adaptive_rx"].get<bool>() ? "on" : "off") +
                  " rx-usecs " + std::to_string(nic["rx_usecs"].get<std::int64_t>()) + " rx-frames " +
                  std::to_string(nic["rx_frames"].get<std::int64_t>()));
    const Json* threaded = find("napi_threaded");
    const Json* tbp = find("threaded_busy_poll");
    cmd.push_back("echo " + std::string(threaded ? "1" : "0") + " > " + sys + "threaded");
    std::int64_t defer = nic["napi_defer_hard_irqs"].get<std::int64_t>();
    std::int64_t gft = nic["gro_flush_timeout_ns"].get<std::int64_t>();
    if (const Json* d = find("napi_defer_irq")) {
      defer = d->at("params").value("defer_hard_irqs", defer);
      gft = d->at("params").value("gro_flush_timeout_ns", gft);
    }
    cmd.push_back("echo " + std::to_string(defer) + " > " + sys + "napi_defer_hard_irqs");
    cmd.push_back("echo " + std::to_string(gft) + " > " + sys + "gro_flush_timeout");
    const std::string each_kthread = "for p in $(pgrep '^napi/" + dev + "-'); do ";
    if (threaded) {
      const Json& p = threaded->at("params");
      if (p.value("policy", "normal") == "fifo")
        cmd.push_back(each_kthread + "chrt -f -p " + std::to_string(p.value("rt_priority", std::int64_t{50})) +
                      " $p; done");
      else
        cmd.push_back(each_kthread + "renice -n " + std::to_string(p.value("nice", std::int64_t{0})) + " -p $p; done");
      if (!p.value("cpumask", "").empty())
        cmd.push_back(each_kthread + "taskset -pc " + p.value("cpumask", "") + " $p; done");
      if (p.value("pin_to_irq_cpu", false))
        cmd.push_back("# pin each napi/" + dev +
                      "-<id> kthread to the CPU of its queue's IRQ: taskset -pc CPU PID (napi-get lists each NAPI's "
                      "irq and pid)");
    }
    const std::string each_napi =
        "for id in $(ynl --family netdev --dump napi-get --json \"{\\\"ifindex\\\": $(cat " + sys +
        "ifindex)}\" --output-json | jq '.[].id'); do ynl --family netdev --do napi-set --json \"{\\\"id\\\": $id, ";
    if (const Json* s = find("irq_suspend")) {
      const Json& p = s->at("params");
      cmd.push_back(each_napi + "\\\"irq-suspend-timeout\\\": " +
                    std::to_string(p["irq_suspend_timeout_ns"].get<std::int64_t>()) + "}\"; done");
      app.push_back(
          "# application: ioctl(epfd, EPIOCSPARAMS, {busy_poll_usecs = " +
          std::to_string(p["busy_poll_usecs"].get<std::int64_t>()) +
          ", busy_poll_budget = " + std::to_string(p["busy_poll_budget"].get<std::int64_t>()) +
          ", prefer_busy_poll = 1}) on each worker's epoll fd (Linux 6.9+; set by the application, not the host)");
    }
    if (tbp) {
      cmd.push_back(each_napi + "\\\"threaded\\\": \\\"busy-poll\\\"}\"; done");
      cmd.push_back("# pin each napi/" + dev + "-<id> kthread to its own CPU (napisim: CPUs " +
                    (tbp->at("params").value("cpus", "").empty() ? nic.value("irq_affinity", "")
                                                                 : tbp->at("params").value("cpus", "")) +
                    " in queue order): taskset -pc CPU PID");
    }
    const Json* rps = find("rps_rfs");
    const std::string rps_cpus = rps ? rps->at("params").value("rps_cpus", "") : "";
    const std::string mask = rps ? hex_mask(rps_cpus.empty() ? "0-" + std::to_string(nr - 1) : rps_cpus, nr) : "0";
    cmd.push_back("for q in " + sys + "queues/rx-*; do echo " + mask + " > $q/rps_cpus; done");
    if (rps) {
      const Json& p = rps->at("params");
      const std::int64_t entries = p["rps_sock_flow_entries"].get<std::int64_t>();
      std::int64_t cnt = p["rps_flow_cnt"].get<std::int64_t>();
      if (cnt == 0) cnt = std::max<std::int64_t>(1, entries / nic["queues"].get<std::int64_t>());
      std::int64_t pow2 = 1;
      while (pow2 < cnt)
        pow2 <<= 1;  // what store_rps_dev_flow_table_cnt() rounds it to
      rfs_entries = std::max(rfs_entries, entries);
      if (entries > 0)
        cmd.push_back("for q in " + sys + "queues/rx-*; do echo " + std::to_string(pow2) + " > $q/rps_flow_cnt; done");
    }
  }
  cmd.push_back("sysctl -w net.core.rps_sock_flow_entries=" + std::to_string(rfs_entries));
  for (const Json& m : models)
    if (m["name"] == "epoll_busy_poll") {
      const Json& p = m["params"];
      app.push_back("# application: ioctl(epfd, EPIOCSPARAMS, {busy_poll_usecs = " +
                    std::to_string(p["busy_poll_usecs"].get<std::int64_t>()) +
                    ", busy_poll_budget = " + std::to_string(p["busy_poll_budget"].get<std::int64_t>()) +
                    ", prefer_busy_poll = " + (p["prefer_busy_poll"].get<bool>() ? "1" : "0") +
                    "}) on each worker's epoll fd (Linux 6.9+; set by the application, not the host)");
    }
  cmd.insert(cmd.end(), app.begin(), app.end());
  return cmd;
}

Json run_tune(const Json& resolved, const TuneOptions& opt, const RunBatch& run) {
  const Objective* obj = nullptr;
  for (const Objective& o : kObjectives)
    if (opt.objective == o.name) obj = &o;
  if (!obj) throw ConfigError("--objective", "expected p50, p90, p99, p99.9 or mean, got \"" + opt.objective + "\"");
  if (opt.eta < 2 || opt.eta > 10)
    throw ConfigError("--eta", "expected an integer in [2, 10], got " + std::to_string(opt.eta));
  if (opt.rungs < 1 || opt.rungs > 6)
    throw ConfigError("--rungs", "expected an integer in [1, 6], got " + std::to_string(opt.rungs));
  for (const std::string& s : opt.strategies)
    if (std::find(std::begin(kStrategies), std::end(kStrategies), s) == std::end(kStrategies))
      throw ConfigError("--strategies", "unknown strategy \"" + s +
                                            "\"; expected softirq, threaded, defer, suspend, busy_poll, "
                                            "threaded_busy_poll or rps");
  const std::int64_t nr = nr_cpus_of(resolved);
  double cpu_limit = -1;  // in busy CPUs
  if (!opt.cpu_budget.empty()) {
    const bool pct = opt.cpu_budget.back() == '%';
    const std::string num = pct ? opt.cpu_budget.substr(0, opt.cpu_budget.size() - 1) : opt.cpu_budget;
    char* end = nullptr;
    const double v = std::strtod(num.c_str(), &end);
    if (num.empty() || end != num.c_str() + num.size() || !(v > 0) || (pct && v > 100) ||
        (!pct && v > static_cast<double>(nr)))
      throw ConfigError("--cpu-budget", "expected a share of the host's " + std::to_string(nr) +
                                            " CPUs such as 20% or a number of CPUs in (0, " + std::to_string(nr) +
                                            "], got \"" + opt.cpu_budget + "\"");
    cpu_limit = pct ? v / 100.0 * static_cast<double>(nr) : v;
  }
  std::vector<std::int64_t> seeds = opt.seeds.empty() ? std::vector<std::int64_t>{1, 2, 3, 4, 5} : opt.seeds;
  if (std::set<std::int64_t>(seeds.begin(), seeds.end()).size() != seeds.size())
    throw ConfigError("--seeds", "expected distinct seeds");
  const double D = opt.duration_s > 0 ? opt.duration_s : resolved["duration_s"].get<double>();
  const Json cands = candidates(resolved, opt.strategies);
  const std::vector<std::string> metrics = {obj->pointer, kCpu, kCpuPct, kThroughput};

  // Per candidate and rung: the values of each seed.
  struct Sample {
    std::vector<double> obj, cpu, tput;
  };
  auto run_set = [&](const std::vector<std::size_t>& who, std::size_t nseeds, double dur, const Json& extra,
                     const std::string& tag) {
    std::vector<Job> jobs;
    for (std::size_t c : who)
      for (std::size_t s = 0; s < nseeds; ++s) {
        Job j;
        j.key =
            cands[c]["id"].get<std::string>() + " @" + fmt(dur, 6) + "s" + tag + " seed " + std::to_string(seeds[s]);
        j.sets = cands[c]["sets"];
        j.sets["/duration_s"] = dur;
        for (const auto& [k, v] : extra.items())
          j.sets[k] = v;
        j.seed = seeds[s];
        jobs.push_back(std::move(j));
      }
    const auto res = run(jobs, metrics);
    std::vector<Sample> out(who.size());
    for (std::size_t i = 0, k = 0; i < who.size(); ++i)
      for (std::size_t s = 0; s < nseeds; ++s, ++k) {
        const auto it = res.find(jobs[k].key);
        if (it == res.end()) throw std::runtime_error("tune: no result for " + jobs[k].key);
        auto get = [&](const char* m) {
          const auto v = it->second.find(m);
          if (v == it->second.end())
            throw std::runtime_error(std::string("tune: no ") + m + " in the result of " + jobs[k].key);
          return v->second;
        };
        out[i].obj.push_back(get(obj->pointer) * 1e-3);
        out[i].cpu.push_back(get(kCpu));
        out[i].tput.push_back(get(kThroughput));
      }
    return out;
  };

  std::vector<std::size_t> alive(cands.size());
  for (std::size_t i = 0; i < alive.size(); ++i)
    alive[i] = i;
  Json rungs = Json::array();
  std::vector<Sample> last;
  std::size_t last_seeds = 0;
  for (int r = 0; r < opt.rungs; ++r) {
    const int back = opt.rungs - 1 - r;
    const std::size_t nseeds = std::min(
        seeds.size(), static_cast<std::size_t>(std::ceil(static_cast<double>(seeds.size()) / std::pow(opt.eta, back))));
    const double dur = D / std::pow(2.0, back);
    last = run_set(alive, nseeds, dur, Json::object(), "");
    last_seeds = nseeds;
    Json rung{{"rung", r},
              {"seeds", std::vector<std::int64_t>(seeds.begin(), seeds.begin() + static_cast<long>(nseeds))},
              {"duration_s", dur},
              {"candidates", Json::array()}};
    std::vector<std::pair<double, double>> pts;
    for (std::size_t i = 0; i < alive.size(); ++i) {
      pts.emplace_back(stats_of(last[i].obj).mean, stats_of(last[i].cpu).mean);
      rung["candidates"].push_back(
          Json{{"id", cands[alive[i]]["id"]}, {"objective_us", pts.back().first}, {"busy_cpus", pts.back().second}});
    }
    if (r + 1 < opt.rungs) {
      // Keep whole Pareto layers until 1/eta of the candidates are kept; the baseline stays.
      const std::size_t want = static_cast<std::size_t>(std::ceil(static_cast<double>(alive.size()) / opt.eta));
      std::vector<bool> keep(alive.size(), false);
      std::size_t kept = 0;
      for (const auto& layer : pareto_layers(pts)) {
        if (kept >= want) break;
        for (std::size_t i : layer)
          keep[i] = true;
        kept += layer.size();
      }
      std::vector<std::size_t> next;
      for (std::size_t i = 0; i < alive.size(); ++i)
        if (keep[i] || cands[alive[i]]["id"] == "current") next.push_back(alive[i]);
      rung["kept"] = Json::array();
      for (std::size_t c : next)
        rung["kept"].push_back(cands[c]["id"]);
      alive = next;
    }
    rungs.push_back(std::move(rung));
  }

  // The final rung: statistics, front, recommendation.
  std::size_t base = 0;
  for (std::size_t i = 0; i < alive.size(); ++i)
    if (cands[alive[i]]["id"] == "current") base = i;
  std::vector<std::pair<double, double>> pts;
  for (const Sample& s : last)
    pts.emplace_back(stats_of(s.obj).mean, stats_of(s.cpu).mean);
  const std::vector<std::size_t> front = pareto_layers(pts).front();
  auto row = [&](std::size_t i, const std::vector<Sample>& smp, std::size_t b) {
    const Json& c = cands[alive[i]];
    const Stats o = stats_of(smp[i].obj), cpu = stats_of(smp[i].cpu), t = stats_of(smp[i].tput);
    std::vector<double> d;
    for (std::size_t s = 0; s < smp[i].obj.size(); ++s)
      d.push_back(smp[i].obj[s] - smp[b].obj[s]);
    const Stats ch = stats_of(d);
    Json j{{"id", c["id"]},
           {"strategy", c["strategy"]},
           {"label", c["label"]},
           {"objective_us", {{"mean", o.mean}, {"ci95", o.ci95}, {"values", smp[i].obj}}},
           {"busy_cpus", {{"mean", cpu.mean}, {"ci95", cpu.ci95}, {"values", smp[i].cpu}}},
           {"throughput", {{"mean", t.mean}, {"ci95", t.ci95}}},
           {"change_vs_current_us",
            {{"mean", ch.mean}, {"ci95", ch.ci95}, {"called", d.size() > 1 && std::fabs(ch.mean) > ch.ci95}}}};
    if (cpu_limit >= 0) j["within_budget"] = cpu.mean <= cpu_limit;
    return j;
  };
  Json front_rows = Json::array(), final_rows = Json::array();
  for (std::size_t i = 0; i < alive.size(); ++i) {
    Json j = row(i, last, base);
    j["on_front"] = std::find(front.begin(), front.end(), i) != front.end();
    final_rows.push_back(j);
  }
  std::vector<std::size_t> front_sorted = front;
  std::sort(front_sorted.begin(), front_sorted.end(), [&](std::size_t a, std::size_t b) {
    return pts[a].second != pts[b].second ? pts[a].second < pts[b].second : pts[a].first < pts[b].first;
  });
  for (std::size_t i : front_sorted)
    front_rows.push_back(final_rows[i]);
  // Recommended: the front's lowest objective within the budget (none given: the lowest overall).
  std::optional<std::size_t> rec;
  for (std::size_t i : front_sorted)
    if ((cpu_limit < 0 || pts[i].second <= cpu_limit) && (!rec || pts[i].first < pts[*rec].first)) rec = i;
  Json recommended = nullptr;
  if (rec) {
    recommended = final_rows[*rec];
    RunOptions ro;
    ro.base_dir = opt.base_dir;
    recommended["commands"] = host_commands(validate_scenario(apply_sets(resolved, cands[alive[*rec]]["sets"]), ro));
    recommended["sets"] = cands[alive[*rec]]["sets"];
  }

  Json what_if = Json::array();
  if (opt.what_if)
    for (double factor : {0.5, 2.0}) {
      std::string how;
      const Json extra = load_sets(resolved, factor, &how);
      std::vector<std::size_t> who;
      for (std::size_t i : front_sorted)
        who.push_back(alive[i]);
      if (std::find(front_sorted.begin(), front_sorted.end(), base) == front_sorted.end()) who.push_back(alive[base]);
      const std::vector<Sample> smp = run_set(who, last_seeds, D, extra, " load x" + fmt(factor));
      std::vector<std::pair<double, double>> wp;
      for (const Sample& s : smp)
        wp.emplace_back(stats_of(s.obj).mean, stats_of(s.cpu).mean);
      const std::vector<std::size_t> wf = pareto_layers(wp).front();
      Json rows = Json::array();
      for (std::size_t k = 0; k < who.size(); ++k) {
        const Stats o = stats_of(smp[k].obj), cpu = stats_of(smp[k].cpu), t = stats_of(smp[k].tput);
        Json j{{"id", cands[who[k]]["id"]},
               {"objective_us", {{"mean", o.mean}, {"ci95", o.ci95}}},
               {"busy_cpus", {{"mean", cpu.mean}, {"ci95", cpu.ci95}}},
               {"throughput", {{"mean", t.mean}, {"ci95", t.ci95}}},
               {"on_front", std::find(wf.begin(), wf.end(), k) != wf.end()}};
        if (cpu_limit >= 0) j["within_budget"] = cpu.mean <= cpu_limit;
        rows.push_back(j);
      }
      what_if.push_back(Json{{"load_factor", factor}, {"scaling", how}, {"candidates", rows}});
    }

  Json opts{{"objective", opt.objective},
            {"objective_metric", std::string("summary") + obj->pointer},
            {"cpu_metric",
             "summary/cpu/busy_cpus: the server's busy CPUs (CPU-seconds per second, every class "
             "but idle)"},
            {"host_cpus", nr},
            {"cpu_budget", opt.cpu_budget},
            {"cpu_budget_cpus", cpu_limit >= 0 ? Json(cpu_limit) : Json(nullptr)},
            {"seeds", seeds},
            {"duration_s", D},
            {"eta", opt.eta},
            {"rungs", opt.rungs},
            {"strategies", opt.strategies.empty() ? strategy_names() : opt.strategies}};
  Json report{{"scenario", resolved.value("name", "")},
              {"options", opts},
              {"candidates", cands.size()},
              {"rungs", rungs},
              {"final", final_rows},
              {"front", front_rows},
              {"recommended", recommended},
              {"what_if", what_if}};
  return report;
}

std::string format_tune(const Json& rep) {
  const Json& o = rep["options"];
  std::string out = "napisim tune: " + rep["scenario"].get<std::string>() + ": " +
                    std::to_string(rep["candidates"].get<int>()) + " candidates, " +
                    std::to_string(rep["rungs"].size()) + " rungs of successive halving (eta " +
                    std::to_string(o["eta"].get<int>()) + "); objective " + o["objective"].get<std::string>() +
                    " latency (us), CPU = the server's busy CPUs of " + std::to_string(o["host_cpus"].get<int>()) +
                    "; mean +- 95% CI over the last rung's seeds\n";
  for (const Json& r : rep["rungs"])
    out += "  rung " + std::to_string(r["rung"].get<int>()) + ": " + std::to_string(r["candidates"].size()) +
           " candidates x " + std::to_string(r["seeds"].size()) + " seeds x " + fmt(r["duration_s"].get<double>()) +
           " s\n";
  auto table = [&](const Json& rows, bool budget) {
    std::vector<std::vector<std::string>> t = {{"candidate", o["objective"].get<std::string>() + " us", "busy CPUs",
                                                "throughput/s", budget ? "in budget" : ""}};
    for (const Json& r : rows)
      t.push_back(
          {r["id"].get<std::string>(),
           fmt(r["objective_us"]["mean"].get<double>()) + " +- " + fmt(r["objective_us"]["ci95"].get<double>(), 2),
           fmt(r["busy_cpus"]["mean"].get<double>(), 3) + " +- " + fmt(r["busy_cpus"]["ci95"].get<double>(), 2),
           fmt(r["throughput"]["mean"].get<double>(), 5),
           budget ? (r.value("within_budget", false) ? "yes" : "no") : ""});
    std::vector<std::size_t> w(t[0].size(), 0);
    for (const auto& r : t)
      for (std::size_t k = 0; k < r.size(); ++k)
        w[k] = std::max(w[k], r[k].size());
    std::string s;
    for (const auto& r : t) {
      std::string line = "  ";
      for (std::size_t k = 0; k < r.size(); ++k) {
        line += r[k];
        if (k + 1 < r.size()) line += std::string(w[k] - r[k].size() + 2, ' ');
      }
      while (!line.empty() && line.back() == ' ')
        line.pop_back();
      s += line + "\n";
    }
    return s;
  };
  const bool budget = !o["cpu_budget"].get<std::string>().empty();
  out += "\nPareto front (" + o["objective"].get<std::string>() + " latency vs busy CPUs), by CPU:\n" +
         table(rep["front"], budget);
  Json others = Json::array();
  for (const Json& r : rep["final"])
    if (!r["on_front"].get<bool>()) others.push_back(r);
  if (!others.empty()) out += "\nlast rung, off the front:\n" + table(others, budget);
  const Json& rec = rep["recommended"];
  if (rec.is_null()) {
    out += "\nno front member fits the CPU budget " + o["cpu_budget"].get<std::string>() + "\n";
  } else {
    out += "\nrecommended" +
           (budget ? " (budget " + o["cpu_budget"].get<std::string>() + " = " +
                         fmt(o["cpu_budget_cpus"].get<double>(), 3) + " CPUs)"
                   : std::string(" (no CPU budget: the lowest latency)")) +
           ": " + rec["id"].get<std::string>() + "\n  " + o["objective"].get<std::string>() + " " +
           fmt(rec["objective_us"]["mean"].get<double>()) + " +- " + fmt(rec["objective_us"]["ci95"].get<double>(), 2) +
           " us, busy CPUs " + fmt(rec["busy_cpus"]["mean"].get<double>(), 3) + " +- " +
           fmt(rec["busy_cpus"]["ci95"].get<double>(), 2) + "; vs current " +
           fmt(rec["change_vs_current_us"]["mean"].get<double>(), 4, true) + " +- " +
           fmt(rec["change_vs_current_us"]["ci95"].get<double>(), 2) + " us (paired per seed" +
           (rec["change_vs_current_us"]["called"].get<bool>() ? ", called" : ", not called") + ")\n" +
           "  on the host (CPU numbers as the scenario numbers them):\n";
    for (const Json& c : rec["commands"])
      out += "    " + c.get<std::string>() + "\n";
  }
  for (const Json& w : rep["what_if"])
    out += "\nwhat if the load were x" + fmt(w["load_factor"].get<double>()) + " (" + w["scaling"].get<std::string>() +
           "); * = on the front there:\n" + [&] {
             Json rows = Json::array();
             for (Json r : w["candidates"]) {
               if (r["on_front"].get<bool>()) r["id"] = "* " + r["id"].get<std::string>();
               rows.push_back(r);
             }
             return table(rows, budget);
           }();
  return out;
}

}  // namespace napisim::tune
