// napisim: a NIC as its driver holds it (mlx5-like channels): struct net_device and mlx5e_channel.
//
// A channel is an RX/TX queue pair sharing one completion interrupt (MSI-X vector) and one NAPI,
// as in mlx5e (mlx5e_napi_poll polls TX then RX completion queues): struct mlx5e_channel, with the
// hardware queue state it fronts (the RX ring, the TX completions, the CQs' moderation). The NIC's
// parameters, packet trains and ports are sim/hw/nic.hpp.
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
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/fifo.hpp"
#include "sim/core/time.hpp"
#include "sim/hw/dim.hpp"
#include "sim/hw/nic.hpp"
#include "sim/hw/rss.hpp"
#include "sim/kernel/napi.hpp"

namespace napisim {

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
