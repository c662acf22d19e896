// napisim: super_netperf (the script netdev developers use, e.g. Eric Dumazet's "400 or more
// concurrent netperf -t TCP_RR on a 10Gbit NIC", validation-targets.md 3): N netperf TCP_RR
// instances at once, the summed transaction rate printed as one number.
//
// netperf TCP_RR (HewlettPackard/netperf @ afc51ff, nettest_omni.c send_omni_inner / recv_omni):
// each instance is one connection with one transaction in flight (-b 0). netserver forks one
// child process per connection (netserver.c spawn_child / process_requests), and the child loops
// on a blocking recv() until the -r request is complete, then send()s the response: no epoll, so
// every request wakes that connection's own task (sock_def_readable -> the task sleeping in
// sk_wait_data). On a Linux client host (the default) each instance is its own netperf process on
// that host's kernel: send_omni_inner() timestamps, send()s the request, recv()s (blocking) until
// the response is complete, timestamps and updates its histogram, and sends the next one. The
// idealised client (opt-in) sends the next request client_tx_ns after the response's wire arrival
// plus client_rx_ns. Segments a NIC drops are resent after TCP_RTO_MIN.
// Latency statistics are netperf -j's (per transaction, merged over instances in one histogram).
#pragma once

#include <vector>

#include "sim/core/fifo.hpp"
#include "sim/params/fields.hpp"
#include "sim/workloads/client_uplink.hpp"
#include "sim/workloads/workload.hpp"

namespace napisim {

struct SuperNetperfParams {
  std::int64_t num_instances = 400;  // concurrent netperf processes (super_netperf N)
  std::int64_t request_size = 1;     // -r req,
  std::int64_t response_size = 1;    //        resp
  std::string netserver_cpus = "";   // CPUs the netserver children may run on ("" = all)
  std::int64_t server_nice = 0;
  std::string server_policy = "normal";  // chrt for the netserver children
  std::int64_t server_rt_priority = 50;
  std::int64_t client_tx_ns = 3000;             // idealised client: send() to wire
  std::int64_t client_rx_ns = 3000;             // idealised client: wire to recv() return
  std::int64_t rto_ns = 200000000;              // TCP_RTO_MIN
  std::int64_t server_user_ns = 200;            // netserver's user-space work per transaction
  std::int64_t client_user_ns = kClientUserNs;  // Linux client: netperf's per transaction
  std::string client_cpus = "";                 // taskset for the netperf processes (Linux client host)
  std::int64_t client_nice = 0;
  std::string client_policy = "normal";  // chrt for the netperf processes
  std::int64_t client_rt_priority = 50;

  template <class V>
  static void fields(V& v) {
    v("num_instances", &SuperNetperfParams::num_instances, "instances", "Concurrent netperf TCP_RR instances",
      Range{1, 100000});
    v("request_size", &SuperNetperfParams::request_size, "bytes", "netperf -r: request size", Range{1, 1e9});
    v("response_size", &SuperNetperfParams::response_size, "bytes", "netperf -r: response size", Range{1, 1e9});
    v("netserver_cpus", &SuperNetperfParams::netserver_cpus, "cpulist", "CPUs netserver's children may run on");
    v("server_nice", &SuperNetperfParams::server_nice, "", "Nice value of netserver's children", Range{-20, 19});
    v("server_policy", &SuperNetperfParams::server_policy, "",
      "chrt for netserver's children: normal, batch, idle, fifo or rr", chrt_policies());
    v("server_rt_priority", &SuperNetperfParams::server_rt_priority, "",
      "chrt priority of netserver's children (fifo, rr)", Range{1, 99});
    v("client_tx_ns", &SuperNetperfParams::client_tx_ns, "ns", "Idealised client: send() to the wire", Range{0, 1e9});
    v("client_rx_ns", &SuperNetperfParams::client_rx_ns, "ns", "Idealised client: wire to recv() return",
      Range{0, 1e9});
    v("rto_ns", &SuperNetperfParams::rto_ns, "ns",
      "Idealised client only: retransmission timeout for segments the server dropped (a Linux client host's TCP "
      "repairs its own)",
      Range{1000, 1e10});
    v("server_user_ns", &SuperNetperfParams::server_user_ns, "ns", "netserver user-space work per transaction",
      Range{0, 1e9});
    v("client_user_ns", &SuperNetperfParams::client_user_ns, "ns",
      "Linux client: netperf's user-space work per transaction (two timestamps, the -j histogram)", Range{0, 1e9});
    v("client_cpus", &SuperNetperfParams::client_cpus, "cpulist",
      "CPUs the netperf processes may run on, on each Linux client host (\"\" = all CPUs)");
    v("client_nice", &SuperNetperfParams::client_nice, "", "Linux client host: nice value of the netperf processes",
      Range{-20, 19});
    v("client_policy", &SuperNetperfParams::client_policy, "",
      "Linux client host: chrt for the netperf processes: normal, batch, idle, fifo or rr", chrt_policies());
    v("client_rt_priority", &SuperNetperfParams::client_rt_priority, "",
      "Linux client host: chrt priority of the netperf processes (fifo, rr)", Range{1, 99});
  }
  bool operator==(const SuperNetperfParams&) const = default;
};

class SuperNetperf : public Workload, public EventSink, public WirePeer {
 public:
  explicit SuperNetperf(const SuperNetperfParams& p) : p_(p) {}
  void setup(Kernel& k, const std::vector<ClientPath>& paths, const RngRoot& rng) override;
  void start() override;
  void begin_measurement() override {}
  void end_measurement() override {}
  std::uint64_t completed() const override { return completed_; }
  void report(Json& summary, Json& workload) const override;
  Json conservation() const override;
  const Histogram* latency_histogram() const override { return &hist_; }
  bool enable_breakdown() override;
  Json latency_breakdown() const override;

  void on_event(std::uint32_t kind, std::uint64_t arg) override;
  void on_transmit(const WireTrain& tr, Nanos wire_done) override;
  void on_rx_drop(int sock, std::uint32_t bytes, std::uint32_t segs) override;

 private:
  struct Conn {
    int sock = -1;
    int csock = -1;  // the client host's socket (Linux client hosts)
    int host = 0;
    Nanos req_start = 0;
    std::int64_t resp_got = 0;
    bool in_flight = false;
    std::uint64_t measured = 0;
  };
  using Train = WireTrain;
  enum Kind : std::uint32_t { kStart = 1, kRetransmit = 3 };
  Proc<void> netserver_child(Task& t, int sock);
  Proc<void> netperf(Task& t, int sock);
  void complete(Conn& c, Nanos at);
  void send_request(Conn& c, Nanos at);
  // Latency attribution (run --explain): the points a connection's transaction passed (one in
  // flight: the sockets' last trains are its own), by server socket.
  struct Marks {
    Nanos req_tx = 0;  // the request's transmit (client)
    RxMarks srv;       // the child's recv() that completed the request
    Nanos srv_send = 0, srv_tx = 0;
    RxMarks cli;  // netperf's recv() that completed the response
  };
  void cut(const Conn& c, Nanos at);

  SuperNetperfParams p_;
  Kernel* k_ = nullptr;
  std::vector<ClientPath> paths_;
  std::vector<Conn> conns_;  // indexed by socket id
  Rng start_rng_{0};
  ClientUplink uplink_{kRetransmit};  // the idealised clients' sends to the server NICs
  LinuxClients clients_;              // the Linux client hosts
  std::uint64_t completed_ = 0, measured_ = 0, sent_ = 0, drops_ = 0;
  Histogram hist_;
  std::unique_ptr<LatencyBreakdown> breakdown_;  // --explain
  std::vector<Marks> marks_;                     // by server socket, with breakdown_
};

}  // namespace napisim
