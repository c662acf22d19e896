#include "sim/workloads/client_uplink.hpp"

#include <algorithm>

namespace napisim {

void ClientUplink::setup(Kernel& k, const std::vector<ClientPath>& paths) {
  k_ = &k;
  paths_ = paths;
  ports_.clear();
  for (const ClientPath& cp : paths_) {
    Port port;
    port.ns_per_byte = 8.0 / cp.bandwidth_gbps;
    ports_.push_back(port);
  }
}

void ClientUplink::send_message(int host, int sock, std::int64_t bytes, Nanos depart) {
  const NetParams& net = k_->params().net;
  for (std::int64_t left = bytes; left > 0;) {
    const std::int64_t b = net.train_bytes(left);
    send(host, WireTrain{sock, static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(net.segs_of(b)), false},
         depart);
    left -= b;
  }
}

void deliver_to_nic(Kernel& k, int nic, const WireTrain& tr, Nanos at_switch) {
  RxEntry e;
  e.sock = tr.sock;
  e.segs = tr.segs;
  e.bytes = tr.bytes;
  e.ack_only = tr.ack_only;
  e.th = tr.th;
  k.switch_to_nic(nic, e, at_switch);
}

void ClientUplink::send(int host, const WireTrain& tr, Nanos depart) {
  const ClientPath& path = paths_[static_cast<std::size_t>(host)];
  const Nanos on_link = ports_[static_cast<std::size_t>(host)].transmit(depart, tr.wire_bytes());
  deliver_to_nic(*k_, path.nic, tr, on_link + path.latency_ns);
}

void ClientUplink::retransmit(int host, const WireTrain& tr, Nanos rto) {
  NAPISIM_ASSERT(retransmit_kind_ != 0, "ClientUplink: no retransmit event kind");
  if (tr.ack_only || tr.bytes == 0) return;
  retransmits_.push_back({host, tr});
  k_->host().schedule(k_->now() + rto, Prio::kWire, this, retransmit_kind_, 0);
}

void ClientUplink::on_event(std::uint32_t kind, std::uint64_t /*arg*/) {
  NAPISIM_ASSERT(kind == retransmit_kind_, "ClientUplink: unknown event");
  const auto [host, tr] = retransmits_.front();
  retransmits_.pop_front();
  ++retransmitted_;
  send(host, tr, k_->now());
}

void LinuxClients::setup(Kernel& server, const std::vector<ClientPath>& paths) {
  server_ = &server;
  paths_ = paths;
  csock_to_sock_.resize(paths_.size());
  for (std::size_t h = 0; h < paths_.size(); ++h) {
    if (!paths_[h].kernel) continue;
    wires_.push_back(std::make_unique<Wire>(*this, static_cast<int>(h)));
    paths_[h].kernel->set_peer(wires_.back().get());
  }
}

int LinuxClients::add_socket(int host, int sock, const FlowTuple& tuple) {
  const FlowTuple rev{tuple.daddr, tuple.saddr, tuple.dport, tuple.sport};
  const ClientPath& path = paths_[static_cast<std::size_t>(host)];
  Kernel& ck = *path.kernel;
  Socket& cs = ck.add_socket(0, rev);
  // The handshake: SYN and SYN-ACK each cross the path (two minimal segments at the link's rate).
  const Nanos syn_rtt =
      2 * (path.latency_ns + static_cast<Nanos>(static_cast<double>(kWireOverheadBytes) * 8.0 / path.bandwidth_gbps));
  ck.tcp_connect(cs, syn_rtt, server_->tcp_initial_window());
  server_->tcp_connect(server_->socket(sock), syn_rtt, ck.tcp_initial_window());
  std::vector<int>& map = csock_to_sock_[static_cast<std::size_t>(host)];
  if (map.size() <= static_cast<std::size_t>(cs.id)) map.resize(static_cast<std::size_t>(cs.id) + 1, -1);
  map[static_cast<std::size_t>(cs.id)] = sock;
  return cs.id;
}

void LinuxClients::to_client(int host, const WireTrain& tr, Nanos at_switch) const {
  deliver_to_nic(*paths_[static_cast<std::size_t>(host)].kernel, 0, tr, at_switch);
}

void LinuxClients::Wire::on_transmit(const WireTrain& tr, Nanos wire_done) {
  const ClientPath& path = c_.paths_[static_cast<std::size_t>(host_)];
  WireTrain to_server = tr;
  to_server.sock = c_.server_sock(host_, tr.sock);
  deliver_to_nic(*c_.server_, path.nic, to_server, wire_done + path.latency_ns);
}

void LinuxClients::Wire::on_rx_drop(int /*csock*/, std::uint32_t /*bytes*/, std::uint32_t segs) {
  c_.drops_ += segs;  // the server's TCP repairs it
}

}  // namespace napisim
