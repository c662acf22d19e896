// napisim: TCP as the kernel sends and recovers, for connections between two simulated Linux
// hosts (Kernel::tcp_connect()). Mirrors, as of v6.6:
//   net/ipv4/tcp_output.c    tcp_write_xmit, tcp_tso_autosize, tcp_small_queue_check (TSQ),
//                            tcp_transmit_skb, tcp_send_ack / tcp_send_delayed_ack, tcp_send_loss_probe,
//                            tcp_xmit_retransmit_queue, tcp_cwnd_restart, tcp_update_skb_after_send
//   net/ipv4/tcp_input.c     tcp_ack, tcp_clean_rtx_queue, tcp_sacktag_write_queue, tcp_rtt_estimator,
//                            tcp_fastretrans_alert, tcp_cwnd_reduction (PRR), tcp_data_queue,
//                            tcp_event_data_recv, __tcp_ack_snd_check
//   net/ipv4/tcp_recovery.c  RACK: tcp_rack_advance, tcp_rack_detect_loss, tcp_rack_reo_timeout
//   net/ipv4/tcp_cubic.c     CUBIC with HyStart (tcp_cubic.hpp)
//   net/ipv4/tcp_timer.c     tcp_write_timer_handler (RTO, TLP, RACK reordering timer),
//                            tcp_delack_timer_handler, tcp_retransmit_timer
//   kernel/time/timer.c      the timer wheel's rounding of each expiry (calc_wheel_index)
//   net/sched/sch_fq.c       with net.core.default_qdisc "fq": each skb leaves at its EDT time stamp
// The code is in tcp_output.cpp, tcp_input.cpp, tcp_recovery.cpp, tcp_timer.cpp and
// tcp_cubic.cpp; sockets over lo and the idealised client keep the simpler model of socket.cpp and
// loopback.cpp.
//
// Sequence numbers are 64-bit byte offsets from the connection's start inside a host; a packet
// carries them modulo 2^32 (TcpHdr), unwrapped by the receiver against its own state, as the
// kernel's before()/after() compare them.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/time.hpp"
#include "sim/hw/nic.hpp"

namespace napisim {

/// One skb of a sender's retransmit queue (struct tcp_skb_cb).
struct TcpSkb {
  std::int64_t seq = 0, end_seq = 0;
  Nanos sent = 0;           // skb_mstamp_ns: its last (re)transmission
  Nanos wire_done = 0;      // when that transmission has left the NIC (skb_still_in_host_queue)
  std::uint32_t segs = 1;   // tcp_skb_pcount()
  std::uint8_t sacked = 0;  // TCPCB_* below
};

namespace tcpcb {
constexpr std::uint8_t kSackedAcked = 0x01;    // TCPCB_SACKED_ACKED
constexpr std::uint8_t kSackedRetrans = 0x02;  // TCPCB_SACKED_RETRANS: retransmitted, not yet (S)ACKed
constexpr std::uint8_t kLost = 0x04;           // TCPCB_LOST
constexpr std::uint8_t kEverRetrans = 0x80;    // TCPCB_EVER_RETRANS
}  // namespace tcpcb

/// TCP_INIT_CWND (include/net/tcp.h), where the kernel sizes buffers by it (tcp_sndbuf_expand(),
/// DRS's first measure) rather than by the route's initcwnd (TcpParams::init_cwnd).
constexpr std::int64_t kTcpInitCwnd = 10;

/// tcp_win_from_space() / tcp_space_from_win() (include/net/tcp.h): the share of a buffer's bytes
/// offered as window, 50% (tcp_adv_win_scale 1, v6.6's default scaling_ratio); the window is
/// counted in payload bytes, so skbs' overhead is not charged against it.
constexpr std::int64_t tcp_win_from_space(std::int64_t space) {
  return space / 2;
}
constexpr std::int64_t tcp_space_from_win(std::int64_t win) {
  return 2 * win;
}

/// icsk_ca_state (include/net/inet_connection_sock.h).
enum class TcpCaState : std::uint8_t { kOpen = 0, kDisorder = 1, kCwr = 2, kRecovery = 3, kLoss = 4 };

/// CUBIC's per-connection state (struct bictcp, net/ipv4/tcp_cubic.c v6.6).
struct Bictcp {
  std::uint32_t cnt = 0;               // increase cwnd by 1 after this many ACKs
  std::uint32_t last_max_cwnd = 0;     // last maximum snd_cwnd
  std::uint32_t last_cwnd = 0;         // the last snd_cwnd
  std::int64_t last_time = 0;          // time (jiffies) when last_cwnd was updated
  std::uint32_t bic_origin_point = 0;  // origin point of the bic function
  std::uint32_t bic_K = 0;             // time to origin point from the epoch's start
  std::uint32_t delay_min = 0;         // min delay (us)
  std::int64_t epoch_start = 0;        // beginning of an epoch (jiffies; 0: none)
  std::uint32_t ack_cnt = 0;           // number of ACKs
  std::uint32_t tcp_cwnd = 0;          // estimated tcp cwnd
  bool found = false;                  // HyStart found the exit point
  std::int64_t round_start = 0;        // beginning of each round (us)
  std::int64_t end_seq = 0;            // end_seq of the round
  std::int64_t last_ack = 0;           // last time the ACK spacing was close (us)
  std::uint32_t curr_rtt = 0;          // the minimum RTT of the current round (us)
  std::uint32_t sample_cnt = 0;        // RTT samples in the current round
};

/// A socket's timer wheel timer (or hrtimer), re-armed lazily: mod_timer() records the new expiry
/// (`expires_j`, from jiffy `armed_j`: the wheel's rounding depends on the distance), and the queued
/// event, which may be due earlier, re-arms itself when it fires before it, as a timer pushed back
/// would not have fired. So a timer pushed back at every packet costs one event per expiry, not
/// one per packet. Whether it is still pending is the socket's state (icsk_pending, icsk_ack.pending).
struct TcpTimer {
  Timer ev;
  std::int64_t expires_j = 0;  // wheel timers: when due, in jiffies
  std::int64_t armed_j = 0;    // the jiffy mod_timer() ran at
  Nanos hr = kNever;           // hrtimers: when due
  int cpu = -1;                // the CPU that armed it, where its handler runs
};

/// icsk_ack.pending bits (enum inet_csk_ack_state_t).
namespace ack_state {
constexpr std::uint8_t kSched = 1;    // ICSK_ACK_SCHED
constexpr std::uint8_t kTimer = 2;    // ICSK_ACK_TIMER
constexpr std::uint8_t kPushed = 4;   // ICSK_ACK_PUSHED
constexpr std::uint8_t kPushed2 = 8;  // ICSK_ACK_PUSHED2
constexpr std::uint8_t kNow = 16;     // ICSK_ACK_NOW
}  // namespace ack_state

/// What the xmit timer is set for (icsk_pending).
enum class TcpXmitTimer : std::uint8_t { kNone = 0, kRetrans = 1, kLossProbe = 2, kReoTimeout = 3 };

/// The sender's retransmit queue (tcp_rtx_queue): skbs by sequence, oldest first. A vector with a
/// moving head; it grows to the connection's high-water mark and is then reused (no allocation per
/// packet). An skb is split in place when a SACK or a retransmission covers part of it.
class TcpRtxQueue {
 public:
  bool empty() const { return head_ == q_.size(); }
  std::size_t size() const { return q_.size() - head_; }
  TcpSkb& operator[](std::size_t i) { return q_[head_ + i]; }
  const TcpSkb& operator[](std::size_t i) const { return q_[head_ + i]; }
  TcpSkb& front() { return q_[head_]; }
  TcpSkb& back() { return q_.back(); }
  void push_back(const TcpSkb& s) {
    if (head_ > 0 && head_ == q_.size()) {
      q_.clear();
      head_ = 0;
    }
    q_.push_back(s);
  }
  void pop_front() {
    if (++head_ == q_.size()) {
      q_.clear();
      head_ = 0;
    }
  }
  /// Splits skb i at `seq` (a segment boundary inside it): i keeps [seq_i, seq), i + 1 [seq, end).
  void split(std::size_t i, std::int64_t seq, std::int64_t mss);

 private:
  std::vector<TcpSkb> q_;
  std::size_t head_ = 0;
};

/// A receiver's out-of-order data: disjoint [start, end) ranges by sequence, each with when it
/// last grew (the SACK option lists the most recent first, RFC 2018).
struct TcpOfoRange {
  std::int64_t start = 0, end = 0;
  std::uint64_t touched = 0;
};

/// A connection's TCP state on one host (struct tcp_sock with its inet_connection_sock parts).
struct TcpSock {
  int id = -1;  // the socket's
  // ---- sender ----
  std::int64_t snd_una = 0, snd_nxt = 0, write_seq = 0;
  std::int64_t snd_wnd = 0;  // the peer's window
  std::uint32_t cwnd = 10, ssthresh = 0x7fffffff, cwnd_cnt = 0, cwnd_clamp = 0xffffffff;
  std::uint32_t packets_out = 0, sacked_out = 0, lost_out = 0, retrans_out = 0;
  std::uint32_t prior_cwnd = 0, prr_delivered = 0, prr_out = 0;
  std::uint32_t max_packets_out = 0, snd_cwnd_used = 0;
  std::int64_t cwnd_usage_seq = 0;
  bool is_cwnd_limited = false;
  TcpCaState ca_state = TcpCaState::kOpen;
  std::int64_t high_seq = 0;
  std::int64_t tlp_high_seq = 0;  // 0: no loss probe outstanding (snd_nxt when one was sent)
  bool tlp_retrans = false;
  std::int64_t snd_cwnd_stamp = 0, lsndtime = 0;  // jiffies
  std::int64_t highest_sack = -1;                 // end of the highest SACKed byte (tcp_highest_sack_seq)
  // RTT (tcp_rtt_estimator): srtt_us is 8 x the smoothed RTT, mdev_us and rttvar_us 4 x the deviation.
  std::int64_t srtt_us = 0, mdev_us = 0, mdev_max_us = 0, rttvar_us = 0, rtt_seq = 0;
  std::int64_t min_rtt_us = 0;    // tcp_min_rtt (the windowed min; the window, 300 s, outlasts a run)
  std::int64_t rto_j = 0;         // icsk_rto (jiffies)
  std::int64_t retransmits = 0;   // icsk_retransmits
  std::uint64_t pacing_rate = 0;  // sk_pacing_rate, bytes per second
  Nanos wstamp_ns = 0;            // tcp_wstamp_ns: the next skb's earliest departure
  std::uint64_t data_segs_out = 0;
  // The send buffer: sk_sndbuf, and SOCK_NOSPACE (a send() found it full, or tcp_poll() found the
  // socket unwritable: the ACK that frees space then calls tcp_new_space()). sk_wmem_queued is
  // taken as the bytes not yet acked (write_seq - snd_una), without the skbs' overhead.
  std::int64_t sndbuf = 0;
  bool nospace = false;
  // RACK (struct tcp_rack)
  Nanos rack_mstamp = 0;
  std::int64_t rack_end_seq = 0;
  std::int64_t rack_rtt_us = 0;
  bool rack_advanced = false;
  // TCP Small Queues: truesize of this socket's skbs in the qdisc and NIC (sk_wmem_alloc).
  std::int64_t wmem_alloc = 0;
  bool tsq_throttled = false, tsq_queued = false;
  TcpXmitTimer pending = TcpXmitTimer::kNone;
  int txq = -1;  // the TX queue of its last skb (sk_tx_queue)
  TcpTimer xmit_timer, delack_timer, compack_timer, pacing_timer;
  TcpRtxQueue rtx;
  Bictcp ca;
  // ---- receiver ----
  // (rcv_nxt, rcv_wup, rcv_wnd, icsk_ack.rcv_mss and the receive queue are the Socket's.)
  std::int64_t window_clamp = 0;  // tcp_win_from_space(rcvbuf)
  // Receive buffer autotuning (DRS): sk_rcvbuf and rcv_ssthresh (the window offered grows up to
  // it, tcp_grow_window); rcvq_space, the bytes the reader copied in the last measured RTT, from
  // copied_seq rcvq_seq at rcvq_time_us; rcv_rtt_est (rtt_us is 8 x the estimate; its window-based
  // measure counts from rcv_rtt_seq, rcv_rtt_time_us, -1 before the first data).
  std::int64_t rcvbuf = 0, rcv_ssthresh = 0;
  std::int64_t rcvq_space = 0, rcvq_seq = 0, rcvq_time_us = 0;
  std::int64_t rcv_rtt_us = 0, rcv_rtt_seq = 0, rcv_rtt_time_us = -1;
  // Timestamps (RFC 7323, ms): ts_recent, the peer's TSval this side echoes; the last TSecr that
  // gave tcp_rcv_rtt_measure_ts() a sample.
  std::uint32_t ts_recent = 0, rcv_rtt_last_tsecr = 0;
  std::uint8_t ack_pending = 0;  // icsk_ack.pending (ack_state)
  std::uint8_t quick = 0;        // icsk_ack.quick
  std::uint8_t pingpong = 0;     // icsk_ack.pingpong
  std::int64_t ato = 0;          // icsk_ack.ato (jiffies; 0 before the first data)
  std::int64_t lrcvtime = 0;     // icsk_ack.lrcvtime (jiffies)
  std::int64_t ack_timeout = 0;  // icsk_ack.timeout (jiffies)
  std::uint32_t dup_ack_counter = 0, compressed_ack = 0;
  std::int64_t compressed_ack_rcv_nxt = 0;
  bool dsack = false;            // the next ACK reports a duplicate
  std::vector<TcpOfoRange> ofo;  // out_of_order_queue, by sequence
  std::int64_t ofo_bytes = 0;
  std::uint64_t ofo_clock = 0;  // orders the ranges' growth (SACK block order)
  // fq (net.core.default_qdisc "fq"): skbs held until their departure time, in order.
  struct Held {
    Nanos at;  // its departure time stamp
    WireTrain tr;
    std::int64_t truesize;
  };
  std::vector<Held> held;
  std::size_t held_head = 0;
};

/// TCP's per-host counters (netstat -s: TcpExt), reported with the host's results.
struct TcpStats {
  std::uint64_t retrans_segs = 0;   // RetransSegs
  std::uint64_t fast_retrans = 0;   // TCPFastRetrans (segments)
  std::uint64_t timeouts = 0;       // TCPTimeouts
  std::uint64_t loss_probes = 0;    // TCPLossProbes
  std::uint64_t recoveries = 0;     // entries into fast recovery (TCPSackRecovery)
  std::uint64_t delayed_acks = 0;   // DelayedACKs
  std::uint64_t tsq_throttled = 0;  // times TSQ stopped a flow
};

/// The jiffy whose tick runs a timer wheel timer armed at jiffy `now` to expire at jiffy
/// `expires`: calc_wheel_index() (kernel/time/timer.c v6.6) rounds the expiry up to the
/// granularity of the wheel level its distance falls in (8^level jiffies), strictly beyond it, so
/// that it never fires early; a timer already due runs at the next tick.
inline std::int64_t timer_wheel_expiry(std::int64_t now, std::int64_t expires) {
  constexpr int kLvlClkShift = 3, kLvlDepth = 9;
  const std::int64_t delta = expires - now;
  if (delta < 0) return now + 1;
  for (int lvl = 0; lvl < kLvlDepth; ++lvl) {
    // LVL_START(lvl + 1) = (LVL_SIZE - 1) << (lvl * LVL_CLK_SHIFT)
    const std::int64_t next_start = std::int64_t{63} << (lvl * kLvlClkShift);
    if (delta < next_start || lvl == kLvlDepth - 1) {
      const int shift = lvl * kLvlClkShift;
      return ((expires >> shift) + 1) << shift;
    }
  }
  return expires + 1;
}

}  // namespace napisim
