// napisim: RACK loss detection (net/ipv4/tcp_recovery.c v6.6, RFC 8985).
//
//   tcp_rack_advance     each (S)ACKed skb: the RTT of the most recently sent one delivered, and its
//                        send time (rack.mstamp); a sample shorter than min_rtt from a retransmitted
//                        skb may be the original's and is ignored
//   tcp_rack_detect_loss an skb sent before the latest delivered one is lost once rack.rtt plus the
//                        reordering window has passed since it was sent; otherwise the longest such
//                        wait arms the reordering timer (ICSK_TIME_REO_TIMEOUT, + TCP_TIMEOUT_MIN)
//   tcp_rack_reo_wnd     min_rtt / 4 (capped at srtt), and 0 in recovery or once tcp_reordering
//                        segments are SACKed (no reordering is ever seen here: reord_seen 0)
//   tcp_rack_reo_timeout the timer's losses start recovery (PRR's first step) and are retransmitted
// The kernel walks its skbs in send order (tsorted_sent_queue) and stops at the first sent after
// rack.mstamp; the model walks the retransmit queue by sequence and skips those instead.
#include <algorithm>

#include "sim/kernel/tcp_inline.hpp"

namespace napisim {

std::int64_t Kernel::tcp_rack_reo_wnd(const TcpSock& tp) const {
  // No reordering observed: aggressive in recovery, or once the DUPACK threshold is met.
  if (tp.ca_state >= TcpCaState::kRecovery) return 0;
  if (tp.sacked_out >= static_cast<std::uint32_t>(kp_.tcp.reordering)) return 0;
  return std::min(tp.min_rtt_us >> 2, tp.srtt_us >> 3);  // reo_wnd_steps 1
}

std::int64_t Kernel::tcp_rack_detect_loss(TcpSock& tp) {
  std::int64_t reo_timeout = 0;
  const std::int64_t reo_wnd = tcp_rack_reo_wnd(tp);
  const Nanos now_ns = now();
  for (std::size_t i = 0; i < tp.rtx.size(); ++i) {
    TcpSkb& skb = tp.rtx[i];
    if (skb.sacked & tcpcb::kSackedAcked) continue;
    // Skip ones marked lost but not yet retransmitted.
    if ((skb.sacked & tcpcb::kLost) && !(skb.sacked & tcpcb::kSackedRetrans)) continue;
    // Only skbs sent before the latest delivered one.
    if (!(tp.rack_mstamp > skb.sent || (tp.rack_mstamp == skb.sent && tp.rack_end_seq > skb.end_seq))) continue;
    // A packet is lost if it has not been (S)ACKed beyond the recent RTT plus the reordering window.
    const std::int64_t remaining = tp.rack_rtt_us + reo_wnd - (now_ns - skb.sent) / 1000;
    if (remaining <= 0) {
      tcp_mark_skb_lost(tp, skb);
    } else {
      reo_timeout = std::max(reo_timeout, remaining);
    }
  }
  return reo_timeout;
}

void Kernel::tcp_mark_skb_lost(TcpSock& tp, TcpSkb& skb) {
  if (skb.sacked & tcpcb::kSackedAcked) return;
  if (skb.sacked & tcpcb::kLost) {
    if (skb.sacked & tcpcb::kSackedRetrans) {
      // Account for retransmits that are lost again.
      skb.sacked &= static_cast<std::uint8_t>(~tcpcb::kSackedRetrans);
      tp.retrans_out -= skb.segs;
    }
  } else {
    tp.lost_out += skb.segs;
    skb.sacked |= tcpcb::kLost;
  }
}

bool Kernel::tcp_rack_mark_lost(TcpSock& tp) {
  if (!tp.rack_advanced) return false;
  // Reset the advanced flag to avoid unnecessary queue scanning.
  tp.rack_advanced = false;
  const std::int64_t timeout = tcp_rack_detect_loss(tp);
  if (timeout) tcp_reset_xmit_timer(tp, TcpXmitTimer::kReoTimeout, usecs_to_jiffies(timeout) + 2);  // TCP_TIMEOUT_MIN
  return timeout != 0;
}

void Kernel::tcp_rack_reo_timeout(Ctx ctx, Socket& s) {
  TcpSock& tp = *s.tcp;
  const std::uint32_t prior_inflight = tcp_packets_in_flight(tp);
  const std::int64_t timeout = tcp_rack_detect_loss(tp);
  (void)timeout;
  if (prior_inflight != tcp_packets_in_flight(tp)) {
    if (tp.ca_state != TcpCaState::kRecovery) {
      tcp_enter_recovery(tp);
      tcp_cwnd_reduction(tp, 1, 0);
    }
    tcp_xmit_retransmit_queue(ctx, s);
  }
  if (tp.pending != TcpXmitTimer::kRetrans) tcp_rearm_rto(tp);
}

}  // namespace napisim
