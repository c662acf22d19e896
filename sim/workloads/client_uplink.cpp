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
  k.nic_deliver(nic, e, k.nic_ingress(nic, at_switch, tr.wire_bytes()));
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

namespace {
// The argument of a retransmission event: the host and the direction.
std::uint64_t retransmit_arg(int host, bool to_server) {
  return 2 * static_cast<std::uint64_t>(host) + (to_server ? 1 : 0);
}
}  // namespace

void LinuxClients::setup(Kernel& server, const std::vector<ClientPath>& paths, EventSink* owner,
                         std::uint32_t retransmit_kind, Nanos rto) {
  server_ = &server;
  paths_ = paths;
  owner_ = owner;
  retransmit_kind_ = retransmit_kind;
  rto_ = rto;
  retx_.resize(2 * paths_.size());
  csock_to_sock_.resize(paths_.size());
  for (std::size_t h = 0; h < paths_.size(); ++h) {
    if (!paths_[h].kernel) continue;
    wires_.push_back(std::make_unique<Wire>(*this, static_cast<int>(h)));
    paths_[h].kernel->set_peer(wires_.back().get());
  }
}

int LinuxClients::add_socket(int host, int sock, const FlowTuple& tuple) {
  const FlowTuple rev{tuple.daddr, tuple.saddr, tuple.dport, tuple.sport};
  const Socket& cs = paths_[static_cast<std::size_t>(host)].kernel->add_socket(0, rev);
  std::vector<int>& map = csock_to_sock_[static_cast<std::size_t>(host)];
  if (map.size() <= static_cast<std::size_t>(cs.id)) map.resize(static_cast<std::size_t>(cs.id) + 1, -1);
  map[static_cast<std::size_t>(cs.id)] = sock;
  return cs.id;
}

void LinuxClients::to_client(int host, const WireTrain& tr, Nanos at_switch) const {
  deliver_to_nic(*paths_[static_cast<std::size_t>(host)].kernel, 0, tr, at_switch);
}

void LinuxClients::server_dropped(int host, const WireTrain& tr) {
  if (tr.ack_only || tr.bytes == 0) return;
  retransmit(host, true, tr);
}

void LinuxClients::retransmit(int host, bool to_server, const WireTrain& tr) {
  const std::uint64_t arg = retransmit_arg(host, to_server);
  retx_[arg].push_back(tr);
  server_->host().schedule(server_->now() + rto_, Prio::kWire, owner_, retransmit_kind_, arg);
}

void LinuxClients::on_retransmit(std::uint64_t arg) {
  const WireTrain tr = retx_[arg].front();
  retx_[arg].pop_front();
  ++retransmitted_;
  const int host = static_cast<int>(arg / 2);
  const ClientPath& path = paths_[static_cast<std::size_t>(host)];
  const Nanos now = server_->now();
  if (arg % 2 == 1) {  // the client's TCP, through the client NIC's port
    const Nanos done = path.kernel->nics()[0]->tx_port.transmit(now, tr.wire_bytes());
    deliver_to_nic(*server_, path.nic, tr, done + path.latency_ns);
  } else {  // the server's TCP, through the server NIC's port
    const Nanos done = server_->nics()[static_cast<std::size_t>(path.nic)]->tx_port.transmit(now, tr.wire_bytes());
    to_client(host, tr, done + path.latency_ns);
  }
}

void LinuxClients::Wire::on_transmit(int csock, std::uint32_t bytes, std::uint32_t segs, bool ack_only,
                                     Nanos wire_done) {
  const ClientPath& path = c_.paths_[static_cast<std::size_t>(host_)];
  deliver_to_nic(*c_.server_, path.nic, WireTrain{c_.server_sock(host_, csock), bytes, segs, ack_only},
                 wire_done + path.latency_ns);
}

void LinuxClients::Wire::on_rx_drop(int csock, std::uint32_t bytes, std::uint32_t segs) {
  c_.drops_ += segs;
  if (bytes == 0) return;  // a pure ACK: the next cumulative ACK covers it
  c_.retransmit(host_, false, WireTrain{csock, bytes, segs, false});
}

}  // namespace napisim
