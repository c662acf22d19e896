// napisim: TCP's receiving side (net/ipv4/tcp_input.c, tcp.c's tcp_cleanup_rbuf, as of v6.6) for
// connections run by the kernel's TCP (tcp.hpp).
//
//   tcp_rcv_established   tcp_ack() on every segment, then tcp_data_queue(), tcp_data_snd_check()
//                         (new data the ACK lets out; tcp_check_space(): the send buffer's growth and
//                         EPOLLOUT for a sender that found it full) and tcp_ack_snd_check()
//   tcp_ack               snd_una, the peer's window, tcp_sacktag_write_queue(), tcp_clean_rtx_queue()
//                         (RTT samples by Karn's rule, the TS echo standing in for retransmitted data),
//                         tcp_process_tlp_ack(), tcp_fastretrans_alert() on a dubious ACK, the xmit
//                         timer (tcp_set_xmit_timer), tcp_cong_control() (PRR in recovery, CUBIC
//                         otherwise, then the pacing rate), tcp_xmit_recovery()
//   tcp_fastretrans_alert RACK marks losses (tcp_recovery.cpp); any lost segment starts fast recovery
//                         (tcp_enter_recovery: CUBIC's ssthresh, PRR from prior_cwnd); recovery ends
//                         when high_seq is acked (cwnd = ssthresh); an RTO's Loss state ends likewise.
//                         Not modelled: undo of spurious recoveries (tcp_try_undo_*), F-RTO, reordering
//                         detection (tp->reordering stays tcp_reordering, reord_seen 0), ECN.
//   tcp_data_queue        in-order data to the receive queue (tcp_event_data_recv: quick ACKs at the
//                         start, ATO); the out-of-order queue and its SACK blocks; a filled hole ACKs
//                         at once; old data is a D-SACK and a quick ACK
//   __tcp_ack_snd_check   ACK at once when more than one full frame is unacked and the window's right
//                         edge moves, in quickack mode, or when asked; otherwise delay it
//                         (tcp_send_delayed_ack: ATO, 40 ms at least); with out-of-order data the
//                         first three duplicate ACKs go at once, the later ones are compressed
//                         (tcp_comp_sack_*)
//   tcp_cleanup_rbuf      after a read: the ACK a full receive buffer held back, or a window update
//                         once the window can double
//   tcp_rcv_space_adjust  receive buffer autotuning (DRS): after a read, sk_rcvbuf grows from
//                         tcp_rmem[1] to twice what the reader copied in a receiver-measured RTT
//                         (tcp_rcv_rtt_measure: a window's worth of data; tcp_rcv_rtt_measure_ts:
//                         now - TSecr in whole ms), at most tcp_rmem[2]; the window offered is its
//                         free half, at most rcv_ssthresh (tcp_grow_window). Not modelled: memory
//                         pressure (tcp_mem, tcp_clamp_window, pruning), the window scale's rounding.
#include <algorithm>

#include "sim/kernel/tcp_inline.hpp"

namespace napisim {

namespace {
// tcp_ack() flags (net/ipv4/tcp_input.c).
constexpr int kFlagData = 0x01;
constexpr int kFlagWinUpdate = 0x02;
constexpr int kFlagDataAcked = 0x04;
constexpr int kFlagRetransDataAcked = 0x08;
constexpr int kFlagDataSacked = 0x20;
constexpr int kFlagLostRetrans = 0x80;
constexpr int kFlagSndUnaAdvanced = 0x400;
constexpr int kFlagDsackingAck = 0x800;
constexpr int kFlagSetXmitTimer = 0x1000;
constexpr int kFlagDsackTlp = 0x20000;
constexpr int kFlagAcked = kFlagDataAcked;
constexpr int kFlagNotDup = kFlagData | kFlagWinUpdate | kFlagAcked;
constexpr int kFlagCaAlert = kFlagDataSacked | kFlagDsackingAck;

constexpr std::uint32_t kFastretransThresh = 3;

/// The 64-bit sequence a 32-bit field stands for, nearest to `ref` (before()/after()).
std::int64_t unwrap(std::uint32_t v, std::int64_t ref) {
  return ref + static_cast<std::int32_t>(v - static_cast<std::uint32_t>(ref));
}
}  // namespace

void Kernel::tcp_rcv_established(Ctx ctx, Socket& s, const Skb& skb, const TrainStamps* st) {
  TcpSock& tp = *s.tcp;
  tcp_cpu_now_ = ctx_cpu(ctx);
  // tcp_replace_ts_recent(): a segment at or before the last ACK sent (RFC 7323's rule) gives the
  // TSval this side echoes.
  if (unwrap(skb.th.seq, s.rcv_nxt) <= s.rcv_wup) tp.ts_recent = skb.th.tsval;
  tcp_ack(ctx, s, skb);
  const std::int64_t prior_rcv_nxt = s.rcv_nxt;
  if (!skb.ack_only) {
    tcp_rcv_rtt_measure_ts(s, tp, skb);
    tcp_data_queue(ctx, s, skb, st);
  }
  // tcp_data_snd_check(): what the ACK lets out, then tcp_check_space().
  if (tp.snd_nxt < tp.write_seq) tcp_write_xmit(ctx, s, 0);
  tcp_check_space(ctx, s);
  // tcp_ack_snd_check(): unless a data segment sent meanwhile carried the ACK.
  if (tp.ack_pending & ack_state::kSched) tcp_ack_snd_check(ctx, s, true);
  if (s.rcv_nxt > prior_rcv_nxt) sk_data_ready(ctx, s);  // tcp_data_ready()
}

// ---- ACK processing -------------------------------------------------------------------------

void Kernel::tcp_ack(Ctx ctx, Socket& s, const Skb& skb) {
  TcpSock& tp = *s.tcp;
  const TcpHdr& th = skb.th;
  const std::int64_t ack = unwrap(th.ack, tp.snd_una);
  // An old duplicate (before snd_una) or an ACK of data never sent is ignored.
  if (ack < tp.snd_una || ack > tp.snd_nxt) return;
  const std::int64_t prior_snd_una = tp.snd_una;
  const std::uint32_t prior_packets = tp.packets_out;
  int flag = skb.ack_only ? 0 : kFlagData;
  if (ack > prior_snd_una) {
    flag |= kFlagSndUnaAdvanced;
    tp.retransmits = 0;
  }
  // tcp_ack_update_window()
  if (ack > prior_snd_una || static_cast<std::int64_t>(th.wnd) != tp.snd_wnd) flag |= kFlagWinUpdate;
  tp.snd_wnd = th.wnd;
  tp.snd_una = ack;
  std::uint32_t delivered = 0;
  Nanos sack_sent = -1;  // the newest original transmission newly SACKed (sack_rtt)
  if (th.nsack) {
    tcp_owed_ += costs_.tcp_sack_ns;
    flag |= tcp_sacktag_write_queue(tp, th, &delivered, &sack_sent);
  }
  if (th.dsack) {
    flag |= kFlagDsackingAck;
    if (tp.tlp_high_seq && tp.tlp_retrans) flag |= kFlagDsackTlp;
  }
  if (!prior_packets) {
    if (tp.tlp_high_seq) tcp_process_tlp_ack(tp, ack, flag);
    return;
  }
  flag |= tcp_clean_rtx_queue(tp, prior_snd_una, &delivered, sack_sent);
  if (tp.tlp_high_seq) tcp_process_tlp_ack(tp, ack, flag);
  bool rexmit = false;
  // tcp_ack_is_dubious()
  if (!(flag & kFlagNotDup) || (flag & kFlagCaAlert) || tp.ca_state != TcpCaState::kOpen)
    tcp_fastretrans_alert(tp, prior_snd_una, &flag, &rexmit);
  // If needed, reset the TLP/RTO timer when RACK didn't set it.
  if (flag & kFlagSetXmitTimer) {
    if (!tcp_schedule_loss_probe(tp, true)) tcp_rearm_rto(tp);
  }
  // tcp_cong_control()
  if (tcp_in_cwnd_reduction(tp)) {
    tcp_cwnd_reduction(tp, delivered, flag);
  } else if (flag & kFlagDataAcked) {  // tcp_may_raise_cwnd()
    cubictcp_cong_avoid(tp, delivered);
  }
  tcp_update_pacing_rate(tp);
  // tcp_xmit_recovery()
  if (rexmit) tcp_xmit_retransmit_queue(ctx, s);
}

int Kernel::tcp_sacktag_write_queue(TcpSock& tp, const TcpHdr& th, std::uint32_t* delivered, Nanos* sack_sent) {
  const std::int64_t mss = kp_.net.mss;
  int flag = 0;
  for (int b = 0; b < th.nsack; ++b) {
    std::int64_t start = unwrap(th.sack[2 * b], tp.snd_una);
    const std::int64_t end = unwrap(th.sack[2 * b + 1], tp.snd_una);
    // tcp_is_sackblock_valid(): within (snd_una, snd_nxt]
    if (end <= tp.snd_una || end > tp.snd_nxt || start >= end) continue;
    start = std::max(start, tp.snd_una);
    for (std::size_t i = 0; i < tp.rtx.size(); ++i) {
      TcpSkb* skb = &tp.rtx[i];
      if (skb->end_seq <= start) continue;
      if (skb->seq >= end) break;
      if (skb->sacked & tcpcb::kSackedAcked) continue;
      // tcp_match_skb_to_sack(): split a partly covered skb at segment boundaries.
      if (skb->seq < start) {
        const std::int64_t at = skb->seq + (start - skb->seq + mss - 1) / mss * mss;
        if (at >= skb->end_seq || at >= end) continue;
        tp.rtx.split(i, at, mss);
        continue;  // the covered part is skb i + 1
      }
      if (skb->end_seq > end) {
        const std::int64_t at = skb->seq + (end - skb->seq) / mss * mss;
        if (at <= skb->seq) break;
        tp.rtx.split(i, at, mss);
        skb = &tp.rtx[i];
      }
      // tcp_sacktag_one()
      std::uint8_t sacked = skb->sacked;
      if (sacked & tcpcb::kSackedRetrans) {
        sacked &= static_cast<std::uint8_t>(~tcpcb::kSackedRetrans);
        tp.retrans_out -= skb->segs;
      }
      if (sacked & tcpcb::kLost) {
        sacked &= static_cast<std::uint8_t>(~tcpcb::kLost);
        tp.lost_out -= skb->segs;
      }
      if (!(sacked & (tcpcb::kSackedRetrans | tcpcb::kEverRetrans))) *sack_sent = std::max(*sack_sent, skb->sent);
      tcp_rack_advance(tp, skb->sacked, skb->end_seq, skb->sent);
      sacked |= tcpcb::kSackedAcked;
      skb->sacked = sacked;
      tp.sacked_out += skb->segs;
      *delivered += skb->segs;
      flag |= kFlagDataSacked;
      tp.highest_sack = std::max(tp.highest_sack, skb->end_seq);
    }
  }
  return flag;
}

int Kernel::tcp_clean_rtx_queue(TcpSock& tp, std::int64_t prior_snd_una, std::uint32_t* delivered, Nanos sack_sent) {
  const std::int64_t mss = kp_.net.mss;
  const Nanos now_ns = now();
  int flag = 0;
  Nanos first_ackt = -1, last_ackt = -1, last_retrans = -1;
  (void)prior_snd_una;
  while (!tp.rtx.empty() && tp.rtx.front().seq < tp.snd_una) {
    TcpSkb& skb = tp.rtx.front();
    std::uint32_t acked_pcount = skb.segs;
    bool fully_acked = true;
    if (skb.end_seq > tp.snd_una) {
      // tcp_tso_acked(): trim the whole segments below snd_una (tcp_trim_head).
      if (skb.segs == 1) break;
      const std::int64_t acked_bytes = (tp.snd_una - skb.seq) / mss * mss;
      if (acked_bytes <= 0) break;
      acked_pcount = static_cast<std::uint32_t>(acked_bytes / mss);
      fully_acked = false;
    }
    const std::uint8_t sacked = skb.sacked;
    if (sacked & (tcpcb::kSackedRetrans | tcpcb::kEverRetrans)) {
      if (sacked & tcpcb::kSackedRetrans) tp.retrans_out -= acked_pcount;
      flag |= kFlagRetransDataAcked;
      last_retrans = std::max(last_retrans, skb.sent);
    } else if (!(sacked & tcpcb::kSackedAcked)) {
      last_ackt = skb.sent;
      if (first_ackt < 0) first_ackt = last_ackt;
    }
    if (sacked & tcpcb::kSackedAcked) {
      tp.sacked_out -= acked_pcount;
    } else {
      *delivered += acked_pcount;
      tcp_rack_advance(tp, sacked, skb.end_seq, skb.sent);
    }
    if (sacked & tcpcb::kLost) tp.lost_out -= acked_pcount;
    tp.packets_out -= acked_pcount;
    flag |= kFlagDataAcked;
    if (!fully_acked) {
      skb.seq += static_cast<std::int64_t>(acked_pcount) * mss;
      skb.segs -= acked_pcount;
      break;
    }
    tp.rtx.pop_front();
  }
  if (tp.rtx.empty()) tp.highest_sack = -1;
  if (!(flag & kFlagAcked) && sack_sent < 0) return flag;
  // tcp_ack_update_rtt(): Karn's rule forbids a sample from retransmitted data; the SACK's, then
  // the timestamp echo (of the latest retransmission acked) stand in.
  std::int64_t seq_rtt_us = first_ackt >= 0 ? (now_ns - first_ackt) / 1000 : -1;
  std::int64_t ca_rtt_us = last_ackt >= 0 ? (now_ns - last_ackt) / 1000 : -1;
  const std::int64_t sack_rtt_us = sack_sent >= 0 ? (now_ns - sack_sent) / 1000 : -1;
  if (seq_rtt_us < 0) seq_rtt_us = sack_rtt_us;
  if (ca_rtt_us < 0) ca_rtt_us = sack_rtt_us;
  if (seq_rtt_us < 0 && last_retrans >= 0 && (flag & kFlagAcked))
    seq_rtt_us = ca_rtt_us = (now_ns - last_retrans) / 1000;
  if (seq_rtt_us >= 0) {
    if (tp.min_rtt_us == 0 || ca_rtt_us < tp.min_rtt_us) tp.min_rtt_us = std::max<std::int64_t>(1, ca_rtt_us);
    tcp_rtt_estimator(tp, seq_rtt_us);
    tcp_set_rto(tp);
  }
  if (flag & kFlagAcked) {
    flag |= kFlagSetXmitTimer;
    cubictcp_acked(tp, ca_rtt_us);
  }
  return flag;
}

void Kernel::tcp_process_tlp_ack(TcpSock& tp, std::int64_t ack, int flag) {
  if (ack < tp.tlp_high_seq) return;
  if (!tp.tlp_retrans) {
    tp.tlp_high_seq = 0;  // TLP of new data has been acknowledged
  } else if (flag & kFlagDsackTlp) {
    tp.tlp_high_seq = 0;  // the original and the probe arrived: no loss
  } else if (ack > tp.tlp_high_seq) {
    // The ACK advances: there was a loss, so reduce cwnd.
    tcp_init_cwnd_reduction(tp);
    tcp_set_ca_state(tp, TcpCaState::kCwr);
    tcp_end_cwnd_reduction(tp);
    tcp_try_keep_open(tp);
  } else if (!(flag & (kFlagSndUnaAdvanced | kFlagNotDup | kFlagDataSacked))) {
    tp.tlp_high_seq = 0;  // pure dupack: the original and the probe arrived
  }
}

// ---- loss recovery ---------------------------------------------------------------------------

void Kernel::tcp_set_ca_state(TcpSock& tp, TcpCaState s) {
  cubictcp_state(tp, s);
  tp.ca_state = s;
}

void Kernel::tcp_init_cwnd_reduction(TcpSock& tp) {
  tp.high_seq = tp.snd_nxt;
  tp.tlp_high_seq = 0;
  tp.cwnd_cnt = 0;
  tp.prior_cwnd = tp.cwnd;
  tp.prr_delivered = 0;
  tp.prr_out = 0;
  tp.ssthresh = cubictcp_recalc_ssthresh(tp);
}

void Kernel::tcp_end_cwnd_reduction(TcpSock& tp) {
  // Reset cwnd to ssthresh in CWR or Recovery (undo is not modelled: every reduction stands).
  if (tp.ssthresh < 0x7fffffff) {
    tp.cwnd = tp.ssthresh;
    tp.snd_cwnd_stamp = jiffies();
  }
}

void Kernel::tcp_try_keep_open(TcpSock& tp) {
  const TcpCaState state = (tp.sacked_out + tp.lost_out) || tp.retrans_out ? TcpCaState::kDisorder : TcpCaState::kOpen;
  if (tp.ca_state != state) {
    tcp_set_ca_state(tp, state);
    tp.high_seq = tp.snd_nxt;
  }
}

void Kernel::tcp_enter_recovery(TcpSock& tp) {
  ++tcp_stats_.recoveries;
  if (!tcp_in_cwnd_reduction(tp)) tcp_init_cwnd_reduction(tp);
  tcp_set_ca_state(tp, TcpCaState::kRecovery);
}

void Kernel::tcp_cwnd_reduction(TcpSock& tp, std::uint32_t newly_acked_sacked, int flag) {
  // Proportional Rate Reduction (RFC 6937).
  if (newly_acked_sacked == 0 || tp.prior_cwnd == 0) return;
  const std::int64_t in_flight = tcp_packets_in_flight(tp);
  const std::int64_t delta = static_cast<std::int64_t>(tp.ssthresh) - in_flight;
  tp.prr_delivered += newly_acked_sacked;
  std::int64_t sndcnt;
  if (delta < 0) {
    const std::uint64_t dividend = static_cast<std::uint64_t>(tp.ssthresh) * tp.prr_delivered + tp.prior_cwnd - 1;
    sndcnt = static_cast<std::int64_t>(dividend / tp.prior_cwnd) - tp.prr_out;
  } else {
    sndcnt = std::max<std::int64_t>(static_cast<std::int64_t>(tp.prr_delivered) - tp.prr_out, newly_acked_sacked);
    if (flag & kFlagSndUnaAdvanced) ++sndcnt;  // no loss newly marked by this ACK (rs->losses)
    sndcnt = std::min(delta, sndcnt);
  }
  // Force a fast retransmit upon entering fast recovery.
  sndcnt = std::max<std::int64_t>(sndcnt, tp.prr_out ? 0 : 1);
  tp.cwnd = static_cast<std::uint32_t>(std::max<std::int64_t>(in_flight + sndcnt, 1));
}

void Kernel::tcp_fastretrans_alert(TcpSock& tp, std::int64_t prior_snd_una, int* flag, bool* rexmit) {
  (void)prior_snd_una;
  if (!tp.packets_out && tp.sacked_out) tp.sacked_out = 0;
  // D. Check state exit conditions: the state can end when high_seq is ACKed.
  if (tp.ca_state != TcpCaState::kOpen && tp.snd_una >= tp.high_seq) {
    if (tp.ca_state == TcpCaState::kCwr) {
      // CWR is held until something above high_seq is ACKed.
      if (tp.snd_una != tp.high_seq) {
        tcp_end_cwnd_reduction(tp);
        tcp_set_ca_state(tp, TcpCaState::kOpen);
      }
    } else if (tp.ca_state == TcpCaState::kRecovery) {
      tcp_set_ca_state(tp, TcpCaState::kOpen);  // tcp_try_undo_recovery(), nothing undone
      tcp_end_cwnd_reduction(tp);
    }
  }
  // E. Process the state.
  switch (tp.ca_state) {
    case TcpCaState::kRecovery:
      tcp_identify_packet_loss(tp, flag);
      break;
    case TcpCaState::kLoss:
      // tcp_process_loss(): recovered once high_seq is acked.
      if (tp.snd_una >= tp.high_seq) {
        tcp_set_ca_state(tp, TcpCaState::kOpen);
        tcp_identify_packet_loss(tp, flag);
        if (!tcp_time_to_recover(tp)) {
          tcp_try_keep_open(tp);
          return;
        }
        tcp_enter_recovery(tp);
        break;
      }
      tcp_identify_packet_loss(tp, flag);
      break;
    default:
      tcp_identify_packet_loss(tp, flag);
      if (!tcp_time_to_recover(tp)) {
        tcp_try_keep_open(tp);  // tcp_try_to_open()
        return;
      }
      tcp_enter_recovery(tp);
  }
  *rexmit = true;  // REXMIT_LOST
}

void Kernel::tcp_identify_packet_loss(TcpSock& tp, int* flag) {
  if (tp.rtx.empty()) return;
  const std::uint32_t prior_retrans = tp.retrans_out;
  if (tcp_rack_mark_lost(tp)) *flag &= ~kFlagSetXmitTimer;
  if (prior_retrans > tp.retrans_out) *flag |= kFlagLostRetrans;
}

// ---- data ------------------------------------------------------------------------------------

void Kernel::tcp_data_queue(Ctx ctx, Socket& s, const Skb& skb, const TrainStamps* st) {
  TcpSock& tp = *s.tcp;
  std::int64_t seq = unwrap(skb.th.seq, s.rcv_nxt);
  const std::int64_t end = seq + skb.bytes;
  if (end <= s.rcv_nxt) {
    // A retransmit of data already here: D-SACK it and ACK at once.
    tp.dsack = true;
    tcp_enter_quickack_mode(tp);
    tp.ack_pending |= ack_state::kSched;
    return;
  }
  if (seq < s.rcv_nxt) {  // partial: seq < rcv_nxt < end
    tp.dsack = true;
    seq = s.rcv_nxt;
  }
  if (seq == s.rcv_nxt) {
    if (tcp_space_window(s, tp) == 0 && s.rcv_wup + s.rcv_wnd <= s.rcv_nxt) {
      // Zero window: drop it (out of window), and say so at once.
      tcp_enter_quickack_mode(tp);
      tp.ack_pending |= ack_state::kSched;
      return;
    }
    tcp_queue_rcv(s, end - seq, st);
    tcp_event_data_recv(s, tp, skb);
    if (!tp.ofo.empty()) {
      tcp_ofo_queue(s, tp, st);
      // RFC 5681 4.2: SHOULD send an immediate ACK when a gap in the queue is filled.
      if (tp.ofo.empty()) tp.ack_pending |= ack_state::kNow;
    }
    return;
  }
  // Out of window (beyond what was offered): drop, ACK at once.
  if (seq >= s.rcv_nxt + std::max<std::int64_t>(s.rcv_wup + s.rcv_wnd - s.rcv_nxt, 0)) {
    tcp_enter_quickack_mode(tp);
    tp.ack_pending |= ack_state::kSched;
    return;
  }
  tcp_data_queue_ofo(tp, seq, end);
  (void)ctx;
}

void Kernel::tcp_data_queue_ofo(TcpSock& tp, std::int64_t seq, std::int64_t end) {
  tp.ack_pending |= ack_state::kSched;
  ++tp.ofo_clock;
  // Insert [seq, end), merging with what it overlaps or touches.
  std::size_t i = 0;
  while (i < tp.ofo.size() && tp.ofo[i].end < seq)
    ++i;
  if (i == tp.ofo.size() || tp.ofo[i].start > end) {
    tp.ofo.insert(tp.ofo.begin() + static_cast<std::ptrdiff_t>(i), TcpOfoRange{seq, end, tp.ofo_clock});
    tp.ofo_bytes += end - seq;
    return;
  }
  TcpOfoRange& r = tp.ofo[i];
  const std::int64_t before = r.end - r.start;
  r.start = std::min(r.start, seq);
  r.end = std::max(r.end, end);
  r.touched = tp.ofo_clock;
  std::int64_t grown = r.end - r.start - before;
  while (i + 1 < tp.ofo.size() && tp.ofo[i + 1].start <= r.end) {
    const TcpOfoRange& next = tp.ofo[i + 1];
    grown -= next.end - next.start;
    const std::int64_t merged_end = std::max(r.end, next.end);
    grown += merged_end - r.end;
    r.end = merged_end;
    tp.ofo.erase(tp.ofo.begin() + static_cast<std::ptrdiff_t>(i + 1));
  }
  tp.ofo_bytes += grown;
  if (grown <= 0) tp.dsack = true;
}

void Kernel::tcp_ofo_queue(Socket& s, TcpSock& tp, const TrainStamps* st) {
  while (!tp.ofo.empty() && tp.ofo.front().start <= s.rcv_nxt) {
    const TcpOfoRange r = tp.ofo.front();
    tp.ofo.erase(tp.ofo.begin());
    tp.ofo_bytes -= r.end - r.start;
    if (r.end > s.rcv_nxt) tcp_queue_rcv(s, r.end - s.rcv_nxt, st);
  }
}

void Kernel::tcp_enter_quickack_mode(TcpSock& tp) {
  tcp_incr_quickack(socket(tp.id), tp);
  tp.pingpong = 0;  // inet_csk_exit_pingpong_mode()
  tp.ato = tcp_ato_min_j_;
}

void Kernel::tcp_ack_snd_check(Ctx ctx, Socket& s, bool ofo_possible) {
  TcpSock& tp = *s.tcp;
  // More than one full frame received, and the window's right edge advances far enough (or all
  // of it was read: sk_rcvlowat 1); or quickack mode; or an immediate ACK was asked for.
  const bool in_quickack = tp.quick && tp.pingpong < 1;
  if ((s.rcv_nxt - s.rcv_wup > s.rcv_mss && (s.rx_avail < 1 || tcp_space_window(s, tp) >= s.rcv_wnd)) || in_quickack ||
      (tp.ack_pending & ack_state::kNow)) {
    tcp_send_ack(ctx, s);
    return;
  }
  if (!ofo_possible || tp.ofo.empty()) {
    tcp_send_delayed_ack(ctx, s);
    return;
  }
  if (tp.compressed_ack >= kp_.tcp.comp_sack_nr) {
    tcp_send_ack(ctx, s);
    return;
  }
  if (tp.compressed_ack_rcv_nxt != s.rcv_nxt) {
    tp.compressed_ack_rcv_nxt = s.rcv_nxt;
    tp.dup_ack_counter = 0;
  }
  if (tp.dup_ack_counter < kFastretransThresh) {
    tp.dup_ack_counter++;
    tcp_send_ack(ctx, s);
    return;
  }
  tp.compressed_ack++;
  if (tp.compack_timer.hr != kNever) return;  // hrtimer_is_queued()
  // compress ack timer: 5% of the RTT, at most tcp_comp_sack_delay_ns; it fires at the end of its
  // slack range.
  const Nanos delay = std::min<Nanos>(kp_.tcp.comp_sack_delay_ns, (tp.srtt_us >> 3) * 1000 / 20);
  tp.compack_timer.hr = now() + delay + kp_.tcp.comp_sack_slack_ns;
  tp.compack_timer.cpu = ctx_cpu(ctx);
  tp.compack_timer.ev.arm(host_.queue(), tp.compack_timer.hr, Prio::kTimer, this, kTcpTimer,
                          tcp_timer_code(s.id, kTcpCompackTimer));
}

void Kernel::tcp_rcv_space_adjust(Socket& s, TcpSock& tp) {
  const std::int64_t now_us = tcp_clock_us();
  if (now_us - tp.rcvq_time_us < (tp.rcv_rtt_us >> 3) || tp.rcv_rtt_us == 0) return;
  const std::int64_t copied_seq = s.rcv_nxt - s.rx_avail;
  const std::int64_t copied = copied_seq - tp.rcvq_seq;  // copied to the reader in the last RTT
  if (copied > tp.rcvq_space) {
    if (kp_.tcp.moderate_rcvbuf) {
      // Twice what was copied (for losses) and 16 segments of cushion, plus twice the growth
      // since the last RTT (a sender in slow start doubles); the buffer is twice that window.
      const std::int64_t mss = kp_.net.mss;
      std::int64_t rcvwin = 2 * copied + 16 * mss;
      const std::int64_t grow = rcvwin * (copied - tp.rcvq_space) / tp.rcvq_space;
      rcvwin += 2 * grow;
      const std::int64_t rcvbuf = std::min(tcp_space_from_win(rcvwin), kp_.tcp.rmem_max);
      if (rcvbuf > tp.rcvbuf) {
        tp.rcvbuf = rcvbuf;
        tp.window_clamp = tcp_win_from_space(rcvbuf);  // the window clamp follows along
      }
    }
    tp.rcvq_space = copied;
  }
  tp.rcvq_seq = copied_seq;
  tp.rcvq_time_us = now_us;
}

void Kernel::tcp_cleanup_rbuf(Ctx ctx, Socket& s, std::int64_t copied) {
  TcpSock& tp = *s.tcp;
  bool time_to_ack = false;
  if (tp.ack_pending & ack_state::kSched) {
    // Once-per-two-segments ACK was not sent by tcp_input.c; or this read emptied the receive
    // queue and a small segment was pushed (not in pingpong mode, or twice).
    if (s.rcv_nxt - s.rcv_wup > s.rcv_mss ||
        (copied > 0 &&
         ((tp.ack_pending & ack_state::kPushed2) || ((tp.ack_pending & ack_state::kPushed) && tp.pingpong < 1)) &&
         s.rx_avail == 0 && tp.ofo.empty()))
      time_to_ack = true;
  }
  // An ACK if we can now advertise a window raised "significantly" (at least doubled).
  if (copied > 0 && !time_to_ack) {
    const std::int64_t rcv_window_now = std::max<std::int64_t>(0, s.rcv_wup + s.rcv_wnd - s.rcv_nxt);
    if (2 * rcv_window_now <= tp.window_clamp) {
      const std::int64_t new_window = tcp_space_window(s, tp);
      if (new_window && new_window >= 2 * rcv_window_now) time_to_ack = true;
    }
  }
  if (time_to_ack) tcp_send_ack(ctx, s);
}

}  // namespace napisim
