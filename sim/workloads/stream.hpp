// napisim: netperf TCP_STREAM (HewlettPackard/netperf @ afc51ff: nettest_omni.c send_tcp_stream /
// send_omni_inner / recv_omni; validation-targets.md 4.2).
//
// netperf sends -m bytes per send() on one connection per stream; netserver (a process per
// connection) receives with blocking recv() calls of -M bytes; the result is the bytes netserver
// received in the measurement window, in 10^6 bits/s (calc_thruput of remote_bytes_xferd).
//
// Over a NIC (default): the sender is an idealised client host (as tcp_rr's): it keeps up to
// min(cwnd, the receiver's advertised window, its send buffer) bytes in flight, in TSO trains of
// whole MSS segments serialised at its link rate; ACKs from the server (one per GRO train of two
// or more segments, __tcp_ack_snd_check) clock it. cwnd: IW10, slow start, +MSS per window after
// a loss, halved once per round trip on a loss (NewReno-like); segments the server's NIC dropped
// are retransmitted after `retransmit_ns` (fast retransmit after duplicate ACKs, ~1 RTT).
// With `loopback` both netperf and netserver run on the server host over lo (sim/kernel/loopback.cpp),
// as `netperf -L 127.0.0.1` in Kirill Tkhai's 2018 test: the kernel's own TCP flow control (send
// buffer, window, delayed ACK every two full frames) clocks netperf.
// Socket buffers: 0 = Linux autotuning; netperf then reports the initial sizes (tcp_wmem[1] 16384,
// tcp_rmem[1] 131072) and the connection may use up to tcp_wmem[2] 4 MiB / tcp_rmem[2] 6 MiB. An
// explicit -s/-S is doubled by the kernel (SO_SNDBUF/SO_RCVBUF store 2x) and fixes the buffer.
#pragma once

#include <vector>

#include "sim/core/fifo.hpp"
#include "sim/params/fields.hpp"
#include "sim/workloads/client_uplink.hpp"
#include "sim/workloads/workload.hpp"

namespace napisim {

struct StreamParams {
  bool loopback = false;                // netperf -L 127.0.0.1 -H 127.0.0.1: both ends on the server host
  std::int64_t num_streams = 1;         // concurrent netperf processes (one connection each)
  std::int64_t send_size = 16384;       // -m (netperf default: the send socket size)
  std::int64_t recv_size = 131072;      // -M (netperf default: the receive socket size)
  std::int64_t send_socket_size = 0;    // -s (0: autotuned)
  std::int64_t recv_socket_size = 0;    // -S (0: autotuned)
  std::string netperf_cpus = "";        // loopback: CPUs netperf may run on (taskset; "" = all)
  std::string netserver_cpus = "";      // CPUs netserver may run on ("" = all)
  std::int64_t client_tx_ns = 3000;     // idealised client: ACK in to data on the wire
  std::int64_t retransmit_ns = 100000;  // idealised client: loss to retransmission
  std::string host = "";                // address printed in netperf's banner ("" = 127.0.0.1 / 10.0.0.1)

  template <class V>
  static void fields(V& v) {
    v("loopback", &StreamParams::loopback, "", "netperf and netserver on the server host, over lo");
    v("num_streams", &StreamParams::num_streams, "streams", "Concurrent netperf TCP_STREAM instances", Range{1, 4096});
    v("send_size", &StreamParams::send_size, "bytes", "netperf -m: bytes per send()", Range{1, 1 << 26});
    v("recv_size", &StreamParams::recv_size, "bytes", "netperf -M: bytes per recv() in netserver", Range{1, 1 << 26});
    v("send_socket_size", &StreamParams::send_socket_size, "bytes", "netperf -s: SO_SNDBUF (0 = autotuned)",
      Range{0, 1 << 28});
    v("recv_socket_size", &StreamParams::recv_socket_size, "bytes", "netperf -S: remote SO_RCVBUF (0 = autotuned)",
      Range{0, 1 << 28});
    v("netperf_cpus", &StreamParams::netperf_cpus, "cpulist", "loopback: CPUs netperf may run on (\"\" = all)");
    v("netserver_cpus", &StreamParams::netserver_cpus, "cpulist", "CPUs netserver may run on (\"\" = all)");
    v("client_tx_ns", &StreamParams::client_tx_ns, "ns", "Idealised client: ACK arrival to data on the wire",
      Range{0, 1e9});
    v("retransmit_ns", &StreamParams::retransmit_ns, "ns", "Idealised client: a dropped segment is resent after this",
      Range{1000, 1e10});
    v("host", &StreamParams::host, "", "Remote address printed in netperf's banner");
  }
  bool operator==(const StreamParams&) const = default;
};

class Stream : public Workload, public EventSink, public WirePeer {
 public:
  explicit Stream(const StreamParams& p) : p_(p) {}
  void setup(Kernel& k, const std::vector<ClientPath>& paths, const RngRoot& rng) override;
  void start() override;
  void begin_measurement() override;
  void end_measurement() override;
  std::uint64_t completed() const override { return recv_calls_; }
  void report(Json& summary, Json& workload) const override;
  Json conservation() const override;

  void on_event(std::uint32_t kind, std::uint64_t arg) override;
  void on_transmit(const WireTrain& tr, Nanos wire_done) override;
  void on_rx_drop(int sock, std::uint32_t bytes, std::uint32_t segs) override;

  /// Send/receive buffer limits in bytes (autotuned maxima or 2x the -s/-S values).
  std::int64_t sndbuf() const { return p_.send_socket_size ? 2 * p_.send_socket_size : 4194304; }
  std::int64_t rcvbuf() const { return p_.recv_socket_size ? 2 * p_.recv_socket_size : 6291456; }

 private:
  struct Flow {
    int sock = -1;     // netserver's socket
    int tx_sock = -1;  // netperf's socket (loopback)
    int host = 0;
    // idealised client (NIC mode)
    std::int64_t snd_nxt = 0, snd_una = 0, snd_wnd = 0, cwnd = 0, ssthresh = 0, lost = 0;
    Nanos recover_until = 0;
    std::int64_t bytes_in_window = 0;
  };
  struct Train {
    int sock;
    std::uint32_t bytes, segs;
  };
  enum Kind : std::uint32_t { kStart = 1, kRetransmit = 3, kLoResend = 4 };
  Proc<void> netserver(Task& t, int flow);
  Proc<void> netperf(Task& t, int flow);
  void client_push(Flow& f, Nanos at);
  void received(Flow& f, std::int64_t n);

  StreamParams p_;
  Kernel* k_ = nullptr;
  std::vector<ClientPath> paths_;
  std::vector<Flow> flows_;
  std::vector<int> flow_of_sock_;
  ClientUplink uplink_;  // the idealised clients' sends to the server NICs
  Fifo<Train> retransmits_{64};
  Fifo<Train> lo_resends_{64};
  Rng start_rng_{0};
  std::uint64_t recv_calls_ = 0, drops_ = 0, retransmitted_ = 0;
  std::int64_t bytes_measured_ = 0, bytes_total_ = 0, sent_total_ = 0;
  std::uint64_t flow_limit_at_begin_ = 0, flow_limit_at_end_ = 0, lo_at_begin_ = 0, lo_at_end_ = 0;
};

}  // namespace napisim
