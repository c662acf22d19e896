// napisim: `xsk_rr`, request/response over AF_XDP sockets, in the spirit of the xsk_rr tool used
// with the threaded busy-poll series (Samiullah Khawaja, "Extend NAPI threaded polling to allow
// kthread based busy polling", 2025): UDP requests from client flows, answered by a server thread
// per NIC queue that owns an XSK bound to it (sim/kernel/xsk.hpp, Linux v6.6).
//
// Server: an XDP program on every queue of NIC 0 redirects the flows' packets into that queue's
// XSK; the queue's thread (pinned to server_cpus' i-th CPU, by default the CPU after the queue's
// IRQ CPU) takes up to `batch` requests from its RX ring, spends service_ns of user time on each
// (swap the addresses, write the reply into the same UMEM frame), writes the replies to its TX
// ring, gives the frames back to the fill ring and kicks the driver with sendto() unless
// need_wakeup says it need not. How it waits for requests (`mode`):
//   spin       it spins on its RX ring in user space (no syscall): interrupts and softirq or a NAPI
//              kthread (threaded, threaded_busy_poll) fill it
//   busy_poll  with the RX ring empty it calls recvfrom(MSG_DONTWAIT), which with SO_BUSY_POLL
//              (busy_poll_us > 0) polls the NAPI once (SO_BUSY_POLL_BUDGET, SO_PREFER_BUSY_POLL);
//              between calls that find nothing it spins (busy_spin) until a packet reaches the NIC
//              ring
//   poll       it sleeps in poll() on the XSK fd until the RX ring has entries
//   epoll      it waits in epoll_wait() on an epoll holding the XSK fd (level-triggered), so the
//              epoll_busy_poll and irq_suspend models (prefer_busy_poll, busy_poll_usecs, IRQ
//              suspension) apply to it
// Client: an idealised client host (platform.clients, stack "idealised": client_tx_ns and
// client_rx_ns of stack time, its link) whose flows send request_size-byte UDP requests: closed
// loop (one outstanding per flow, the next `delay_ns` after each reply, as xsk_rr's -d), or at a
// fixed rate over all flows (constant or Poisson gaps, flows in turn). Latency is the client's,
// from its send to the reply's arrival. A request or reply lost (a full NIC ring or XSK RX ring)
// is counted; a closed-loop flow sends its next request timeout_ns after the loss.
#pragma once

#include <vector>

#include "sim/core/fifo.hpp"
#include "sim/params/fields.hpp"
#include "sim/workloads/client_uplink.hpp"
#include "sim/workloads/workload.hpp"

namespace napisim {

struct XskRrParams {
  std::int64_t num_flows = 1;
  std::string load = "closed";
  double rate_pps = 10000;
  std::string arrivals = "constant";
  std::int64_t delay_ns = 0;
  std::int64_t request_size = 64;
  std::int64_t response_size = 64;
  std::string mode = "spin";
  bool zerocopy = true;
  bool need_wakeup = true;
  std::int64_t busy_poll_us = 0;
  bool prefer_busy_poll = false;
  std::int64_t busy_poll_budget = 0;
  std::int64_t batch = 64;
  std::int64_t service_ns = 100;
  std::string server_cpus = "";
  std::int64_t client_tx_ns = 2000;
  std::int64_t client_rx_ns = 2000;
  std::int64_t timeout_ns = 1000000;
  std::vector<double> percentiles = {50, 90, 99, 99.9};

  template <class V>
  static void fields(V& v) {
    v("num_flows", &XskRrParams::num_flows, "flows", "Client UDP flows (spread over the queues by RSS)", Range{1, 1e6});
    v("load", &XskRrParams::load, "",
      "closed: one request outstanding per flow, the next delay_ns after its reply; fixed_rate: requests at "
      "rate_pps over all flows whatever the replies",
      Choices{"closed", "fixed_rate"});
    v("rate_pps", &XskRrParams::rate_pps, "requests/s", "fixed_rate: requests per second over all flows",
      Range{1e-3, 1e8});
    v("arrivals", &XskRrParams::arrivals, "", "fixed_rate: constant gaps or Poisson arrivals",
      Choices{"constant", "poisson"});
    v("delay_ns", &XskRrParams::delay_ns, "ns", "closed: the client's delay from a reply to its next request (-d)",
      Range{0, 1e10});
    v("request_size", &XskRrParams::request_size, "bytes", "UDP payload of a request", Range{1, 1472});
    v("response_size", &XskRrParams::response_size, "bytes", "UDP payload of a reply", Range{1, 1472});
    v("mode", &XskRrParams::mode, "",
      "How a server thread waits for requests: spin on its RX ring in user space; busy_poll: recvfrom() with "
      "SO_BUSY_POLL when the ring is empty; poll: sleep in poll() on the XSK fd; epoll: epoll_wait() on an epoll "
      "holding the XSK fd (epoll busy polling and IRQ suspension apply)",
      Choices{"spin", "busy_poll", "poll", "epoll"});
    v("zerocopy", &XskRrParams::zerocopy, "", "XDP_ZEROCOPY (false: XDP_COPY, a per-byte copy each way)");
    v("need_wakeup", &XskRrParams::need_wakeup, "",
      "XDP_USE_NEED_WAKEUP: kick the driver (sendto) only when its ring's flag asks (false: after every batch)");
    v("busy_poll_us", &XskRrParams::busy_poll_us, "us", "SO_BUSY_POLL on the XSK (0 = off)", Range{0, 1e7});
    v("prefer_busy_poll", &XskRrParams::prefer_busy_poll, "", "SO_PREFER_BUSY_POLL on the XSK");
    v("busy_poll_budget", &XskRrParams::busy_poll_budget, "pkts", "SO_BUSY_POLL_BUDGET (0 = BUSY_POLL_BUDGET 8)",
      Range{0, 65535});
    v("batch", &XskRrParams::batch, "requests", "RX descriptors a server thread takes per pass", Range{1, 4096});
    v("service_ns", &XskRrParams::service_ns, "ns", "Server user work per request (write the reply)", Range{0, 1e9});
    v("server_cpus", &XskRrParams::server_cpus, "cpulist",
      "CPU of queue i's server thread: the i-th listed CPU (wrapping); \"\" = the CPU after the queue's IRQ CPU");
    v("client_tx_ns", &XskRrParams::client_tx_ns, "ns", "Idealised client: send to the wire", Range{0, 1e9});
    v("client_rx_ns", &XskRrParams::client_rx_ns, "ns", "Idealised client: wire to the reply's time stamp",
      Range{0, 1e9});
    v("timeout_ns", &XskRrParams::timeout_ns, "ns", "closed: a lost request's flow sends again after this",
      Range{1000, 1e10});
    v("percentiles", &XskRrParams::percentiles, "%", "Latency percentiles to print", Range{0, 100});
  }
  bool operator==(const XskRrParams&) const = default;
};

class XskRr : public Workload, public EventSink, public WirePeer {
 public:
  XskRr(const XskRrParams& p, const std::string& path);
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
  /// --explain: where one request was when (its send time is in Flow::outstanding).
  struct Marks {
    Nanos ring = 0, xsk = 0, posted = 0, wire = 0;  // NIC ring, XSK RX ring, reply on the TX ring, reply sent
  };
  struct Flow {
    int sock = -1;
    int host = 0;
    Fifo<Nanos> outstanding{2};    // send times, in order
    Fifo<Marks> marks{2};          // with breakdown_: the answered requests' marks, in order
    std::size_t sent_replies = 0;  // marks whose reply has left (wire set)
  };
  /// The stages of --explain, in path order.
  enum Stage : std::size_t { kCliSend, kWireReq, kSrvRx, kSrvApp, kSrvTx, kWireResp, kCliApp, kNumStages };
  struct Server {
    Task* task = nullptr;
    Xsk* xsk = nullptr;
    Epoll* ep = nullptr;      // mode epoll
    std::vector<int> events;  // its epoll_wait()'s
    std::uint64_t served = 0;
  };
  enum Kind : std::uint32_t { kStart = 1, kArrival = 2, kReply = 3, kSend = 4 };
  Proc<void> server(Server& s);
  /// busy_poll mode: spin until a packet reaches the NIC ring or the XSK's RX ring.
  Proc<void> spin_for_packets(Task& t, Xsk& xs);
  void send(Flow& f, Nanos at);
  Nanos gap();

  XskRrParams p_;
  std::string path_;
  Kernel* k_ = nullptr;
  std::vector<ClientPath> paths_;
  std::vector<Flow> flows_;      // by server socket id
  std::vector<int> flow_socks_;  // flow index -> socket id
  std::vector<std::unique_ptr<Server>> servers_;
  ClientUplink uplink_;
  Rng rng_{0};
  std::size_t next_flow_ = 0;
  std::uint64_t sent_ = 0, completed_ = 0, measured_ = 0, lost_ = 0;
  Histogram hist_;
  std::unique_ptr<LatencyBreakdown> breakdown_;  // --explain
};

}  // namespace napisim
