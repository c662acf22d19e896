// napisim: a multi-queue NIC's parameters (ethtool -L/-G/-C, sysfs), the packets it moves and its
// Ethernet ports.
//
// Packets are carried as trains: a TSO/GSO super-packet of `segs` MSS segments of one flow
// arriving back to back, which occupies `segs` RX descriptors. The RX path processes them segment
// by segment (budgets count segments) and GRO merges the train back into one skb. The driver's
// per-queue state (channels, their NAPI and interrupt moderation) is the kernel's:
// sim/kernel/netdev.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/time.hpp"
#include "sim/hw/tcp_hdr.hpp"
#include "sim/hw/topology.hpp"
#include "sim/params/fields.hpp"

namespace napisim {

/// Bytes on the wire per segment besides payload: preamble+SFD 8, IFG 12, Ethernet 14, FCS 4,
/// IPv4 20, TCP 20 + timestamps 12.
inline constexpr std::int64_t kWireOverheadBytes = 90;

struct NicParams {
  std::string name = "eth0";
  std::int64_t numa_node = 0;
  std::int64_t queues = 8;        // combined channels (ethtool -L combined)
  std::int64_t ring_size = 1024;  // RX descriptors per queue (ethtool -G rx)
  double speed_gbps = 100.0;
  std::int64_t rx_usecs = 8;               // ethtool -C rx-usecs (mlx5 default 8)
  std::int64_t rx_frames = 128;            // ethtool -C rx-frames (mlx5 default 128)
  std::int64_t tx_usecs = 16;              // ethtool -C tx-usecs
  std::int64_t tx_frames = 32;             // ethtool -C tx-frames
  bool adaptive_rx = false;                // ethtool -C adaptive-rx: lib/dim picks (usecs, frames)
  bool adaptive_tx = false;                // ethtool -C adaptive-tx (cq_period_mode cqe or eqe)
  std::string cq_period_mode = "arrival";  // arrival (generic), cqe or eqe (mlx5 per-CQ moderation)
  std::string irq_affinity = "";  // cpulist; queue i -> i-th cpu of the list (wrapping); "" = the NIC node's cpus
  std::int64_t napi_defer_hard_irqs = 0;  // /sys/class/net/DEV/napi_defer_hard_irqs
  std::int64_t gro_flush_timeout_ns = 0;  // /sys/class/net/DEV/gro_flush_timeout
  std::int64_t switch_buffer_bytes = 0;   // the switch's egress buffer towards this NIC (0: unbounded)

  template <class V>
  static void fields(V& v) {
    v("name", &NicParams::name, "", "Device name");
    v("numa_node", &NicParams::numa_node, "", "NUMA node the NIC is attached to", Range{0, 64});
    v("queues", &NicParams::queues, "queues", "Combined RX/TX channels, one MSI-X vector and one NAPI each",
      Range{1, 1024});
    v("ring_size", &NicParams::ring_size, "descriptors", "RX ring size per queue; a full ring drops", Range{1, 65536});
    v("speed_gbps", &NicParams::speed_gbps, "Gb/s", "Port line rate", Range{0.001, 1e4});
    v("rx_usecs", &NicParams::rx_usecs, "us", "RX interrupt moderation delay (0 = interrupt per packet)",
      Range{0, 100000});
    v("rx_frames", &NicParams::rx_frames, "frames", "RX completions that force an interrupt", Range{1, 65536});
    v("tx_usecs", &NicParams::tx_usecs, "us", "TX completion moderation delay", Range{0, 100000});
    v("tx_frames", &NicParams::tx_frames, "frames", "TX completions that force an interrupt", Range{1, 65536});
    v("adaptive_rx", &NicParams::adaptive_rx, "",
      "Adaptive RX moderation (lib/dim net_dim: EQE profiles, or cq_period_mode's with cqe/eqe)");
    v("adaptive_tx", &NicParams::adaptive_tx, "",
      "Adaptive TX moderation (lib/dim net_dim, EQE TX profiles); with cq_period_mode cqe or eqe only");
    v("cq_period_mode", &NicParams::cq_period_mode, "",
      "Interrupt moderation: arrival (generic: one counter for RX and TX completions, the period timer starts at "
      "the first completion after the CQ is armed); cqe or eqe (mlx5: per-CQ counters and period timers, the RX "
      "CQ's restarting at each completion (cqe) or each event (eqe), the TX CQ's at each event). mlx5's defaults "
      "on ConnectX-4 Lx and later: cqe with rx_usecs 3, rx_frames 32, tx_usecs 16, tx_frames 32, adaptive_rx and "
      "adaptive_tx on",
      Choices{"arrival", "cqe", "eqe"});
    v("irq_affinity", &NicParams::irq_affinity, "cpulist",
      "CPUs taking the queue interrupts: queue i goes to the i-th listed CPU (wrapping); empty = the NIC's node");
    v("napi_defer_hard_irqs", &NicParams::napi_defer_hard_irqs, "polls",
      "Device default napi_defer_hard_irqs: empty polls before the IRQ is re-armed", Range{0, 2147483647});
    v("gro_flush_timeout_ns", &NicParams::gro_flush_timeout_ns, "ns",
      "Device default gro_flush_timeout: the re-poll timer of IRQ deferral", Range{0, 1e10});
    v("switch_buffer_bytes", &NicParams::switch_buffer_bytes, "bytes",
      "Buffer of the switch port that sends to this NIC: a FIFO that tail-drops the segments of a train that "
      "do not fit behind what it still has to send (wire bytes; 0 = unbounded, no drops)",
      Range{0, 1e10});
  }
  bool operator==(const NicParams&) const = default;
};

/// One RX descriptor run: a train of `segs` segments of one flow.
struct RxEntry {
  std::int32_t sock = -1;  // server socket (flow) index
  std::uint32_t segs = 1;
  std::uint32_t bytes = 0;   // payload bytes of the whole train
  bool ack_only = false;     // pure ACK(s), no payload
  std::uint32_t polled = 0;  // segments already reaped by the driver
  TcpHdr th;                 // connections run by the kernels' TCP (sim/kernel/tcp.hpp)
  // Latency attribution (Kernel::set_stamps()): when the train entered the ring, and its NAPI's
  // polled_ns at that moment (what the NAPI polls from then on, it spends ahead of this train).
  Nanos at = 0;
  Nanos ring_mark = 0;
};

/// NUMA cost of touching a NIC's packet memory from `cpu`. The device's rings and page pool are
/// allocated on its node (dev_to_node(); NicParams::numa_node) and the NIC DMAs packets there, so a
/// CPU of another node refills the descriptor, headers and skb from remote memory: the topology's
/// remote_node_penalty_ns scaled by SLIT distance / 10 (Topology::node_penalty), once per
/// skb the driver builds and once per recvmsg() that copies payload out. 0 on the NIC's node.
/// Eric Dumazet (2020-08-04, 2020-10-02): NIC processing must stay on the NUMA-local CPUs named by
/// smp_affinity.
inline Nanos numa_remote_ns(const Topology& topo, int cpu, int nic_node) {
  return topo.node_penalty(topo.node_of(cpu), nic_node);
}

/// A train on the wire between two hosts: `segs` MSS segments carrying `bytes` of payload of socket
/// `sock` (the sender's when it leaves a host, the receiver's when it arrives).
struct WireTrain {
  int sock = -1;
  std::uint32_t bytes = 0, segs = 0;
  bool ack_only = false;
  TcpHdr th;  // connections run by the kernels' TCP
  WireTrain() = default;
  WireTrain(int sock_, std::uint32_t bytes_, std::uint32_t segs_, bool ack_only_, const TcpHdr& th_ = {})
      : sock(sock_)
      , bytes(bytes_)
      , segs(segs_)
      , ack_only(ack_only_)
      , th(th_) {}
  /// Bytes on the wire: the payload and each segment's headers and framing.
  std::int64_t wire_bytes() const {
    return static_cast<std::int64_t>(bytes) + static_cast<std::int64_t>(segs) * kWireOverheadBytes;
  }
  /// The same train as socket `s` (the other end's) sees it.
  WireTrain for_sock(int s) const {
    WireTrain t = *this;
    t.sock = s;
    return t;
  }
};

/// A transmitted packet until the driver reaps its TX completion: when it has left the wire, and
/// the TCP socket whose sk_wmem_alloc its skb's truesize holds (tcp_wfree() on reaping), if any.
struct TxDesc {
  Nanos done = 0;
  std::int32_t sock = -1;
  std::int64_t truesize = 0;
};

/// A transmit port: line-rate serialization, FIFO.
struct Port {
  double ns_per_byte = 0.08;
  Nanos busy_until = 0;
  /// Serializes `wire_bytes` starting no earlier than `now`; returns when the last bit leaves.
  Nanos transmit(Nanos now, std::int64_t wire_bytes) {
    const Nanos start = now > busy_until ? now : busy_until;
    busy_until = start + static_cast<Nanos>(static_cast<double>(wire_bytes) * ns_per_byte + 0.5);
    return busy_until;
  }
};

}  // namespace napisim
