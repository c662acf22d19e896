// napisim: the workload interface. A workload creates the server's application threads and
// sockets on the Kernel, plays the client side (its tool's loops on a simulated Linux client host,
// or an idealised load generator across the platform's links), and reports what its tool (neper,
// netperf, mutilate) would print.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/json.hpp"
#include "sim/core/registry.hpp"
#include "sim/core/rng.hpp"
#include "sim/core/time.hpp"
#include "sim/kernel/kernel.hpp"
#include "sim/kernel/timeline.hpp"
#include "sim/params/fields.hpp"
#include "sim/stats/breakdown.hpp"
#include "sim/stats/histogram.hpp"

namespace napisim {

/// A client host as seen from the server: its route's latency and bottleneck bandwidth (from the
/// SimGrid platform), and the NIC of the server it reaches.
struct ClientPath {
  std::string name;
  Nanos latency_ns = 5000;
  double bandwidth_gbps = 100.0;
  int nic = 0;
  Kernel* kernel = nullptr;  // the client host's own kernel (stack linux), or null for the idealised client
};

class Workload {
 public:
  virtual ~Workload() = default;
  /// Creates threads and sockets; called once before the run starts.
  virtual void setup(Kernel& k, const std::vector<ClientPath>& paths, const RngRoot& rng) = 0;
  /// Starts the load at simulated time 0.
  virtual void start() = 0;
  /// The measurement window [begin, end) in simulated time (known before the run starts).
  void set_window(Nanos begin, Nanos end) {
    window_begin_ = begin;
    window_end_ = end;
  }
  virtual void begin_measurement() = 0;
  virtual void end_measurement() = 0;
  /// Transactions/requests completed so far (for progress and conservation checks).
  virtual std::uint64_t completed() const = 0;
  /// Adds the workload's own results to `summary` and describes its flags in `workload`.
  virtual void report(Json& summary, Json& workload) const = 0;
  /// Conservation: {sent, answered, dropped, in_flight} of requests.
  virtual Json conservation() const = 0;
  /// Client-observed latency of the measured requests (null if the workload has none).
  virtual const Histogram* latency_histogram() const { return nullptr; }
  /// Latency attribution (run --explain): from now on, cut each measured request's latency into
  /// the stages of its path (the hosts' kernels must stamp them: Kernel::set_stamps()).
  /// False if the workload cannot.
  virtual bool enable_breakdown() { return false; }
  /// The breakdown per percentile band (LatencyBreakdown::report()), or null when not enabled.
  virtual Json latency_breakdown() const { return nullptr; }
  /// Adds a sample of requests, cut into their stages, to the trace (run --trace). True if it
  /// does, and needs the kernels' stamps for it (Kernel::set_stamps()).
  virtual bool trace_requests(Timeline&) { return false; }

 protected:
  bool in_window(Nanos t) const { return t >= window_begin_ && t < window_end_; }
  Nanos window_begin_ = 0, window_end_ = kNever;
};

/// "p50", "p99.9": the key a percentile has in results (neper's latency_p%g).
std::string percentile_key(double p);
/// neper's report percentiles: 50, 90, 95, 99, 99.9, 99.99 and the -p values, sorted, no duplicates.
std::vector<double> report_percentiles(const std::vector<double>& requested);
/// The summary's `latency_ns` object: count, min, max, mean, stddev and `percentiles` in order.
Json latency_json(const Histogram& h, const std::vector<double>& percentiles);

/// Latency attribution on one host's receive path: where a request's last data train was from
/// the moment it entered the NIC ring to the moment the application's handler for its socket
/// began.
struct RxMarks {
  RxPath path;        // the kernel's stamps of the train (its socket's Socket::reader set)
  EpollStamp ep;      // the epoll_wait() (or recv()) that returned the socket (Task::epoll_stamp)
  Nanos handler = 0;  // its handler's start
};
/// The RxMarks of a train that met no receive path: the idealised client's, all at `wire`.
RxMarks idealised_rx(Nanos wire);
/// Appends the kRxStages stages of `host`'s receive path, in order: irq, ring, net_rx_wait, napi,
/// socket_queue, runq, epoll_return, epoll_batch. The waits on a CPU (net_rx_wait, socket_queue,
/// runq) are split by what it did meanwhile: the breakdown's classes are wait_classes().
inline constexpr std::size_t kRxStages = 8;
/// The wire stages every request/response breakdown has, between the two hosts.
LatencyBreakdown::Stage wire_request_stage();
LatencyBreakdown::Stage wire_response_stage();
void add_rx_stages(std::vector<LatencyBreakdown::Stage>& stages, const std::string& host);
/// The names of the classes a waiting stage is split into (ClassTimes: the CPU classes, "self").
std::vector<std::string> wait_classes();
/// Cuts the receive path (from the train's arrival in the ring; the stage before it ends there)
/// into the kRxStages stages starting at index `first`.
void cut_rx(LatencyBreakdown::Cut& c, std::size_t first, const RxMarks& m);

/// The server thread a flow's socket belongs to: one SO_REUSEPORT listener per thread, so
/// inet_lookup_reuseport() -> reuseport_select_sock() -> reciprocal_scale(inet_ehashfn(), threads)
/// (`phash`: Kernel::inet_ehashfn() of the connection), or with `by_rx_queue` the RX queue mod
/// threads (SO_INCOMING_NAPI_ID steering).
inline int reuseport_thread(const Socket& s, std::uint32_t phash, std::int64_t threads, bool by_rx_queue) {
  return by_rx_queue ? static_cast<int>(s.rx_queue % threads)
                     : static_cast<int>(reciprocal_scale(phash, static_cast<std::uint32_t>(threads)));
}

/// A load generator's user work per response on a Linux client host (the client_user_ns default
/// of tcp_rr, app/trace and mutilate) [INFER]: two clock_gettime() through the vDSO (~20-25 ns
/// each), the latency histogram's update and the connection's state machine, a couple of hundred
/// ns on a 2020s server core.
constexpr std::int64_t kClientUserNs = 200;

/// A server's epoll_wait() with `spin_ns` of user-space polling first (every server workload's
/// spin_us): epoll_wait(0) and its busy loop until events come or the spin is over, then the
/// blocking call. With spin_ns 0 or `timeout` 0 it is the plain call (0: the application's own
/// busy loop). `owed` as Kernel::epoll_wait().
Proc<int> epoll_wait_spin(Kernel& k, Task& t, Epoll& ep, int maxevents, std::vector<int>& out, int timeout,
                          Nanos spin_ns, Nanos* owed = nullptr);

/// A user thread of the workload, with what chrt and nice give it before it runs
/// (sched_setscheduler(), setpriority()): `policy` by name (normal, batch, idle, fifo, rr; the
/// Choices of every workload's *_policy parameter), `rt_priority` for fifo and rr, `nice`.
Task& create_user_thread(Kernel& k, const std::string& name, const CpuMask& mask, const std::string& policy,
                         std::int64_t rt_priority, std::int64_t nice);
/// Where a workload's thread i lives, as neper's -U places it (thread.c: thread i's affinity is
/// cpuset[i % allowed_cores], the allowed CPUs in order): `cpu` is the (i mod count)-th CPU of
/// `allowed`; pinned, `mask` is that CPU alone, otherwise `allowed`. Every workload that spreads
/// its threads over a cpumask (tcp_rr, rpc_server, mutilate's memcached, super_netperf's
/// netservers) starts thread i there.
struct ThreadHome {
  int cpu;
  CpuMask mask;
};
ThreadHome thread_home(const CpuMask& allowed, std::int64_t i, bool pin);
inline Choices chrt_policies() {
  return Choices{"normal", "batch", "idle", "fifo", "rr"};
}

/// neper's flows_in_thread() (thread.c): thread `tid` of `threads` owns this many of `flows`, in
/// a contiguous block after the blocks of the threads before it.
inline std::size_t flows_in_thread(std::size_t flows, std::size_t threads, std::size_t tid) {
  return flows / threads + (tid < flows % threads ? 1 : 0);
}

/// conservation() of a request/response workload: every request `sent` is `answered` or
/// `in_flight`; segments the NIC dropped were retransmitted.
Json request_conservation(std::uint64_t sent, std::uint64_t answered, std::uint64_t in_flight,
                          std::uint64_t ring_drop_segments, std::uint64_t retransmitted_trains);

/// One workload type: what `describe`, `list-workloads`, the schema and the scenario loader know.
struct WorkloadInfo {
  static constexpr const char* kKind = "workload type";
  std::string name;
  std::string summary;
  bool linux_client = false;  // runs its tool's client loops on a simulated Linux client host
  std::function<std::vector<FieldInfo>()> describe;
  std::function<Json()> schema;
  /// Strict parse -> the params with every default spelled out (`base_dir` resolves file paths).
  std::function<Json(const Json& params, const std::string& path, const std::string& base_dir)> resolve;
  std::function<std::unique_ptr<Workload>(const Json& params, const std::string& path)> create;
};

using WorkloadRegistry = Registry<WorkloadInfo>;

/// The built-in workloads (built on first use; read-only afterwards).
const WorkloadRegistry& builtin_workloads();

/// Creates the workload named by `type` with its params (strict parse, pointer errors).
std::unique_ptr<Workload> make_workload(const std::string& type, const Json& params, const std::string& path);
/// Strict parse of a workload's params, returned with every default spelled out.
/// `base_dir` resolves relative file paths in the params (trace files).
Json resolve_workload_params(const std::string& type, const Json& params, const std::string& path,
                             const std::string& base_dir = ".");
Json workload_schema();
std::vector<std::string> workload_types();
/// Whether the workload runs its client on a simulated Linux host (ClientSpec "stack": "linux"):
/// tcp_rr (neper), app and trace (a load generator), mutilate, super_netperf (netperf). stream drives
/// the server from the idealised generator.
bool workload_has_linux_client(const std::string& type);

}  // namespace napisim
