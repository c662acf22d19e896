#include "sim/workloads/workload.hpp"

#include <algorithm>
#include <cstdio>
#include <type_traits>
#include <utility>

#include "sim/params/fields.hpp"
#include "sim/workloads/app.hpp"
#include "sim/workloads/mutilate.hpp"
#include "sim/workloads/stream.hpp"
#include "sim/workloads/super_netperf.hpp"
#include "sim/workloads/tcp_rr.hpp"
#include "sim/workloads/trace.hpp"
#include "sim/workloads/xsk_rr.hpp"

namespace napisim {

std::string percentile_key(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "p%g", p);
  return buf;
}

std::vector<double> report_percentiles(const std::vector<double>& requested) {
  std::vector<double> ps = {50, 90, 95, 99, 99.9, 99.99};
  for (double p : requested)
    if (std::find(ps.begin(), ps.end(), p) == ps.end()) ps.push_back(p);
  std::sort(ps.begin(), ps.end());
  return ps;
}

Json request_conservation(std::uint64_t sent, std::uint64_t answered, std::uint64_t in_flight,
                          std::uint64_t ring_drop_segments, std::uint64_t retransmitted_trains) {
  return Json{{"sent", sent},
              {"answered", answered},
              {"in_flight", in_flight},
              {"ring_drop_segments", ring_drop_segments},
              {"retransmitted_trains", retransmitted_trains}};
}

Json latency_json(const Histogram& h, const std::vector<double>& percentiles) {
  Json lat;
  lat["count"] = h.count();
  lat["min"] = h.min();
  lat["max"] = h.max();
  lat["mean"] = h.mean();
  lat["stddev"] = h.stddev();
  for (double p : percentiles)
    lat[percentile_key(p)] = h.percentile(p);
  return lat;
}

LatencyBreakdown::Stage wire_request_stage() {
  return {"wire.request",
          "from the request's transmit to the server's NIC ring: the TX port, serialization, the link, the server's "
          "ingress port, and retransmission after a drop"};
}

LatencyBreakdown::Stage wire_response_stage() {
  return {"wire.response", "from the response's transmit to the client's NIC ring"};
}

void add_rx_stages(std::vector<LatencyBreakdown::Stage>& stages, const std::string& host) {
  const std::pair<const char*, const char*> kStages[] = {
      {"irq",
       "in the NIC ring before its NAPI was scheduled: interrupt moderation (rx-usecs/rx-frames), the "
       "IRQ masked while an earlier poll runs, deferral timers"},
      {"ring", "its NAPI was being polled, for the packets ahead of it in the ring"},
      {"net_rx_wait",
       "its NAPI scheduled but not polled: NET_RX pending, ksoftirqd or the NAPI kthread runnable "
       "and not running, other NAPIs polled first; split by what the CPU it waited on did (the one "
       "it was scheduled on: its kthread's when threaded)"},
      {"napi",
       "from the start of the poll that took it to its socket: the driver, GRO and TCP for it and the "
       "skbs before it in the batch (and an RPS backlog)"},
      {"socket_queue",
       "readable while the application thread was running or preempted: until its epoll_wait() "
       "returned it; split by what its CPU did (self: the thread itself, at other work)"},
      {"runq",
       "readable while the application thread slept or waited to run: until it got a CPU after its "
       "wakeup (wakeup IPI, run-queue wait behind other tasks); split by what its CPU did"},
      {"epoll_return",
       "from the thread getting the CPU to epoll_wait()'s return (a blocking recv()'s, for netperf): the "
       "context switch, the syscall's return, preemption meanwhile"},
      {"epoll_batch",
       "from epoll_wait()'s return to this socket's handler: the handlers of the events before it "
       "in the batch"},
  };
  for (const auto& [name, doc] : kStages) {
    const std::string n = name;
    stages.push_back({host + "." + n, std::string(doc) + " (" + host + ")",
                      n == "net_rx_wait" || n == "socket_queue" || n == "runq"});
  }
}

std::vector<std::string> wait_classes() {
  std::vector<std::string> names;
  for (int i = 0; i < kNumWaitClasses; ++i)
    names.emplace_back(wait_class_name(i));
  return names;
}

RxMarks idealised_rx(Nanos wire) {
  RxMarks m;
  static_cast<TrainStamps&>(m.path) = TrainStamps::at(wire);
  m.path.deliver = m.ep.ret = m.ep.run = m.handler = wire;
  return m;
}

void cut_rx(LatencyBreakdown::Cut& c, std::size_t first, const RxMarks& m) {
  const RxPath& p = m.path;
  // [arrive, sched]: polls of the NAPI's previous schedule (ring), the rest waiting for it to be
  // scheduled (irq); [sched, poll]: its polls since (ring), the rest waiting for NET_RX.
  c.split(first + 1, p.ring - p.ring_sched, first, std::max(p.arrive, p.sched));
  c.split(first + 1, p.ring_sched, first + 2, std::max(p.poll, p.arrive));
  c.by_class(first + 2, p.net_rx_wait.data());
  c.next(first + 3, p.deliver);  // napi
  // The thread's view from the delivery (the socket's reader then) to the end of its wait.
  if (m.ep.run >= p.deliver) {
    c.next(first + 5, m.ep.run);  // runq
    c.by_class(first + 5, (m.ep.run_view - p.reader).data());
    c.next(first + 6, m.ep.ret);
  } else {
    // socket_queue; 0 for data that came while the handler waited its turn in the batch.
    c.next(first + 4, std::max(m.ep.ret, p.deliver));
    if (m.ep.ret > p.deliver) c.by_class(first + 4, (m.ep.ret_view - p.reader).data());
  }
  // epoll_batch; 0 for data that came after its handler began (memcached's work before its read()).
  c.next(first + 7, std::max(m.handler, p.deliver));
}

Proc<int> epoll_wait_spin(Kernel& k, Task& t, Epoll& ep, int maxevents, std::vector<int>& out, int timeout,
                          Nanos spin_ns, Nanos* owed) {
  int n = 0;
  if (spin_ns > 0 && timeout != 0) {
    n = co_await k.epoll_wait(t, ep, maxevents, out, 0, owed);
    if (n == 0) n = co_await k.epoll_wait_busy_loop(t, ep, maxevents, out, owed, k.now() + spin_ns);
    if (n > 0) co_return n;
  }
  n = co_await k.epoll_wait(t, ep, maxevents, out, timeout, owed);
  if (n == 0) n = co_await k.epoll_wait_busy_loop(t, ep, maxevents, out, owed);  // timeout 0
  co_return n;
}

Task& create_user_thread(Kernel& k, const std::string& name, const CpuMask& mask, const std::string& policy,
                         std::int64_t rt_priority, std::int64_t nice) {
  const SchedPolicy p = sched_policy_named(policy);
  return k.create_task(name, TaskKind::kUser, mask, p, static_cast<int>(nice),
                       is_rt_policy(p) ? static_cast<int>(rt_priority) : 0);
}

ThreadHome thread_home(const CpuMask& allowed, std::int64_t i, bool pin) {
  int cpu = allowed.first();
  for (std::int64_t n = i % allowed.count(); n > 0; --n)
    cpu = allowed.next(cpu);
  if (!pin) return {cpu, allowed};
  CpuMask only(allowed.nr_cpus());
  only.set(cpu);
  return {cpu, only};
}

namespace {

/// A workload whose parameters are the struct P and whose resolved parameters are P's fields.
template <class P, class W>
WorkloadInfo plain_workload(std::string name, std::string summary, bool linux_client) {
  WorkloadInfo info;
  info.name = std::move(name);
  info.summary = std::move(summary);
  info.linux_client = linux_client;
  info.describe = [] { return describe_params<P>(); };
  info.schema = [] { return params_schema<P>(); };
  info.resolve = [](const Json& params, const std::string& path, const std::string&) {
    return params_to_json(parse_params<P>(params, path));
  };
  info.create = [](const Json& params, const std::string& path) -> std::unique_ptr<Workload> {
    if constexpr (std::is_constructible_v<W, P, std::string>) {
      return std::make_unique<W>(parse_params<P>(params, path), path);
    } else {
      return std::make_unique<W>(parse_params<P>(params, path));
    }
  };
  return info;
}

}  // namespace

const WorkloadRegistry& builtin_workloads() {
  static const WorkloadRegistry registry = [] {
    WorkloadRegistry r;
    r.add(plain_workload<TcpRrParams, TcpRr>(
        "tcp_rr", "neper tcp_rr: closed-loop request/response flows over epoll, neper's client on a Linux host", true));
    WorkloadInfo mutilate = plain_workload<MutilateParams, Mutilate>(
        "mutilate", "mutilate against a memcached-like server: open-loop GETs from agents, per-connection depth", true);
    mutilate.resolve = [](const Json& params, const std::string& path, const std::string&) {
      return params_to_json(Mutilate(parse_params<MutilateParams>(params, path), path).params());
    };
    r.add(std::move(mutilate));
    WorkloadInfo app = plain_workload<AppParams, App>(
        "app", "An epoll RPC server with user work per request, open or closed loop over connections", true);
    app.resolve = [](const Json& params, const std::string& path, const std::string&) {
      return resolve_app_params(params, path);
    };
    r.add(std::move(app));
    WorkloadInfo trace = plain_workload<TraceParams, Trace>(
        "trace", "The app server replaying a request trace (CSV: time, flow, sizes, service)", true);
    trace.resolve = [](const Json& params, const std::string& path, const std::string& base_dir) {
      return resolve_trace_params(params, path, base_dir);
    };
    r.add(std::move(trace));
    r.add(plain_workload<StreamParams, Stream>(
        "stream", "netperf TCP_STREAM / TCP_MAERTS: bulk transfer into or out of the server", false));
    r.add(plain_workload<SuperNetperfParams, SuperNetperf>(
        "super_netperf", "super_netperf: N concurrent netperf streams, the sum of their throughputs", true));
    r.add(plain_workload<XskRrParams, XskRr>(
        "xsk_rr", "UDP request/response over AF_XDP sockets (xsk_rr): a server thread per queue's XSK", false));
    return r;
  }();
  return registry;
}

std::vector<std::string> workload_types() {
  std::vector<std::string> names;
  for (const auto& w : builtin_workloads().list())
    names.push_back(w.name);
  return names;
}

bool workload_has_linux_client(const std::string& type) {
  const WorkloadInfo* w = builtin_workloads().find(type);
  return w && w->linux_client;
}

std::unique_ptr<Workload> make_workload(const std::string& type, const Json& params, const std::string& path) {
  return builtin_workloads().get(type, path).create(params, path);
}

Json resolve_workload_params(const std::string& type, const Json& params, const std::string& path,
                             const std::string& base_dir) {
  return builtin_workloads().get(type, path).resolve(params, path, base_dir);
}

Json workload_schema() {
  Json s;
  for (const auto& w : builtin_workloads().list())
    s[w.name] = w.schema();
  return s;
}

}  // namespace napisim
