// napisim: the idealised client's uplink, shared by every workload that drives one (tcp_rr, app,
// trace, mutilate, super_netperf, stream). Per client host a line-rate Port (the client NIC), TCP
// segmentation of a message into TSO trains of whole MSS (tcp_sendmsg -> tcp_write_xmit with
// tso_max_bytes, net/ipv4/tcp_output.c) and the link latency from the platform. A train is handed
// to the server kernel when it is sent, with the time it will have passed the NIC's ingress port
// (Kernel::nic_ingress, FIFO: a NIC's trains arrive in the order they are sent to it); the kernel
// puts it into the ring at that time (Kernel::nic_deliver).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/fifo.hpp"
#include "sim/hw/rss.hpp"
#include "sim/workloads/workload.hpp"

namespace napisim {

/// A TSO train on the wire: `segs` MSS segments carrying `bytes` of payload for socket `sock`.
struct WireTrain {
  int sock = -1;
  std::uint32_t bytes = 0, segs = 0;
  bool ack_only = false;
  /// Bytes on the wire: the payload and each segment's headers and framing.
  std::int64_t wire_bytes() const {
    return static_cast<std::int64_t>(bytes) + static_cast<std::int64_t>(segs) * kWireOverheadBytes;
  }
};

/// Train `tr` reaches NIC `nic` of kernel `k` from the switch at `at_switch`: it passes the NIC's
/// ingress port (Kernel::nic_ingress: FIFO at line rate) and is handed to the kernel, which puts
/// it into the ring at that time (Kernel::nic_deliver).
void deliver_to_nic(Kernel& k, int nic, const WireTrain& tr, Nanos at_switch);

class ClientUplink final : public EventSink {
 public:
  /// `retransmit_kind`: the event kind retransmissions are queued with (the owning workload's, so
  /// that a run's event fingerprint does not depend on which object delivers them; needed by
  /// retransmit()).
  explicit ClientUplink(std::uint32_t retransmit_kind = 0) : retransmit_kind_(retransmit_kind) {}

  void setup(Kernel& k, const std::vector<ClientPath>& paths);
  /// The client's send(): `bytes` on `sock` from client host `host`, leaving its stack at `depart`,
  /// in trains of at most tso_max_bytes rounded down to whole MSS (at least one MSS).
  void send_message(int host, int sock, std::int64_t bytes, Nanos depart);
  /// One train onto client host `host`'s link at `depart`.
  void send(int host, const WireTrain& tr, Nanos depart);

  /// The server dropped train `tr` (ring or backlog full) of idealised host `host`: its TCP sends
  /// it again when its retransmission timer (`rto`) fires (tcp_retransmit_timer). Pure ACKs are
  /// not resent: the next cumulative ACK covers them. (A Linux host's: LinuxClients.)
  void retransmit(int host, const WireTrain& tr, Nanos rto);
  std::uint64_t retransmitted() const { return retransmitted_; }

  void on_event(std::uint32_t kind, std::uint64_t arg) override;

 private:
  std::uint32_t retransmit_kind_;
  Fifo<std::pair<int, WireTrain>> retransmits_{64};  // (client host, train) in RTO order
  std::uint64_t retransmitted_ = 0;
  Kernel* k_ = nullptr;
  std::vector<ClientPath> paths_;
  std::vector<Port> ports_;  // per client host
};

/// The workload's Linux client hosts (ClientPath::kernel set): what a host's kernel transmits
/// reaches the server NIC of its path after the path's latency, and each client socket maps to
/// the server socket of its connection. A train a NIC drops (ring or backlog full) is sent again
/// by the other end's TCP after `rto` (tcp_retransmit_timer), through its own NIC's port; that
/// event is the owning workload's (`owner`, `retransmit_kind`), which hands it back to
/// on_retransmit().
class LinuxClients {
 public:
  void setup(Kernel& server, const std::vector<ClientPath>& paths, EventSink* owner, std::uint32_t retransmit_kind,
             Nanos rto);
  /// Opens host `host`'s end of server socket `sock`, whose tuple (client -> server) is `tuple`:
  /// the reversed tuple, hashed by the client NIC's RSS. Returns the client socket's id.
  int add_socket(int host, int sock, const FlowTuple& tuple);
  int server_sock(int host, int csock) const {
    return csock_to_sock_[static_cast<std::size_t>(host)][static_cast<std::size_t>(csock)];
  }
  /// Server train `tr` (its sock a client socket of `host`) reaches the host's NIC from the switch.
  void to_client(int host, const WireTrain& tr, Nanos at_switch) const;
  /// The server dropped train `tr` from host `host` (its sock the server socket): the client's TCP
  /// sends it again. Pure ACKs are not resent: the next cumulative ACK covers them.
  void server_dropped(int host, const WireTrain& tr);
  void on_retransmit(std::uint64_t arg);
  bool linux_host(int host) const { return paths_[static_cast<std::size_t>(host)].kernel != nullptr; }
  std::uint64_t drops() const { return drops_; }  // segments the client NICs dropped
  std::uint64_t retransmitted() const { return retransmitted_; }

 private:
  class Wire final : public WirePeer {
   public:
    Wire(LinuxClients& c, int host) : c_(c), host_(host) {}
    void on_transmit(int csock, std::uint32_t bytes, std::uint32_t segs, bool ack_only, Nanos wire_done) override;
    void on_rx_drop(int csock, std::uint32_t bytes, std::uint32_t segs) override;

   private:
    LinuxClients& c_;
    int host_;
  };
  Kernel* server_ = nullptr;
  std::vector<ClientPath> paths_;
  EventSink* owner_ = nullptr;
  std::uint32_t retransmit_kind_ = 0;
  Nanos rto_ = 0;
  std::vector<std::unique_ptr<Wire>> wires_;
  // Per host and direction (retransmit_arg()), in RTO order; sock: the receiving end's socket.
  std::vector<Fifo<WireTrain>> retx_;
  std::vector<std::vector<int>> csock_to_sock_;  // per host
  std::uint64_t drops_ = 0, retransmitted_ = 0;

  void retransmit(int host, bool to_server, const WireTrain& tr);
};

/// The server dropped train `tr` of host `host` (ring or backlog full): that host's TCP sends it
/// again, a Linux host's through its own NIC (LinuxClients), an idealised one's through `uplink`
/// after `rto`.
inline void client_resend(LinuxClients& clients, ClientUplink& uplink, int host, const WireTrain& tr, Nanos rto) {
  if (clients.linux_host(host))
    clients.server_dropped(host, tr);
  else
    uplink.retransmit(host, tr, rto);
}

}  // namespace napisim
