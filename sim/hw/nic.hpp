// napisim: a multi-queue NIC (mlx5-like channels) and Ethernet ports.
//
// A channel is an RX/TX queue pair sharing one completion interrupt (MSI-X vector) and one NAPI,
// as in mlx5e (mlx5e_napi_poll polls TX then RX completion queues). Packets are carried as
// trains: a TSO/GSO super-packet of `segs` MSS segments of one flow arriving back to back, which
// occupies `segs` RX descriptors. The RX path processes them segment by segment (budgets count
// segments) and GRO merges the train back into one skb.
//
// Interrupt moderation (ethtool -C rx-usecs / rx-frames, adaptive-rx via lib/dim) follows the
// generic semantics of kernel-napi.md 8.1: once the CQ is armed, the first completion starts an
// rx-usecs timer; the interrupt fires when it expires or when rx-frames completions accumulate,
// whichever comes first. The CQ stays disarmed (interrupt masked) until the driver re-arms it
// after napi_complete_done() returns true.
//
// cq_period_mode "cqe" or "eqe" models mlx5's CQ moderation instead (drivers/net/ethernet/mellanox/
// mlx5/core/en_main.c mlx5e_build_nic_params(), mlx5e_set_rx_cq_mode_params(), en.h, v5.8-v6.6;
// 9908aa292971 "net/mlx5e: CQE based moderation"): each completion queue of a channel (RX and TX)
// counts its own completions and raises the channel's interrupt at cq_max_count of them
// (rx-frames, tx-frames) or when its period (rx-usecs, tx-usecs) has run with a completion
// pending. The period restarts upon each event the CQ generates (EQE mode,
// MLX5_CQ_PERIOD_MODE_START_FROM_EQE: after a quiet spell the first completion interrupts at once)
// or upon each new completion (CQE mode, _START_FROM_CQE: a burst interrupts rx-usecs after its
// last packet, or at rx-frames). cq_period_mode selects the RX CQ's mode; the TX CQ is always EQE,
// as in mlx5. DIM (adaptive_rx, adaptive_tx) then samples each CQ's event counter after a poll
// that completes (mlx5e_handle_{rx,tx}_dim()), with the profiles of the CQ's mode. mlx5's defaults
// on a ConnectX-4 Lx or later (cq_period_start_from_cqe and cq_moderation capabilities) are
// cq_period_mode "cqe", rx_usecs 3, rx_frames 32, tx_usecs 16, tx_frames 32, adaptive_rx and
// adaptive_tx on (DIM starting at profile 1: RX CQE {8, 128}, TX EQE {8, 128}); "eqe" with
// rx_usecs 16 on older devices. The default, "arrival", keeps the generic semantics above.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/fifo.hpp"
#include "sim/core/time.hpp"
#include "sim/hw/dim.hpp"
#include "sim/hw/rss.hpp"
#include "sim/hw/topology.hpp"
#include "sim/kernel/napi.hpp"
#include "sim/kernel/tcp_hdr.hpp"
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

/// A train on its way into a channel's ring: it enters at `at`, with the event key `order` its
/// arrival event has (EventQueue::reserve()) whether or not that event is ever queued.
struct Inbound {
  Nanos at = 0;
  std::uint64_t order = 0;
  RxEntry e;
  bool queued = false;  // its arrival event is in the event queue
};

struct Nic;
struct XdpProg;

struct Channel {
  int id = 0;
  Nic* nic = nullptr;
  Fifo<RxEntry> ring{64};
  std::int64_t ring_pkts = 0;  // descriptors in use
  // Trains delivered to this queue and not yet in its ring, in arrival order. While the channel is
  // watched (Kernel::rx_watched: its CQ armed, or a busy poller spinning on its NAPI) each has its
  // arrival event queued; otherwise an arrival changes nothing anyone reads before the next poll
  // or re-arm, which takes it in first (Kernel::rx_sync), so no event per packet is needed.
  Fifo<Inbound> inbound{64};
  std::int64_t inbound_segs = 0;  // segments in `inbound`
  std::int64_t inbound_idle = 0;  // entries of `inbound` without a queued event
  std::int64_t tx_pending = 0;    // TX completions written (their packet left the wire), not yet reaped
  Fifo<TxDesc> tx_done{64};       // transmitted packets whose completion is not yet written
  Fifo<TxDesc> tx_written{64};    // the written ones, oldest first, until reaped
  bool tx_event = false;          // a completion event is queued (only needed while the IRQ is armed)
  int irq_cpu = 0;
  bool irq_armed = true;  // CQ armed: a completion may raise the interrupt
  Timer coal_timer;
  std::int64_t coal_frames = 0;  // completions since the CQ was armed
  Napi napi;
  std::unique_ptr<NetDim> dim;
  int rx_usecs = 0, rx_frames = 1;  // current moderation (static or from DIM)
  XdpProg* xdp = nullptr;           // the XDP program on its RQ (sim/kernel/xsk.hpp), or none
  // cq_period_mode cqe/eqe (0: arrival): each CQ's completions since its last event, the newest
  // RX completion (a CQE-mode period restarts there) and each CQ's last event (an EQE-mode one).
  static constexpr Nanos kLongAgo = -(Nanos{1} << 60);
  enum CqMode : std::uint8_t { kArrival = 0, kCqe = 1, kEqe = 2 };
  std::uint8_t cq_mode = kArrival;
  std::int64_t coal_rx = 0, coal_tx = 0;
  Nanos last_rx_cqe = kLongAgo, last_rx_event = kLongAgo, last_tx_event = kLongAgo;
  std::unique_ptr<NetDim> tx_dim;              // adaptive-tx
  int tx_usecs = 0, tx_frames = 1;             // current TX moderation (cqe/eqe)
  std::uint64_t rx_events = 0, tx_events = 0;  // each CQ's event_ctr (DIM samples them)
  // statistics
  std::uint64_t irqs = 0, rx_pkts = 0, rx_bytes = 0, drops = 0, tx_pkts = 0, tx_bytes = 0;
  std::uint64_t dim_events = 0;
};

struct Nic {
  NicParams params;
  int index = 0;
  std::vector<std::unique_ptr<Channel>> channels;
  std::unique_ptr<Rss> rss;
  Port tx_port;                    // server -> wire
  Port rx_port;                    // wire -> server (the switch port feeding the NIC)
  std::uint64_t switch_drops = 0;  // segments rx_port's buffer (switch_buffer_bytes) dropped
  std::vector<int> xps;            // transmit queue per CPU (XPS: the queue whose IRQ the CPU takes)
};

}  // namespace napisim
