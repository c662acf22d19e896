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
    send(host, WireTrain{sock, static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(net.segs_of(b)), false}, depart);
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

}  // namespace napisim
