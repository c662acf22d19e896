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
/// the server socket of its connection. Both ends of such a connection run the kernels' TCP
/// (Kernel::tcp_connect(), sim/kernel/tcp.hpp), which repairs what a NIC or a switch drops by
/// itself, through its own host's NIC: a drop is only counted here.
class LinuxClients {
 public:
  void setup(Kernel& server, const std::vector<ClientPath>& paths);
  /// Opens host `host`'s end of server socket `sock`, whose tuple (client -> server) is `tuple`:
  /// the reversed tuple, hashed by the client NIC's RSS, both ends connected (the handshake's RTT
  /// from the path). Returns the client socket's id.
  int add_socket(int host, int sock, const FlowTuple& tuple);
  int server_sock(int host, int csock) const {
    return csock_to_sock_[static_cast<std::size_t>(host)][static_cast<std::size_t>(csock)];
  }
  /// Server train `tr` (its sock a client socket of `host`) reaches the host's NIC from the switch.
  void to_client(int host, const WireTrain& tr, Nanos at_switch) const;
  bool linux_host(int host) const { return paths_[static_cast<std::size_t>(host)].kernel != nullptr; }
  std::uint64_t drops() const { return drops_; }  // segments the client NICs dropped

 private:
  class Wire final : public WirePeer {
   public:
    Wire(LinuxClients& c, int host) : c_(c), host_(host) {}
    void on_transmit(const WireTrain& tr, Nanos wire_done) override;
    void on_rx_drop(int csock, std::uint32_t bytes, std::uint32_t segs) override;

   private:
    LinuxClients& c_;
    int host_;
  };
  Kernel* server_ = nullptr;
  std::vector<ClientPath> paths_;
  std::vector<std::unique_ptr<Wire>> wires_;
  std::vector<std::vector<int>> csock_to_sock_;  // per host
  std::uint64_t drops_ = 0;
};

/// The server dropped train `tr` of host `host` (ring or backlog full): an idealised host's TCP
/// sends it again through `uplink` after `rto`; a Linux host's finds the loss itself.
inline void client_resend(const LinuxClients& clients, ClientUplink& uplink, int host, const WireTrain& tr, Nanos rto) {
  if (!clients.linux_host(host)) uplink.retransmit(host, tr, rto);
}

}  // namespace napisim
