// napisim: neper tcp_rr (google/neper rr.c, thread.c @ ea5890f; docs/validation-targets.md 4.1).
//
// Server: -T threads, each with its own epoll loop; the -F flows are spread over them as
// SO_REUSEPORT does (reciprocal_scale of inet_ehashfn(), workload.hpp). A thread reads a request (-Q bytes) with
// recv() calls of at most -B bytes, then sends the -R-byte response in -B-byte chunks.
// Client, on a Linux client host (ClientSpec "stack": "linux", the default): neper's client
// process on that host's own simulated kernel: its own -T threads (client_threads), each owning a
// contiguous block of the host's flows (thread.c), a level-triggered epoll_wait(maxevents, -1)
// loop that per ready flow recv()s, takes rr_ts_2 when the response is complete, records the
// latency from rr_ts_1 (just before the request's first send()), and sends the next request's
// first -B bytes in the same handler (rr_client_state_1); a longer request's rest goes one send()
// per EPOLLOUT event (rr_client_state_0, flow_mod() between the states, as the server does);
// packets cross both hosts' NICs and receive paths.
// Client, idealised ("stack": "idealised"): a closed-loop generator per flow that adds client_tx_ns
// before the wire and client_rx_ns after it, ACKs response trains of two or more segments, and
// retransmits segments the server's NIC dropped after TCP_RTO_MIN (200 ms).
#pragma once

#include <vector>

#include "sim/core/fifo.hpp"
#include "sim/params/fields.hpp"
#include "sim/workloads/client_uplink.hpp"
#include "sim/workloads/workload.hpp"

namespace napisim {

struct TcpRrParams {
  std::int64_t num_flows = 100;       // -F
  std::int64_t num_threads = 4;       // -T of the server
  std::int64_t client_threads = 0;    // -T of the client (0: num_threads)
  std::int64_t request_size = 1;      // -Q
  std::int64_t response_size = 1;     // -R
  std::int64_t buffer_size = 65536;   // -B
  std::int64_t maxevents = 1000;      // --maxevents
  std::int64_t num_transactions = 0;  // -l -N: stop after N measured transactions (0: run for the duration)
  std::vector<double> percentiles = {50, 90, 99, 99.9};  // -p
  bool pin_cpu = false;                                  // -U: pin server thread i to the i-th allowed CPU
  std::string server_cpus = "";                          // taskset for the server threads ("" = all CPUs)
  std::int64_t server_nice = 0;
  std::int64_t client_tx_ns = 3000;             // client stack: send() to wire
  std::int64_t client_rx_ns = 3000;             // client stack: wire to recv() return
  std::int64_t rto_ns = 200000000;              // TCP_RTO_MIN
  std::int64_t epoll_timeout = -1;              // server: -1 blocks in epoll_wait; 0: the application's own busy loop
  std::int64_t client_epoll_timeout = -1;       // the same for the client threads (Linux client host)
  std::int64_t spin_us = 0;                     // server: user-space polling before epoll_wait() blocks
  std::int64_t server_user_ns = 200;            // neper's user-space work per handled event
  std::int64_t client_user_ns = kClientUserNs;  // the client's per response: two clock_gettime, histogram, state
  std::string client_cpus = "";                 // taskset for the client threads (Linux client host)
  bool client_pin_cpu = false;                  // -U of the client: pin client thread i to the i-th allowed CPU
  std::int64_t client_nice = 0;
  std::string server_policy = "normal";  // chrt for the server threads
  std::int64_t server_rt_priority = 50;
  std::string client_policy = "normal";  // chrt for the client threads
  std::int64_t client_rt_priority = 50;
  std::string flow_steering = "reuseport";  // which server thread owns a flow

  template <class V>
  static void fields(V& v) {
    v("num_flows", &TcpRrParams::num_flows, "flows", "neper -F: total flows (connections)", Range{1, 1e6});
    v("num_threads", &TcpRrParams::num_threads, "threads", "neper -T of the server process", Range{1, 4096});
    v("client_threads", &TcpRrParams::client_threads, "threads",
      "neper -T of the client process on each Linux client host (0 = num_threads)", Range{0, 4096});
    v("request_size", &TcpRrParams::request_size, "bytes", "neper -Q: request size", Range{1, 1e9});
    v("response_size", &TcpRrParams::response_size, "bytes", "neper -R: response size", Range{1, 1e9});
    v("buffer_size", &TcpRrParams::buffer_size, "bytes", "neper -B: max bytes per send()/recv() call", Range{1, 1e9});
    v("maxevents", &TcpRrParams::maxevents, "events", "neper --maxevents: epoll_wait maxevents", Range{1, 1e6});
    v("num_transactions", &TcpRrParams::num_transactions, "transactions",
      "neper -l -N: stop issuing requests after N measured transactions (0 = run for the whole duration)",
      Range{0, 1e12});
    v("percentiles", &TcpRrParams::percentiles, "%", "neper -p: latency percentiles to print", Range{0, 100});
    v("pin_cpu", &TcpRrParams::pin_cpu, "", "neper -U: pin server thread i to the i-th allowed CPU");
    v("server_cpus", &TcpRrParams::server_cpus, "cpulist", "CPUs the server threads may run on (\"\" = all)");
    v("server_nice", &TcpRrParams::server_nice, "", "Nice value of the server threads", Range{-20, 19});
    v("client_tx_ns", &TcpRrParams::client_tx_ns, "ns", "Idealised client only: send() to the wire", Range{0, 1e9});
    v("client_rx_ns", &TcpRrParams::client_rx_ns, "ns", "Idealised client only: wire to recv() return", Range{0, 1e9});
    v("rto_ns", &TcpRrParams::rto_ns, "ns",
      "Idealised client only: retransmission timeout for segments the server dropped (a Linux client host's TCP "
      "repairs its own)",
      Range{1000, 1e10});
    v("epoll_timeout", &TcpRrParams::epoll_timeout, "ms",
      "Server threads' epoll_wait timeout: -1 blocks; 0 is a userspace busy loop (the application calls "
      "epoll_wait(0) until it returns events, each empty call costing syscall_ns + epoll_wait_ns)",
      Range{-1, 0});
    v("spin_us", &TcpRrParams::spin_us, "us",
      "Server threads poll before they sleep: epoll_wait(0) for up to this long, then the blocking call (0 = "
      "block at once)",
      Range{0, 1e7});
    v("client_epoll_timeout", &TcpRrParams::client_epoll_timeout, "ms",
      "Client threads' epoll_wait timeout on each Linux client host: -1 blocks; 0 is a userspace busy loop",
      Range{-1, 0});
    v("server_user_ns", &TcpRrParams::server_user_ns, "ns", "Server user-space work per handled event", Range{0, 1e9});
    v("client_user_ns", &TcpRrParams::client_user_ns, "ns",
      "Linux client: user-space work per handled event (rr_ts_2's clock_gettime, the histogram update, "
      "rr_ts_1 of the next request, the state machine)",
      Range{0, 1e9});
    v("client_cpus", &TcpRrParams::client_cpus, "cpulist",
      "CPUs the client threads may run on, on each Linux client host (\"\" = all CPUs)");
    v("client_pin_cpu", &TcpRrParams::client_pin_cpu, "",
      "neper -U of the client process on each Linux client host: pin client thread i to the i-th CPU of "
      "client_cpus");
    v("client_nice", &TcpRrParams::client_nice, "", "Nice value of the client threads", Range{-20, 19});
    v("server_policy", &TcpRrParams::server_policy, "",
      "chrt for the server threads: normal (SCHED_OTHER), batch, idle, fifo or rr", chrt_policies());
    v("server_rt_priority", &TcpRrParams::server_rt_priority, "", "chrt priority of the server threads (fifo, rr)",
      Range{1, 99});
    v("client_policy", &TcpRrParams::client_policy, "",
      "chrt for the client threads on each Linux client host: normal, batch, idle, fifo or rr", chrt_policies());
    v("client_rt_priority", &TcpRrParams::client_rt_priority, "", "chrt priority of the client threads (fifo, rr)",
      Range{1, 99});
    v("flow_steering", &TcpRrParams::flow_steering, "",
      "Flow to server thread: reuseport (SO_REUSEPORT hash, neper's default) or rx_queue (thread = RX queue "
      "mod threads, as SO_INCOMING_NAPI_ID steering does; needed for per-epoll busy polling and IRQ suspension)",
      Choices{"reuseport", "rx_queue"});
  }
  bool operator==(const TcpRrParams&) const = default;
};

class TcpRr : public Workload, public EventSink, public WirePeer {
 public:
  explicit TcpRr(const TcpRrParams& p) : p_(p) {}
  void setup(Kernel& k, const std::vector<ClientPath>& paths, const RngRoot& rng) override;
  void start() override;
  void begin_measurement() override;
  void end_measurement() override;
  std::uint64_t completed() const override { return completed_; }
  void report(Json& summary, Json& workload) const override;
  Json conservation() const override;
  /// The per-flow view: transactions and mean latency over the flows, Jain's index, and the share
  /// of the mean latencies' spread each grouping of the flows explains (summary.flows).
  Json flows_report() const;
  const Histogram* latency_histogram() const override { return &hist_; }
  bool enable_breakdown() override;
  Json latency_breakdown() const override;
  bool trace_requests(Timeline& t) override;

  void on_event(std::uint32_t kind, std::uint64_t arg) override;
  void on_transmit(const WireTrain& tr, Nanos wire_done) override;
  void on_rx_drop(int sock, std::uint32_t bytes, std::uint32_t segs) override;

 private:
  struct Flow {
    int sock = -1;
    int csock = -1;  // the client host's socket (Linux client hosts)
    int host = 0;
    int thread = 0;    // the server thread (SO_REUSEPORT)
    int cthread = -1;  // the client thread on its Linux client host (-1: idealised client)
    Nanos req_start = 0;
    std::int64_t resp_got = 0;   // client side
    std::int64_t req_left = 0;   // client side: bytes of the request still to send (rr_xfer in rr_client_state_0)
    std::int64_t req_got = 0;    // server side (bytes of the current request read)
    std::int64_t resp_left = 0;  // server side: bytes of the response still to send (rr_xfer in rr_server_state_2)
    bool in_flight = false;
    std::uint64_t measured = 0;  // transactions completed in the measured window
    Nanos latency_sum = 0;       // and their latencies' sum (the per-flow view of report())
  };
  using Train = WireTrain;
  enum Kind : std::uint32_t { kStart = 1, kRetransmit = 4 };
  Proc<void> client_thread(Kernel& ck, Task& t, Epoll& ep, int host, std::vector<int> flows);
  void record_completion(Flow& f, Nanos at);
  void cut(const Flow& f, Nanos at);  // latency attribution of a measured transaction
  Proc<void> server_thread(Task& t, Epoll& ep);
  void send_request(Flow& f, Nanos at);
  void client_receive(int sock, std::uint32_t bytes, std::uint32_t segs, Nanos at);
  // Latency attribution: the points a transaction passed, by server socket.
  struct Marks {
    Nanos req_tx = 0;  // the request's transmit on the client
    RxMarks srv;       // the server's handler that completed the request
    Nanos srv_recv_done = 0, srv_send_start = 0, srv_tx = 0;
    RxMarks cli;  // the client's handler that completed the response
  };

  TcpRrParams p_;
  Kernel* k_ = nullptr;
  std::vector<ClientPath> paths_;
  std::vector<Flow> flows_;  // indexed by socket id
  Rng start_rng_{0};         // from the scenario's seed (stream "tcp_rr/flows")
  std::vector<Epoll*> epolls_;
  ClientUplink uplink_{kRetransmit};  // the idealised clients' sends to the server NICs
  LinuxClients clients_;              // the Linux client hosts' ends of the wire
  bool stopped_ = false;
  Nanos nth_done_ = 0;
  std::uint64_t completed_ = 0, measured_ = 0, sent_ = 0, drops_ = 0;
  Histogram hist_;
  void start_cutting();
  std::unique_ptr<LatencyBreakdown> breakdown_;  // cuts requests (--explain, or --trace)
  std::vector<Marks> marks_;                     // by server socket, when breakdown_
  bool report_breakdown_ = false;                // --explain: latency_breakdown() reports it
  Timeline* trace_ = nullptr;                    // --trace: sampled requests go there
  std::vector<std::string> stage_names_;         // with trace_
  int trace_stride_ = 1;                         // flows traced: server socket id % stride == 0
};

}  // namespace napisim
