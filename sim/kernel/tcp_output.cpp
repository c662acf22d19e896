// napisim: TCP's sending side (net/ipv4/tcp_output.c, tcp.c's tcp_sendmsg/tcp_push, as of v6.6),
// for connections run by the kernel's TCP (tcp.hpp).
//
//   tcp_sendmsg            appends to the write queue (a byte range: the skbs tcp_sendmsg builds are
//                          size_goal long, so the queue is cut into size_goal skbs from snd_nxt),
//                          tcp_slow_start_after_idle_check(), then tcp_push(); a non-blocking
//                          send() copies size_goal skbs while sk_stream_memory_free()
//                          (tcp_send_room; SOCK_NOSPACE when it stops short)
//   tcp_sndbuf_expand      sk_sndbuf from tcp_wmem[1] to 2 x max(cwnd, TCP_INIT_CWND) worst-case
//                          skbs (tcp_init_buffer_space() at connect; tcp_check_space() ->
//                          tcp_new_space() on each segment received while the socket is marked
//                          SOCK_NOSPACE), at most tcp_wmem[2]
//   tcp_write_xmit         per skb: tcp_cwnd_test (at most half the cwnd per skb), tcp_snd_wnd_test,
//                          tcp_tso_should_defer (tcp_tso_win_divisor, the 1 ms and half-srtt rules),
//                          tcp_mss_split_point, tcp_small_queue_check (TSQ), tcp_transmit_skb,
//                          then tcp_cwnd_validate and tcp_schedule_loss_probe. Nagle and autocorking
//                          are not modelled: every connection behaves as with TCP_NODELAY (with one
//                          request in flight, tcp_minshall_check finds no small segment unacked).
//   tcp_tso_autosize       sk_pacing_rate >> sk_pacing_shift (10) plus gso_max_size >> (min_rtt >>
//                          tcp_tso_rtt_log), at most gso_max_size (net.tso_max_bytes), at least
//                          tcp_min_tso_segs
//   tcp_small_queue_check  a flow's bytes in the qdisc and NIC (sk_wmem_alloc: truesize, released
//                          by tcp_wfree() when the driver reaps the TX completion in its NAPI poll)
//                          above max(2 skbs, pacing_rate >> 10), capped at tcp_limit_output_bytes
//                          unless fq paces the flow, throttle it (TSQ_THROTTLED) unless its rtx
//                          queue holds at most one skb; tcp_wfree() queues it on the per-CPU TSQ
//                          tasklet (not from ksoftirqd while skbs remain), which runs tcp_tsq_write()
//   tcp_transmit_skb       every segment carries the ACK (tcp_event_ack_sent) and the window
//                          (tcp_select_window, never shrinking); data: tcp_event_data_sent
//                          (CA_EVENT_TX_START, lsndtime, pingpong); EDT stamp tcp_wstamp_ns, advanced
//                          by len / pacing_rate when fq paces (tcp_update_skb_after_send); the TX
//                          queue is kept while the flow has skbs in the host (ooo_okay)
//   sch_fq                 net.core.default_qdisc "fq": an skb stamped in the future is held until its
//                          time (fq's per-flow time_next_packet); the qdisc watchdog's CPU time is not
//                          modelled. "pfifo_fast" (the kernel's default) sends at once.
//   tcp_send_ack / tcp_send_delayed_ack / tcp_send_loss_probe / tcp_xmit_retransmit_queue /
//   tcp_retransmit_skb / tcp_cwnd_restart / tcp_update_pacing_rate
// CPU time: tcp_sendmsg's is send_cost() (socket.cpp); an skb sent from softirq (after an ACK, a
// TX completion, a timer) costs tx_tso_ns there, a pure ACK tx_ack_ns; both are charged after the
// work that caused them (Kernel::take_tcp_owed()).
#include <algorithm>

#include "sim/kernel/tcp_inline.hpp"

namespace napisim {

void Kernel::tcp_connect(Socket& s, Nanos syn_rtt, std::int64_t peer_window) {
  NAPISIM_ASSERT(!s.tcp && s.lo_peer < 0, "tcp_connect(): a socket over a NIC, once");
  auto owned = std::make_unique<TcpSock>();
  TcpSock& tp = *owned;
  tcp_socks_.push_back(std::move(owned));
  s.tcp = &tp;
  tp.id = s.id;
  const TcpParams& p = kp_.tcp;
  tp.cwnd = static_cast<std::uint32_t>(p.init_cwnd);
  // tcp_select_initial_window(), tcp_init_buffer_space(): sk_rcvbuf tcp_rmem[1]; its window
  // (50%) less one segment ("force reservation of one segment", tcp_app_win 31) is the window
  // clamp; the SYN's window, and rcv_ssthresh at most the clamp; DRS's first measure expects at
  // most TCP_INIT_CWND segments in an RTT.
  const std::int64_t mss = kp_.net.mss;
  tp.rcvbuf = p.rmem_default;
  const std::int64_t maxwin = tcp_win_from_space(tp.rcvbuf);  // tcp_full_space()
  tp.window_clamp = maxwin > 2 * mss ? std::max(2 * mss, maxwin - mss) : maxwin;
  s.rcv_wnd = tcp_initial_window();
  tp.rcv_ssthresh = std::min(s.rcv_wnd, tp.window_clamp);
  tp.rcvq_space = std::min({tp.rcv_ssthresh, s.rcv_wnd, kTcpInitCwnd * mss});
  tp.rcvq_seq = s.rcv_nxt - s.rx_avail;
  tp.rcvq_time_us = tcp_clock_us();
  tp.ts_recent = tcp_time_stamp();  // the SYN's (or SYN-ACK's) TSval
  tp.snd_wnd = peer_window;
  tp.lsndtime = tp.snd_cwnd_stamp = jiffies();
  tp.rto_j = msecs_to_jiffies(1000);  // TCP_TIMEOUT_INIT until the first RTT sample
  // The handshake's RTT sample (the SYN-ACK's on the active side, tcp_synack_rtt_meas() on the
  // passive one).
  const std::int64_t rtt_us = std::max<std::int64_t>(1, syn_rtt / 1000);
  tcp_rtt_estimator(tp, rtt_us);
  tcp_set_rto(tp);
  tp.min_rtt_us = rtt_us;
  cubictcp_init(tp);
  tcp_update_pacing_rate(tp);
  tp.sndbuf = p.wmem_default;
  tcp_sndbuf_expand(tp);  // tcp_init_buffer_space()
  if (tcp_cpu_.empty()) tcp_cpu_.resize(static_cast<std::size_t>(nr_cpus()));
}

void Kernel::tcp_sendmsg(Ctx ctx, Socket& s, std::int64_t bytes) {
  TcpSock& tp = *s.tcp;
  tcp_cpu_now_ = ctx_cpu(ctx);
  // tcp_skb_entail() -> tcp_slow_start_after_idle_check(): a new skb on an idle connection.
  if (kp_.tcp.slow_start_after_idle && tp.packets_out == 0 && tp.write_seq == tp.snd_nxt) {
    const std::int64_t delta = jiffies() - tp.lsndtime;
    if (delta > tp.rto_j) tcp_cwnd_restart(tp, delta);
  }
  tp.write_seq += bytes;
  tcp_in_sendmsg_ = true;
  tcp_write_xmit(ctx, s, 0);
  tcp_in_sendmsg_ = false;
}

std::int64_t Kernel::tcp_send_room(Socket& s, std::int64_t bytes) {
  if (!s.tcp) return bytes;
  TcpSock& tp = *s.tcp;
  const std::int64_t queued = tp.write_seq - tp.snd_una;
  std::int64_t n = 0;
  if (queued + bytes <= tp.sndbuf) {
    n = bytes;  // fits whatever the size goal
  } else if (queued < tp.sndbuf) {
    // tcp_send_mss(): the size goal of the skbs it builds (tcp_xmit_size_goal -> tcp_tso_autosize).
    const std::int64_t size_goal = static_cast<std::int64_t>(tcp_tso_segs(tp)) * kp_.net.mss;
    const std::int64_t skbs = (tp.sndbuf - queued + size_goal - 1) / size_goal;
    n = std::min(bytes, skbs * size_goal);
  }
  if (n < bytes) tp.nospace = true;  // wait_for_space: set_bit(SOCK_NOSPACE)
  return n;
}

void Kernel::tcp_sndbuf_expand(TcpSock& tp) {
  // The worst case is one skb per segment with a kmalloc'ed head: the MSS plus MAX_TCP_HEADER
  // (320) and the skb_shared_info (320) rounded up to a power of two, plus the sk_buff (256);
  // x86-64 v6.6 sizes. CUBIC has no sndbuf_expand(): twice the segments, for fast recovery.
  std::int64_t head = kp_.net.mss + 320 + 320, pow2 = 1;
  while (pow2 < head)
    pow2 <<= 1;
  head = pow2 + 256;
  const std::int64_t nr_segs =
      std::max<std::int64_t>({static_cast<std::int64_t>(tp.cwnd), kTcpInitCwnd, kp_.tcp.reordering + 1});
  const std::int64_t sndmem = 2 * nr_segs * head;
  if (tp.sndbuf < sndmem) tp.sndbuf = std::min(sndmem, kp_.tcp.wmem_max);
}

void Kernel::tcp_check_space(Ctx ctx, Socket& s) {
  TcpSock& tp = *s.tcp;
  if (!tp.nospace) return;
  // tcp_new_space(): tcp_should_expand_sndbuf() (memory pressure is not modelled) while the cwnd
  // is not filled.
  if (tcp_packets_in_flight(tp) < tp.cwnd) {
    tcp_sndbuf_expand(tp);
    tp.snd_cwnd_stamp = jiffies();
  }
  // sk_stream_write_space(): once writable, clear SOCK_NOSPACE and wake EPOLLOUT pollers
  // (ep_poll_callback queues an item whose interest includes it).
  if (!tcp_stream_is_writeable(tp)) return;
  tp.nospace = false;
  if (s.ep && (s.ep_events & kEpollOut) && !s.on_ready_list) {
    if (s.ep->wq.waiter) tcp_owed_ += costs_.wakeup_ns;
    ep_modify(*s.ep, s, s.ep_events, ctx_cpu(ctx));
  }
}

void Kernel::tcp_cwnd_restart(TcpSock& tp, std::int64_t delta) {
  // RFC 2861: reset cwnd after an idle period longer than the RTO to the restart window.
  const std::uint32_t restart_cwnd = std::min(static_cast<std::uint32_t>(kp_.tcp.init_cwnd), tp.cwnd);
  std::uint32_t cwnd = tp.cwnd;
  tp.ssthresh = tcp_current_ssthresh(tp);
  while ((delta -= tp.rto_j) > 0 && cwnd > restart_cwnd)
    cwnd >>= 1;
  tp.cwnd = std::max(cwnd, restart_cwnd);
  tp.snd_cwnd_stamp = jiffies();
  tp.snd_cwnd_used = 0;
}

bool Kernel::tcp_tso_should_defer(const TcpSock& tp, std::int64_t skb_len, bool is_tail, bool* is_cwnd_limited,
                                  bool* is_rwnd_limited, std::uint32_t max_segs) const {
  const std::int64_t mss = kp_.net.mss;
  if (tp.ca_state >= TcpCaState::kRecovery) return false;
  // Avoid bursty behaviour by allowing defer only if the last write was recent (1 ms).
  if (now() - tp.wstamp_ns - kNsPerMs > 0) return false;
  const std::uint32_t in_flight = tcp_packets_in_flight(tp);
  const std::int64_t send_win = tp.snd_una + tp.snd_wnd - tp.snd_nxt;
  const std::int64_t cong_win = static_cast<std::int64_t>(tp.cwnd - in_flight) * mss;
  const std::int64_t limit = std::min(send_win, cong_win);
  // If a full-sized TSO skb can be sent, do it.
  if (limit >= static_cast<std::int64_t>(max_segs) * mss) return false;
  // Middle in queue won't get any more data, full sendable already?
  if (!is_tail && limit >= skb_len) return false;
  if (kp_.tcp.tso_win_divisor) {
    // If at least some fraction of a window is available, just use it.
    const std::int64_t chunk =
        std::min<std::int64_t>(tp.snd_wnd, static_cast<std::int64_t>(tp.cwnd) * mss) / kp_.tcp.tso_win_divisor;
    if (limit >= chunk) return false;
  } else if (limit > 3 * mss) {  // tcp_max_tso_deferred_mss()
    return false;
  }
  if (tp.rtx.empty()) return false;
  // If the next ACK is likely to come too late (half srtt), do not defer.
  if (now() - tp.rtx[0].sent - (tp.srtt_us >> 4) * 1000 < 0) return false;
  // Defer: cwnd-limited, rwnd-limited, or application-limited.
  if (cong_win < send_win) {
    if (cong_win <= skb_len) {
      *is_cwnd_limited = true;
      return true;
    }
  } else if (send_win <= skb_len) {
    *is_rwnd_limited = true;
    return true;
  }
  // A message's last skb (tcp_sendmsg() without MSG_MORE marks it PSH; it gets no more data
  // before the application's next send) is not held back either.
  return !is_tail;
}

bool Kernel::tcp_write_xmit(Ctx ctx, Socket& s, int push_one) {
  TcpSock& tp = *s.tcp;
  const std::int64_t mss = kp_.net.mss;
  std::uint32_t sent_pkts = 0;
  bool is_cwnd_limited = false, is_rwnd_limited = false;
  // The size goal (tcp_tso_autosize()) matters only to a queue of more than one segment.
  const std::uint32_t max_segs = tp.write_seq - tp.snd_nxt > mss ? tcp_tso_segs(tp) : 1;
  const std::int64_t size_goal = static_cast<std::int64_t>(max_segs) * mss;
  while (tp.snd_nxt < tp.write_seq) {
    const std::int64_t left = tp.write_seq - tp.snd_nxt;
    const bool is_tail = left <= size_goal;
    const std::int64_t skb_len = is_tail ? left : size_goal;
    std::uint32_t cwnd_quota = tcp_cwnd_test(tp);
    if (!cwnd_quota) {
      if (push_one != 2) break;
      cwnd_quota = 1;  // force out a loss probe packet
    }
    cwnd_quota = std::min(cwnd_quota, max_segs);
    // tcp_snd_wnd_test(): its first segment fits in the peer's window.
    if (tp.snd_nxt + std::min(skb_len, mss) > tp.snd_una + tp.snd_wnd) {
      is_rwnd_limited = true;
      break;
    }
    const bool multi = skb_len > mss;
    if (multi && !push_one && tcp_tso_should_defer(tp, skb_len, is_tail, &is_cwnd_limited, &is_rwnd_limited, max_segs))
      break;
    std::int64_t len = std::min(skb_len, mss);
    if (multi) {
      // tcp_mss_split_point(): cwnd_quota segments, within the window.
      const std::int64_t window = tp.snd_una + tp.snd_wnd - tp.snd_nxt;
      const std::int64_t max_len = mss * cwnd_quota;
      len = (max_len <= window && !is_tail) ? max_len : std::min({max_len, skb_len, window});
    }
    if (tcp_small_queue_check(tp, len, 0)) break;
    if (!tcp_in_sendmsg_) tcp_owed_ += costs_.tx_tso_ns;  // sent from softirq: tcp_transmit_skb()
    tcp_transmit_data(ctx, s, tp.snd_nxt, len, nullptr, push_one != 2);
    sent_pkts += static_cast<std::uint32_t>(kp_.net.segs_of(len));
    if (push_one) break;
  }
  is_cwnd_limited |= tcp_packets_in_flight(tp) >= tp.cwnd;
  if (sent_pkts || is_cwnd_limited) tcp_cwnd_validate(tp, is_cwnd_limited);
  (void)is_rwnd_limited;
  if (sent_pkts) {
    if (tcp_in_cwnd_reduction(tp)) tp.prr_out += sent_pkts;
    // Send one loss probe per tail loss episode.
    if (push_one != 2) tcp_schedule_loss_probe(tp, false);
    return false;
  }
  return !tp.packets_out && tp.snd_nxt < tp.write_seq;
}

Nanos Kernel::tcp_transmit_data(Ctx ctx, Socket& s, std::int64_t seq, std::int64_t len, TcpSkb* rtx,
                                bool probe_follows) {
  TcpSock& tp = *s.tcp;
  const auto segs = static_cast<std::uint32_t>(kp_.net.segs_of(len));
  const Nanos now_ns = now();
  // tcp_transmit_skb(): the EDT departure stamp.
  const Nanos prior_wstamp = tp.wstamp_ns;
  tp.wstamp_ns = std::max(tp.wstamp_ns, now_ns);
  const Nanos sent = tp.wstamp_ns;
  // tcp_event_data_sent(): CA_EVENT_TX_START (CUBIC shifts a running epoch), lsndtime, and a
  // reply within ato of the last received packet counts towards pingpong mode.
  const std::int64_t now_j = jiffies();
  if (tp.ca.epoch_start && tcp_packets_in_flight(tp) == 0) cubictcp_cwnd_event_tx_start(tp);
  tp.lsndtime = now_j;
  if (tp.ato && now_j - tp.lrcvtime < tp.ato && tp.pingpong < 255) ++tp.pingpong;
  const std::int64_t truesize = tcp_skb_truesize(len);
  const Nanos done = tcp_xmit(ctx, s, seq, static_cast<std::uint32_t>(len), segs, truesize, sent);
  // tcp_update_skb_after_send(): with fq, the next skb leaves len / pacing_rate later (the first
  // 10 segments unpaced), less the credit of a late departure.
  if (tcp_fq() && tp.pacing_rate && tp.data_segs_out >= 10) {
    const auto len_ns = static_cast<Nanos>(static_cast<std::uint64_t>(len) * 1000000000ULL / tp.pacing_rate);
    const Nanos credit = tp.wstamp_ns - prior_wstamp;
    tp.wstamp_ns += len_ns - std::min(len_ns / 2, credit);
  }
  tp.data_segs_out += segs;
  if (rtx) {  // a retransmission: the skb's new stamp
    rtx->sent = sent;
    rtx->wire_done = done;
    return done;
  }
  // tcp_event_new_data_sent()
  const std::uint32_t prior_packets = tp.packets_out;
  tp.rtx.push_back(TcpSkb{seq, seq + len, sent, done, segs, 0});
  tp.snd_nxt = seq + len;
  tp.packets_out += segs;
  // tcp_rearm_rto() on the first skb in flight, unless tcp_write_xmit()'s tcp_schedule_loss_probe()
  // sets the timer anew at once (Open or CWR, not a probe): the same timer, the same instant.
  if ((!prior_packets || tp.pending == TcpXmitTimer::kLossProbe) &&
      !(probe_follows && (tp.ca_state == TcpCaState::kOpen || tp.ca_state == TcpCaState::kCwr)))
    tcp_rearm_rto(tp);
  return done;
}

Nanos Kernel::tcp_xmit(Ctx ctx, Socket& s, std::int64_t seq, std::uint32_t len, std::uint32_t segs,
                       std::int64_t truesize, Nanos depart) {
  TcpSock& tp = *s.tcp;
  WireTrain tr{s.id, len, segs, len == 0, {}};
  tcp_build_header(s, tp, seq, tr.th);
  Nic& nic = *nics_[static_cast<std::size_t>(s.nic)];
  // XPS picks the TX queue of this CPU; a flow keeps its queue while it has skbs in the host
  // (skb->ooo_okay false), so that it cannot reorder itself.
  if (tp.txq < 0 || tp.wmem_alloc == 0 || tp.rtx.empty()) tp.txq = txq_of_cpu(nic, ctx_cpu(ctx));
  if (len > 0) tp.wmem_alloc += truesize;
  if (tcp_fq() && (depart > now() || tp.held_head < tp.held.size())) {
    // sch_fq: held until its time stamp; released in order (tcp_fq_release()).
    tp.held.push_back(TcpSock::Held{depart, tr, truesize});
    if (!tp.pacing_timer.ev.armed()) {
      tp.pacing_timer.hr = tp.held[tp.held_head].at;
      tp.pacing_timer.ev.arm(host_.queue(), tp.pacing_timer.hr, Prio::kTimer, this, kTcpTimer,
                             tcp_timer_code(s.id, kTcpPacingTimer));
    }
    return depart + static_cast<Nanos>(static_cast<double>(tr.wire_bytes()) * nic.tx_port.ns_per_byte);
  }
  return tcp_dev_xmit(s, tp.txq, tr, truesize);
}

Nanos Kernel::tcp_dev_xmit(Socket& s, int txq, const WireTrain& tr, std::int64_t truesize) {
  Nic& nic = *nics_[static_cast<std::size_t>(s.nic)];
  Channel& ch = *nic.channels[static_cast<std::size_t>(txq)];
  const Nanos done = nic.tx_port.transmit(now(), tr.wire_bytes());
  ch.tx_pkts += tr.segs;
  ch.tx_bytes += tr.bytes;
  if (stamps_ && !tr.ack_only) s.stamp_tx = now();
  if (peer_) peer_->on_transmit(tr, done);
  ch.tx_done.push_back(TxDesc{done, tr.ack_only ? -1 : s.id, tr.ack_only ? 0 : truesize});
  tx_schedule_event(ch);
  return done;
}

void Kernel::tcp_fq_release(Socket& s) {
  TcpSock& tp = *s.tcp;
  while (tp.held_head < tp.held.size() && tp.held[tp.held_head].at <= now()) {
    const TcpSock::Held h = tp.held[tp.held_head++];
    tcp_dev_xmit(s, tp.txq, h.tr, h.truesize);
  }
  if (tp.held_head == tp.held.size()) {
    tp.held.clear();
    tp.held_head = 0;
    return;
  }
  tp.pacing_timer.hr = tp.held[tp.held_head].at;
  tp.pacing_timer.ev.arm(host_.queue(), tp.pacing_timer.hr, Prio::kTimer, this, kTcpTimer,
                         tcp_timer_code(s.id, kTcpPacingTimer));
}

void Kernel::tcp_send_ack(Ctx ctx, Socket& s) {
  TcpSock& tp = *s.tcp;
  tcp_owed_ += costs_.tx_ack_ns;
  // A pure ACK takes the flow's departure stamp too: fq holds it behind the flow's data.
  tcp_xmit(ctx, s, tp.snd_nxt, 0, 1, 0, std::max(now(), tp.wstamp_ns));
}

void Kernel::tcp_send_loss_probe(Ctx ctx, Socket& s) {
  TcpSock& tp = *s.tcp;
  const std::int64_t mss = kp_.net.mss;
  // At most one outstanding TLP.
  if (!tp.tlp_high_seq) {
    tp.tlp_retrans = false;
    bool sent = false;
    if (tp.snd_nxt < tp.write_seq && tp.snd_nxt + std::min(tp.write_seq - tp.snd_nxt, mss) <= tp.snd_una + tp.snd_wnd) {
      // New data: one skb, even beyond the cwnd.
      const std::uint32_t pcount = tp.packets_out;
      tcp_write_xmit(ctx, s, 2);
      sent = tp.packets_out > pcount;
    } else if (!tp.rtx.empty()) {
      // Otherwise retransmit the last segment (unless its first transmission is still in the host).
      std::size_t i = tp.rtx.size() - 1;
      if (tp.rtx[i].wire_done <= now()) {
        if (tp.rtx[i].segs > 1) {
          tp.rtx.split(i, tp.rtx[i].seq + static_cast<std::int64_t>(tp.rtx[i].segs - 1) * mss, mss);
          ++i;
        }
        TcpSkb& skb = tp.rtx[i];
        tcp_owed_ += costs_.tx_tso_ns;
        tcp_transmit_data(ctx, s, skb.seq, skb.end_seq - skb.seq, &skb);
        skb.sacked |= tcpcb::kEverRetrans;
        tcp_stats_.retrans_segs += skb.segs;
        tp.tlp_retrans = true;
        sent = true;
      }
    }
    if (sent) {
      ++tcp_stats_.loss_probes;
      // Record snd_nxt for loss detection; reset so that tcp_rearm_rto() restarts the timer from now.
      tp.tlp_high_seq = tp.snd_nxt;
      tp.pending = TcpXmitTimer::kNone;
    }
  }
  tcp_rearm_rto(tp);
}

int Kernel::tcp_retransmit_skb(Ctx ctx, Socket& s, std::size_t i, std::uint32_t segs) {
  TcpSock& tp = *s.tcp;
  const std::int64_t mss = kp_.net.mss;
  // skb_still_in_host_queue(): its previous transmission has not left yet.
  if (tp.rtx[i].wire_done > now()) {
    tp.tsq_throttled = true;
    return -1;
  }
  // tcp_fragment() to at most `segs` segments.
  if (tp.rtx[i].segs > segs) tp.rtx.split(i, tp.rtx[i].seq + static_cast<std::int64_t>(segs) * mss, mss);
  TcpSkb& skb = tp.rtx[i];
  tcp_owed_ += costs_.tx_tso_ns;
  tcp_transmit_data(ctx, s, skb.seq, skb.end_seq - skb.seq, &skb);
  skb.sacked |= tcpcb::kSackedRetrans | tcpcb::kEverRetrans;
  tp.retrans_out += skb.segs;
  tcp_stats_.retrans_segs += skb.segs;
  return 0;
}

void Kernel::tcp_xmit_retransmit_queue(Ctx ctx, Socket& s) {
  TcpSock& tp = *s.tcp;
  if (!tp.packets_out) return;
  const std::uint32_t max_segs = tcp_tso_segs(tp);
  bool rearm_timer = false;
  for (std::size_t i = 0; i < tp.rtx.size(); ++i) {
    const std::int64_t room = static_cast<std::int64_t>(tp.cwnd) - tcp_packets_in_flight(tp);
    if (room <= 0) break;
    const std::uint8_t sacked = tp.rtx[i].sacked;
    const auto segs = std::min(static_cast<std::uint32_t>(room), max_segs);
    if (tp.retrans_out >= tp.lost_out) break;
    if (!(sacked & tcpcb::kLost)) continue;
    if (sacked & (tcpcb::kSackedAcked | tcpcb::kSackedRetrans)) continue;
    if (tcp_small_queue_check(tp, tp.rtx[i].end_seq - tp.rtx[i].seq, 1)) break;
    if (tcp_retransmit_skb(ctx, s, i, segs)) break;
    if (tp.ca_state != TcpCaState::kLoss) tcp_stats_.fast_retrans += tp.rtx[i].segs;
    if (tcp_in_cwnd_reduction(tp)) tp.prr_out += tp.rtx[i].segs;
    if (i == 0 && tp.pending != TcpXmitTimer::kReoTimeout) rearm_timer = true;
  }
  if (rearm_timer) tcp_reset_xmit_timer(tp, TcpXmitTimer::kRetrans, tp.rto_j);
}

void TcpRtxQueue::split(std::size_t i, std::int64_t seq, std::int64_t mss) {
  TcpSkb& a = q_[head_ + i];
  NAPISIM_ASSERT(seq > a.seq && seq < a.end_seq, "TcpRtxQueue::split(): not inside the skb");
  TcpSkb b = a;
  b.seq = seq;
  a.end_seq = seq;
  a.segs = static_cast<std::uint32_t>((a.end_seq - a.seq + mss - 1) / mss);
  b.segs = static_cast<std::uint32_t>((b.end_seq - b.seq + mss - 1) / mss);
  q_.insert(q_.begin() + static_cast<std::ptrdiff_t>(head_ + i + 1), b);
}

}  // namespace napisim
