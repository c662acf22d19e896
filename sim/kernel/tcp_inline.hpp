// napisim: the TCP files' small hot-path functions, inline (sim/kernel/tcp.hpp): napisim is built
// position-independent, so GCC inlines a member function into its callers only when it is declared
// inline, even within its own file. Each says which kernel file it mirrors.
#pragma once

#include <algorithm>

#include "sim/kernel/kernel.hpp"

namespace napisim {

// sizeof(struct sk_buff) and skb_shared_info, and MAX_TCP_HEADER's head: an skb's truesize beyond
// its payload [INFER: SKB_TRUESIZE() of a page-frag skb, ~0.9 KB on x86-64].
inline constexpr std::int64_t kTcpSkbOverhead = 896;
inline constexpr int kTcpPacingShift = 10;                 // sk_pacing_shift default (~1 ms of the pacing rate)
inline constexpr std::int64_t kTcpMaxQuickacks = 16;       // TCP_MAX_QUICKACKS
inline constexpr std::uint32_t kTcpHystartLowWindow = 16;  // tcp_cubic hystart_low_window

// tcp_mstamp (include/net/tcp.h)
inline std::int64_t Kernel::tcp_clock_us() const {
  return now() / 1000;
}

// include/net/tcp.h
inline bool Kernel::tcp_is_cwnd_limited(const TcpSock& tp) const {
  if (tp.is_cwnd_limited) return true;
  // If in slow start, ensure cwnd grows to twice what was ACKed.
  if (tp.cwnd < tp.ssthresh) return tp.cwnd < 2 * tp.max_packets_out;
  return false;
}

// net/ipv4/tcp_input.c
inline void Kernel::tcp_rearm_rto(TcpSock& tp) {
  if (!tp.packets_out) {
    tp.pending = TcpXmitTimer::kNone;  // inet_csk_clear_xmit_timer(ICSK_TIME_RETRANS)
    return;
  }
  std::int64_t rto = tp.rto_j;
  // Offset the time elapsed after installing the regular RTO.
  if (tp.pending == TcpXmitTimer::kReoTimeout || tp.pending == TcpXmitTimer::kLossProbe)
    rto = usecs_to_jiffies(std::max<std::int64_t>(tcp_rto_delta_us(tp), 1));
  tcp_reset_xmit_timer(tp, TcpXmitTimer::kRetrans, rto);
}

// net/ipv4/tcp_input.c
inline void Kernel::tcp_update_pacing_rate(TcpSock& tp) {
  // 200% of the current rate (mss * cwnd / srtt) in slow start, 120% in congestion avoidance.
  std::uint64_t rate = static_cast<std::uint64_t>(kp_.net.mss) * ((1000000 / 100) << 3);
  rate *= static_cast<std::uint64_t>(tp.cwnd < tp.ssthresh / 2 ? kp_.tcp.pacing_ss_ratio : kp_.tcp.pacing_ca_ratio);
  rate *= std::max(tp.cwnd, tp.packets_out);
  if (tp.srtt_us) rate /= static_cast<std::uint64_t>(tp.srtt_us);
  tp.pacing_rate = rate;
}

// net/ipv4/tcp_input.c
inline void Kernel::tcp_rtt_estimator(TcpSock& tp, std::int64_t mrtt_us) {
  std::int64_t m = std::max<std::int64_t>(mrtt_us, 1);
  std::int64_t srtt = tp.srtt_us;
  const std::int64_t rto_min_us = kp_.tcp.rto_min_ms * 1000;
  if (srtt != 0) {
    m -= srtt >> 3;  // m is now error in rtt est
    srtt += m;       // rtt = 7/8 rtt + 1/8 new
    if (m < 0) {
      m = -m;                // m is now abs(error)
      m -= tp.mdev_us >> 2;  // similar update on mdev
      if (m > 0) m >>= 3;
    } else {
      m -= tp.mdev_us >> 2;  // similar update on mdev
    }
    tp.mdev_us += m;  // mdev = 3/4 mdev + 1/4 new
    if (tp.mdev_us > tp.mdev_max_us) {
      tp.mdev_max_us = tp.mdev_us;
      if (tp.mdev_max_us > tp.rttvar_us) tp.rttvar_us = tp.mdev_max_us;
    }
    if (tp.snd_una > tp.rtt_seq) {
      if (tp.mdev_max_us < tp.rttvar_us) tp.rttvar_us -= (tp.rttvar_us - tp.mdev_max_us) >> 2;
      tp.rtt_seq = tp.snd_nxt;
      tp.mdev_max_us = rto_min_us;
    }
  } else {
    // no previous measure
    srtt = m << 3;        // take the measured time to be rtt
    tp.mdev_us = m << 1;  // make sure rto = 3*rtt
    tp.rttvar_us = std::max(tp.mdev_us, rto_min_us);
    tp.mdev_max_us = tp.rttvar_us;
    tp.rtt_seq = tp.snd_nxt;
  }
  tp.srtt_us = std::max<std::int64_t>(1, srtt);
}

// net/ipv4/tcp_input.c
inline void Kernel::tcp_set_rto(TcpSock& tp) {
  // __tcp_set_rto(): srtt + rttvar (rttvar is 4 x the deviation, at least TCP_RTO_MIN), bounded by
  // TCP_RTO_MAX (120 s).
  tp.rto_j = std::min(usecs_to_jiffies((tp.srtt_us >> 3) + tp.rttvar_us), tcp_rto_max_j_);
}

// net/ipv4/tcp_input.c
inline void Kernel::tcp_queue_rcv(Socket& s, std::int64_t n, const TrainStamps* st) {
  s.rx_avail += n;
  s.rcv_nxt += n;
  if (stamps_) stamp_delivery(s, st);
  if (s.rx_timestamps) s.rx_stamps.push_back(Socket::RxStamp{s.rcv_nxt, now()});
  ++s.rx_skbs;
  if (s.spinner) spin_wake(*s.spinner);  // sk_busy_loop_end() sees the data
}

// net/ipv4/tcp_input.c
inline void Kernel::tcp_incr_quickack(Socket& s, TcpSock& tp) {
  std::int64_t quickacks = s.rcv_wnd / (2 * s.rcv_mss);
  if (quickacks == 0) quickacks = 2;
  quickacks = std::min<std::int64_t>(quickacks, kTcpMaxQuickacks);
  if (quickacks > tp.quick) tp.quick = static_cast<std::uint8_t>(quickacks);
}

// net/ipv4/tcp_input.c
inline void Kernel::tcp_event_data_recv(Socket& s, TcpSock& tp, const Skb& skb) {
  tp.ack_pending |= ack_state::kSched;  // inet_csk_schedule_ack()
  // tcp_measure_rcv_mss(): a GRO skb's segment size is its gso_size.
  const std::int64_t len = skb.segs >= 2 ? skb.th.mss : static_cast<std::int64_t>(skb.bytes);
  if (len >= s.rcv_mss) {
    s.rcv_mss = std::min<std::int64_t>(len, kp_.net.mss);
  } else {
    if (tp.ack_pending & ack_state::kPushed) tp.ack_pending |= ack_state::kPushed2;
    tp.ack_pending |= ack_state::kPushed;
  }
  tcp_rcv_rtt_measure(s, tp);
  const std::int64_t now_j = jiffies();
  const std::int64_t ato_min = tcp_ato_min_j_;  // TCP_ATO_MIN
  if (!tp.ato) {
    // The first data packet received: initialize the delayed ACK engine.
    tcp_incr_quickack(s, tp);
    tp.ato = ato_min;
  } else {
    const std::int64_t m = now_j - tp.lrcvtime;
    if (m <= ato_min / 2) {
      tp.ato = (tp.ato >> 1) + ato_min / 2;  // the fastest case is the first
    } else if (m < tp.ato) {
      tp.ato = std::min((tp.ato >> 1) + m, tp.rto_j);
    } else if (m > tp.rto_j) {
      tcp_incr_quickack(s, tp);  // too long gap: the sender failed to restart its window
    }
  }
  tp.lrcvtime = now_j;
  if (skb.bytes >= 128) tcp_grow_window(s, tp, skb);
}

// net/ipv4/tcp_input.c
inline void Kernel::tcp_rcv_rtt_update(TcpSock& tp, std::int64_t sample_us, bool win_dep) {
  std::int64_t new_sample = tp.rcv_rtt_us;  // 8 x the estimate
  std::int64_t m = sample_us;
  if (new_sample != 0) {
    // Timestamps give a smoothed estimate; the window-based measure, an upper bound of the RTT
    // for a sender that is not window-limited, only ever lowers it.
    if (!win_dep) {
      m -= new_sample >> 3;
      new_sample += m;
    } else {
      m <<= 3;
      if (m < new_sample) new_sample = m;
    }
  } else {
    new_sample = m << 3;  // no previous measure
  }
  tp.rcv_rtt_us = new_sample;
}

// net/ipv4/tcp_input.c
inline void Kernel::tcp_rcv_rtt_measure(Socket& s, TcpSock& tp) {
  // The time rcv_nxt takes to pass the right edge of the window offered when the last measure began.
  const std::int64_t now_us = tcp_clock_us();
  if (tp.rcv_rtt_time_us >= 0) {
    if (s.rcv_nxt < tp.rcv_rtt_seq) return;
    tcp_rcv_rtt_update(tp, std::max<std::int64_t>(1, now_us - tp.rcv_rtt_time_us), true);
  }
  tp.rcv_rtt_seq = s.rcv_nxt + s.rcv_wnd;
  tp.rcv_rtt_time_us = now_us;
}

// net/ipv4/tcp_input.c
inline void Kernel::tcp_rcv_rtt_measure_ts(Socket& s, TcpSock& tp, const Skb& skb) {
  // A data skb of at least a segment echoing a TSecr not sampled yet: now - TSecr, in whole ms,
  // at least 1 (v6.6's TCP_TS_HZ 1000: a datacenter RTT reads as 1 ms).
  if (skb.th.tsecr == tp.rcv_rtt_last_tsecr) return;
  tp.rcv_rtt_last_tsecr = skb.th.tsecr;
  if (static_cast<std::int64_t>(skb.bytes) < s.rcv_mss) return;
  std::uint32_t delta = tcp_time_stamp() - skb.th.tsecr;
  if (delta >= 0x7fffffffU / 1000) return;
  if (!delta) delta = 1;
  tcp_rcv_rtt_update(tp, std::int64_t{delta} * 1000, false);
}

// net/ipv4/tcp_input.c
inline void Kernel::tcp_grow_window(Socket& s, TcpSock& tp, const Skb& skb) {
  // Raise rcv_ssthresh, the bound of the window offered, by what an skb of this truesize may use
  // of the buffer: two segments' worth, at least twice its length (memory pressure not modelled).
  const std::int64_t room = std::min(tp.window_clamp, tcp_space(s, tp)) - tp.rcv_ssthresh;
  if (room <= 0) return;
  const std::int64_t len = skb.bytes;
  const std::int64_t truesize = tcp_skb_truesize(len);
  std::int64_t incr = 0;
  if (tcp_win_from_space(truesize) <= len) {
    incr = 2 * kp_.net.mss;
  } else {  // __tcp_grow_window(): small skbs grow it only while it is small
    std::int64_t ts = tcp_win_from_space(truesize) >> 1;
    std::int64_t window = tcp_win_from_space(kp_.tcp.rmem_max) >> 1;
    while (tp.rcv_ssthresh <= window) {
      if (ts <= len) {
        incr = 2 * s.rcv_mss;
        break;
      }
      ts >>= 1;
      window >>= 1;
    }
  }
  if (incr) {
    incr = std::max(incr, 2 * len);
    tp.rcv_ssthresh += std::min(room, incr);
    tp.quick |= 1;
  }
}

// SKB_TRUESIZE (include/linux/skbuff.h)
inline std::int64_t Kernel::tcp_skb_truesize(std::int64_t len) {
  return len + kTcpSkbOverhead;
}

// include/net/tcp.h
inline std::uint32_t Kernel::tcp_current_ssthresh(const TcpSock& tp) const {
  if (tp.ca_state == TcpCaState::kCwr || tp.ca_state == TcpCaState::kRecovery) return tp.ssthresh;
  return std::max(tp.ssthresh, ((tp.cwnd >> 1) + (tp.cwnd >> 2)));
}

// net/ipv4/tcp_output.c
inline std::uint32_t Kernel::tcp_tso_segs(const TcpSock& tp) const {
  const auto gso_max = static_cast<std::uint64_t>(kp_.net.tso_max_bytes);
  std::uint64_t bytes = tp.pacing_rate >> kTcpPacingShift;
  const std::int64_t r = tp.min_rtt_us >> kp_.tcp.tso_rtt_log;
  if (r < 32) bytes += gso_max >> r;
  bytes = std::min(bytes, gso_max);
  return std::max(static_cast<std::uint32_t>(bytes / static_cast<std::uint64_t>(kp_.net.mss)),
                  static_cast<std::uint32_t>(kp_.tcp.min_tso_segs));
}

// net/ipv4/tcp_output.c
inline std::uint32_t Kernel::tcp_cwnd_test(const TcpSock& tp) const {
  const std::uint32_t in_flight = tcp_packets_in_flight(tp);
  if (in_flight >= tp.cwnd) return 0;
  // For better scheduling, ensure we have at least 2 GSO packets in flight.
  const std::uint32_t halfcwnd = std::max(tp.cwnd >> 1, 1u);
  return std::min(halfcwnd, tp.cwnd - in_flight);
}

// net/ipv4/tcp_output.c
inline bool Kernel::tcp_small_queue_check(TcpSock& tp, std::int64_t len, int factor) {
  std::int64_t limit =
      std::max<std::int64_t>(2 * tcp_skb_truesize(len), static_cast<std::int64_t>(tp.pacing_rate >> kTcpPacingShift));
  if (!tcp_fq()) limit = std::min(limit, kp_.tcp.limit_output_bytes);  // SK_PACING_NONE
  limit <<= factor;
  if (tp.wmem_alloc > limit) {
    // Always send skb if rtx queue is empty or has one skb: no need to wait for TX completion.
    if (tp.rtx.size() <= 1) return false;
    if (!tp.tsq_throttled) ++tcp_stats_.tsq_throttled;
    tp.tsq_throttled = true;
    return true;
  }
  return false;
}

// net/ipv4/tcp_output.c
inline void Kernel::tcp_cwnd_validate(TcpSock& tp, bool is_cwnd_limited) {
  // Track the strongest available signal of the degree to which the cwnd is fully utilized.
  if (tp.snd_una >= tp.cwnd_usage_seq || is_cwnd_limited ||
      (!tp.is_cwnd_limited && tp.packets_out > tp.max_packets_out)) {
    tp.is_cwnd_limited = is_cwnd_limited;
    tp.max_packets_out = tp.packets_out;
    tp.cwnd_usage_seq = tp.snd_nxt;
  }
  if (tcp_is_cwnd_limited(tp)) {
    // Network is fed fully.
    tp.snd_cwnd_used = 0;
    tp.snd_cwnd_stamp = jiffies();
  } else {
    // Network starves.
    if (tp.packets_out > tp.snd_cwnd_used) tp.snd_cwnd_used = tp.packets_out;
    if (kp_.tcp.slow_start_after_idle && jiffies() - tp.snd_cwnd_stamp >= tp.rto_j) {
      // tcp_cwnd_application_limited() (RFC 2861): decay cwnd to what was used.
      if (tp.ca_state == TcpCaState::kOpen) {
        const std::uint32_t win_used = std::max(tp.snd_cwnd_used, static_cast<std::uint32_t>(kp_.tcp.init_cwnd));
        if (win_used < tp.cwnd) {
          tp.ssthresh = tcp_current_ssthresh(tp);
          tp.cwnd = (tp.cwnd + win_used) >> 1;
        }
        tp.snd_cwnd_used = 0;
      }
      tp.snd_cwnd_stamp = jiffies();
    }
  }
}

// net/ipv4/tcp_output.c
inline void Kernel::tcp_build_header(Socket& s, TcpSock& tp, std::int64_t seq, TcpHdr& th) {
  th.seq = static_cast<std::uint32_t>(seq);
  th.ack = static_cast<std::uint32_t>(s.rcv_nxt);
  th.wnd = static_cast<std::uint32_t>(tcp_select_window(s, tp));
  th.tsval = tcp_time_stamp();
  th.tsecr = tp.ts_recent;
  th.mss = static_cast<std::uint16_t>(kp_.net.mss);
  th.dsack = tp.dsack;
  tp.dsack = false;
  // The SACK option: the out-of-order ranges, the most recently grown first (tcp_sack_new_ofo_skb),
  // at most 3 beside the timestamps option.
  th.nsack = 0;
  std::uint64_t below = ~0ULL;  // the blocks taken so far grew after every range still left
  for (std::size_t k = 0; k < 3; ++k) {
    const TcpOfoRange* best = nullptr;
    for (const TcpOfoRange& r : tp.ofo)
      if (r.touched < below && (!best || r.touched > best->touched)) best = &r;
    if (!best) break;
    th.sack[2 * k] = static_cast<std::uint32_t>(best->start);
    th.sack[2 * k + 1] = static_cast<std::uint32_t>(best->end);
    th.nsack = static_cast<std::uint8_t>(k + 1);
    below = best->touched;
  }
  tcp_event_ack_sent(s, tp);
}

// net/ipv4/tcp_output.c
inline std::int64_t Kernel::tcp_space_window(Socket& s, TcpSock& tp) {
  // __tcp_select_window(): the free half of the receive buffer (tcp_win_from_space(), scaling 50%,
  // in payload bytes: the unread data and the out-of-order queue hold their share of it); once it
  // is below half, no more quick ACKs, and zero when below 1/16 of it or an MSS; at most
  // rcv_ssthresh (tcp_grow_window). Not modelled: rounding to the window scale (2^7 bytes).
  const std::int64_t full = tp.window_clamp;
  const std::int64_t free = tcp_space(s, tp);
  if (free < full / 2) {
    tp.quick = 0;
    if (free < full / 16 || free < std::min(s.rcv_mss, full)) return 0;
  }
  return std::min(free, tp.rcv_ssthresh);
}

// net/ipv4/tcp_output.c
inline std::int64_t Kernel::tcp_select_window(Socket& s, TcpSock& tp) {
  const std::int64_t cur_win = std::max<std::int64_t>(0, s.rcv_wup + s.rcv_wnd - s.rcv_nxt);
  std::int64_t new_win = tcp_space_window(s, tp);
  // Never shrink the offered window.
  if (new_win < cur_win) new_win = cur_win;
  s.rcv_wnd = new_win;
  s.rcv_wup = s.rcv_nxt;
  return new_win;
}

// net/ipv4/tcp_output.c
inline void Kernel::tcp_event_ack_sent(Socket& s, TcpSock& tp) {
  (void)s;
  tp.compressed_ack = 0;
  // tcp_dec_quickack_mode(): an ACK of new data counts against the quick ACKs.
  if (tp.quick) {
    const unsigned pkts = (tp.ack_pending & ack_state::kSched) ? 1 : 0;
    if (pkts >= tp.quick) {
      tp.quick = 0;
      tp.ato = tcp_ato_min_j_;  // leaving quickack mode we deflate ATO (TCP_ATO_MIN)
    } else {
      tp.quick = static_cast<std::uint8_t>(tp.quick - pkts);
    }
  }
  // inet_csk_clear_xmit_timer(ICSK_TIME_DACK): the delayed-ACK timer is left to expire unused;
  // a compressed-SACK hrtimer is cancelled.
  tp.ack_pending = 0;
  tp.compack_timer.hr = kNever;
}

// net/ipv4/tcp_output.c
inline void Kernel::tcp_send_delayed_ack(Ctx ctx, Socket& s) {
  TcpSock& tp = *s.tcp;
  const std::int64_t delack_min = tcp_ato_min_j_;  // TCP_DELACK_MIN
  const std::int64_t delack_max = kp_.hz / 5;      // TCP_DELACK_MAX
  std::int64_t ato = tp.ato;
  if (ato > delack_min) {
    std::int64_t max_ato = kp_.hz / 2;
    if (tp.pingpong >= 1 || (tp.ack_pending & ack_state::kPushed)) max_ato = delack_max;
    // If some rtt estimate is known, use it to bound the delayed ACK.
    if (tp.srtt_us) {
      const std::int64_t rtt = std::max(usecs_to_jiffies(tp.srtt_us >> 3), delack_min);
      if (rtt < max_ato) max_ato = rtt;
    }
    ato = std::min(ato, max_ato);
  }
  ato = std::min(ato, delack_max);  // icsk_delack_max
  std::int64_t timeout = jiffies() + ato;
  // Use the new timeout only if there wasn't an older one earlier.
  if (tp.ack_pending & ack_state::kTimer) {
    // If the delack timer is about to expire, send the ACK now.
    if (tp.ack_timeout <= jiffies() + (ato >> 2)) {
      tcp_send_ack(ctx, s);
      return;
    }
    if (timeout >= tp.ack_timeout) timeout = tp.ack_timeout;
  }
  tp.ack_pending |= ack_state::kSched | ack_state::kTimer;
  tp.ack_timeout = timeout;
  tcp_reset_timer(tp, tp.delack_timer, kTcpDelackTimer, timeout);
}

// net/ipv4/tcp_output.c
inline bool Kernel::tcp_schedule_loss_probe(TcpSock& tp, bool advancing_rto) {
  // Schedule a loss probe in 2*RTT for SACK-capable connections not in loss recovery
  // (tcp_early_retrans 3).
  if (!tp.packets_out || (tp.ca_state != TcpCaState::kOpen && tp.ca_state != TcpCaState::kCwr)) return false;
  std::int64_t timeout;
  if (tp.srtt_us) {
    timeout = usecs_to_jiffies(tp.srtt_us >> 2);
    timeout += tp.packets_out == 1 ? tcp_rto_min_j_ : 2;  // TCP_RTO_MIN : TCP_TIMEOUT_MIN
  } else {
    timeout = msecs_to_jiffies(1000);  // TCP_TIMEOUT_INIT
  }
  // If the RTO formula yields an earlier time, then use that time.
  const std::int64_t rto_delta_us = advancing_rto ? tp.rto_j * (tick_ns_ / 1000) : tcp_rto_delta_us(tp);
  if (rto_delta_us > 0) timeout = std::min(timeout, usecs_to_jiffies(rto_delta_us));
  tcp_reset_xmit_timer(tp, TcpXmitTimer::kLossProbe, timeout);
  return true;
}

// include/net/tcp.h
inline std::int64_t Kernel::tcp_rto_delta_us(const TcpSock& tp) const {
  const Nanos head_sent = tp.rtx.empty() ? now() : tp.rtx[0].sent;
  return (head_sent + tp.rto_j * tick_ns_ - now()) / 1000;
}

// net/ipv4/tcp_recovery.c
inline void Kernel::tcp_rack_advance(TcpSock& tp, std::uint8_t sacked, std::int64_t end_seq, Nanos xmit_time) {
  const std::int64_t rtt_us = (now() - xmit_time) / 1000;
  // A retransmitted skb's sample shorter than min_rtt may be the original's delivery: ignore it.
  if (rtt_us < tp.min_rtt_us && (sacked & (tcpcb::kSackedRetrans | tcpcb::kEverRetrans))) return;
  tp.rack_advanced = true;
  tp.rack_rtt_us = rtt_us;
  // tcp_rack_sent_after()
  if (xmit_time > tp.rack_mstamp || (xmit_time == tp.rack_mstamp && end_seq > tp.rack_end_seq)) {
    tp.rack_mstamp = xmit_time;
    tp.rack_end_seq = end_seq;
  }
}

// net/ipv4/tcp_cubic.c
inline void Kernel::cubictcp_cong_avoid(TcpSock& tp, std::uint32_t acked) {
  if (!tcp_is_cwnd_limited(tp)) return;
  if (tp.cwnd < tp.ssthresh) {
    acked = tcp_slow_start(tp, acked);
    if (!acked) return;
  }
  bictcp_update(tp, tp.cwnd, acked);
  tcp_cong_avoid_ai(tp, tp.ca.cnt, acked);
}

// net/ipv4/tcp_cubic.c
inline void Kernel::cubictcp_acked(TcpSock& tp, std::int64_t rtt_us) {
  Bictcp& ca = tp.ca;
  // Some calls are for duplicates without timestamps
  if (rtt_us < 0) return;
  // Discard delay samples right after fast recovery
  if (ca.epoch_start && jiffies() - ca.epoch_start < kp_.hz) return;
  const auto delay = static_cast<std::uint32_t>(std::max<std::int64_t>(rtt_us, 1));
  // first time call or link delay decreases
  if (ca.delay_min == 0 || ca.delay_min > delay) ca.delay_min = delay;
  // hystart triggers when cwnd is larger than some threshold
  if (!ca.found && tp.cwnd < tp.ssthresh && kp_.tcp.hystart && tp.cwnd >= kTcpHystartLowWindow)
    hystart_update(tp, delay);
}

}  // namespace napisim
