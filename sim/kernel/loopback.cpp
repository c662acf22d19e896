// napisim: the loopback device. The TCP flow control of its sockets is socket.cpp's.
//
// Mirrors, as of v6.6 unless noted:
//   drivers/net/loopback.c loopback_xmit()  skb_orphan(), then __netif_rx(skb): lo has no ring, no
//                 interrupt and no NAPI of its own; its MTU is 64 KiB and it takes GSO skbs whole,
//                 so every skb of a send (<= tso_max_bytes) is one packet to the receiver
//   net/core/dev.c netif_rx_internal()      RPS on lo (rx-0/rps_cpus, RFS flow table): the backlog of
//                 get_rps_cpu()'s CPU; otherwise the sending CPU's own backlog
//                 (enqueue_to_backlog(skb, smp_processor_id())). The backlog NAPI runs in NET_RX: on
//                 the sending CPU the rcu_read_unlock_bh() of __dev_queue_xmit() runs it at once
//                 (do_softirq from local_bh_enable, see sys_send); a remote backlog gets the IPI that
//                 net_rx_action() sends at its end (net_rps_send_ipis).
// Each direction of a TCP connection has its own skb hash (tcp_transmit_skb sets skb->hash from
// the sender's random sk_txhash, and lo keeps it), so the two sockets of a pair have separate
// rps_sock_flow_table entries: data follows the reader's CPU, ACKs the writer's.
// An ACK carries its cumulative ack_seq (rcv_nxt mod 2^32, in skb.bytes), so a lost ACK is
// covered by the next one. Simplifications: the window is read from the receiver when the ACK is
// processed, and unacked bytes stand for sk_wmem_queued.
#include <algorithm>

#include "sim/kernel/kernel.hpp"

namespace napisim {

std::pair<int, int> Kernel::lo_connect(std::uint32_t hash_client, std::uint32_t hash_server) {
  auto make = [&](std::uint32_t hash) {
    Socket& s = sockets_.add();
    s.nic = -1;
    s.hash = hash;  // skb->hash of the packets this socket receives (the peer's sk_txhash)
    return s.id;
  };
  const int c = make(hash_client);
  const int s = make(hash_server);
  socket(c).lo_peer = s;
  socket(s).lo_peer = c;
  return {c, s};
}

std::int64_t Kernel::lo_xmit_skbs(std::int64_t bytes) const {
  // lo takes skbs of up to tso_max_bytes whole (its MTU is 64 KiB): the split loopback_xmit() makes.
  const std::int64_t max = kp_.net.tso_max_bytes;
  return bytes <= max ? 1 : (bytes + max - 1) / max;
}

void Kernel::loopback_xmit(Ctx ctx, Socket& s, std::int64_t bytes, bool ack_only) {
  const int this_cpu = ctx_cpu(ctx);
  Socket& peer = socket(s.lo_peer);
  if (s.rcvbuf > 0) tcp_event_ack_sent(s);  // every segment carries the ACK and window
  const std::vector<int>* map = rps_ ? &rps_->lo_map : nullptr;
  std::vector<RpsState::DevFlow>* table =
      rps_ && rps_->rfs && !rps_->lo_flow_table.empty() ? &rps_->lo_flow_table : nullptr;
  auto netif_rx = [&](std::uint32_t b, bool ack) {
    const Skb skb{peer.id, 1, b, ack, -1, -1, {}};
    ++lo_packets_;
    const int rps_cpu = get_rps_cpu_rxq(this_cpu, map, table, skb);
    enqueue_to_backlog(this_cpu, skb, rps_cpu >= 0 ? rps_cpu : this_cpu, nullptr);
  };
  if (ack_only) {
    netif_rx(static_cast<std::uint32_t>(s.rcv_nxt), true);  // ack_seq
    return;
  }
  s.snd_nxt += bytes;
  for (std::int64_t left = bytes; left > 0;) {
    const std::int64_t b = std::min(left, kp_.net.tso_max_bytes);
    netif_rx(static_cast<std::uint32_t>(b), false);
    left -= b;
  }
}

}  // namespace napisim
