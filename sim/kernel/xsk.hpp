// napisim: an XDP program in the driver's poll and AF_XDP sockets (Linux v6.6: net/core/filter.c
// bpf_prog_run_xdp() / xdp_do_redirect() / xdp_do_flush(), net/xdp/xsk.c, xsk_buff_pool.c; the
// mlx5 paths drivers/net/ethernet/mellanox/mlx5/core/en/xsk/{rx,tx}.c, en/xdp.c, en_txrx.c).
//
//   bpf_prog_run_xdp()      per received packet, before an skb exists: PASS (the skb path as
//                           without XDP), DROP (the buffer is recycled), TX (XDP_TX: sent back out
//                           of the same port from the channel's XDP SQ), REDIRECT into the XSK
//                           bound to the queue (bpf_redirect_map(&xsks_map, rx_queue_index)); a
//                           flow without an XSK on this queue takes the program's other action
//   xsk_rcv()               a frame from the fill ring holds the packet; zero-copy (XDP_ZEROCOPY:
//                           the NIC wrote it there) or copy mode (xsk_copy_xdp(): a per-byte copy);
//                           a full RX ring drops it (rx_dropped); an empty fill ring leaves the
//                           packet in the NIC ring: without XDP_USE_NEED_WAKEUP mlx5 keeps its
//                           NAPI polling (mlx5e_post_rx_wqes() returns busy), with it the driver
//                           sets the fill ring's need_wakeup flag and stops until the application
//                           kicks it (recvfrom() or poll()); napisim then leaves the channel's
//                           interrupt disarmed until that kick (an approximation: the NIC has
//                           no posted buffer, so nothing completes)
//   xdp_do_flush()          once per poll: sk_data_ready() of each XSK that received
//   mlx5e_xsk_tx()          the channel's NAPI poll sends up to 64 descriptors of the XSK's TX
//                           ring (MLX5E_TX_XSK_POLL_BUDGET) before the RX ring; with need_wakeup
//                           the TX ring's flag is set at a poll that finds nothing in flight and
//                           cleared when a poll queues descriptors (mlx5e_napi_xsk_post()), so
//                           the application must kick while the NAPI has no reason to come back
//   sendto() / recvfrom()   __xsk_sendmsg() / __xsk_recvmsg(): busy-poll the NAPI once if
//                           SO_BUSY_POLL (sk_busy_loop(sk, 1): napi_busy_loop() with no loop_end,
//                           SO_PREFER_BUSY_POLL, SO_BUSY_POLL_BUDGET or 8); then, unless the busy
//                           poll made it unnecessary (xsk_no_wakeup(): prefer and busy poll set),
//                           zero-copy kicks the driver (xsk_wakeup() -> mlx5e_xsk_wakeup(): mark
//                           the NAPI missed if it is scheduled, else a NOP on the ICOSQ, which
//                           interrupts if the channel's CQs are armed, i.e. unless a deferring
//                           poll left them disarmed and its timer will poll); copy
//                           mode's sendto() transmits the TX ring itself (xsk_generic_xmit())
//   poll()                  xsk_poll(): readable while the RX ring has entries; the caller sleeps
//                           on the socket until sk_data_ready()
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/fifo.hpp"
#include "sim/core/time.hpp"

namespace napisim {

struct Channel;

enum class XdpAction : std::uint8_t { kAborted, kDrop, kPass, kTx, kRedirect };

/// One frame on an XSK ring: the flow (server socket id) it came from or goes to, and its bytes.
struct XskFrame {
  int sock = -1;
  std::uint32_t bytes = 0;
  Nanos at = 0;       // when it became visible on the RX ring (xdp_do_flush())
  Nanos ring_at = 0;  // when its packet entered the NIC ring (Kernel::set_stamps() only)
};

struct Xsk {
  int id = 0;
  int sock = -1;                // the Socket standing for the XSK fd: rx_avail = RX ring entries, wq = poll()
  Channel* ch = nullptr;        // the queue it is bound to (xsk_bind(): sxdp_queue_id)
  bool zerocopy = true;         // XDP_ZEROCOPY (else XDP_COPY)
  bool need_wakeup = true;      // XDP_USE_NEED_WAKEUP
  std::int64_t rx_size = 2048;  // XSK_RING_CONS__DEFAULT_NUM_DESCS
  std::int64_t tx_size = 2048;  // XSK_RING_PROD__DEFAULT_NUM_DESCS
  std::int64_t fill = 2048;     // frames the application has put on the fill ring
  Fifo<XskFrame> rx{64};
  Fifo<XskFrame> tx{64};
  bool rx_need_wakeup = false;        // the fill ring's XDP_RING_NEED_WAKEUP
  bool tx_need_wakeup = true;         // the TX ring's
  bool fill_stalled = false;          // the driver stopped on an empty fill ring (need_wakeup)
  bool flush = false;                 // received in this poll: xdp_do_flush() wakes it
  std::size_t unflushed = 0;          // RX entries written in this poll (their `at` is the flush)
  bool prefer_busy_poll = false;      // SO_PREFER_BUSY_POLL
  std::int64_t busy_poll_budget = 0;  // SO_BUSY_POLL_BUDGET (0: BUSY_POLL_BUDGET 8)
  // statistics (XDP_STATISTICS and the application's own)
  std::uint64_t rx_packets = 0, rx_dropped = 0, fill_empty = 0, tx_packets = 0, kicks = 0, wakeups = 0;
  /// RX entries the application can see: those of polls that have flushed.
  std::size_t visible() const { return rx.size() - unflushed; }
};

/// The XDP program attached to a channel (xdp_prog of its RQ).
struct XdpProg {
  XdpAction action = XdpAction::kPass;  // for packets of flows without an XSK on their queue
  std::vector<int> xsk_of_sock;         // server socket id -> XSK id (the xsks_map lookup), -1 none
  Xsk* xsk = nullptr;                   // the XSK bound to this channel
  std::uint64_t drops = 0, tx = 0, redirects = 0, passes = 0;
};

}  // namespace napisim
