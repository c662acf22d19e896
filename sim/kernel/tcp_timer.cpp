// napisim: TCP's timers and deferred work (net/ipv4/tcp_timer.c, tcp_output.c's TSQ tasklet,
// kernel/time/timer.c, as of v6.6).
//
//   timers          the retransmit timer (icsk_retransmit_timer: RTO, loss probe or RACK reordering
//                   timeout, icsk_pending) and the delayed-ACK timer are timer wheel timers: each
//                   expiry is rounded up as calc_wheel_index() does (timer_wheel_expiry()) and runs
//                   in TIMER_SOFTIRQ on the CPU that armed it, raised by that CPU's tick when it
//                   has one at that jiffy, else by its timer interrupt (the next event NO_HZ
//                   programmed). The compressed-SACK timer is an hrtimer (soft, pinned) and runs the
//                   same way. A timer pushed back before it expires (mod_timer) costs nothing; one
//                   that expires with nothing left to do (its ACK already sent, its data acked) is
//                   not run either.
//   tcp_write_timer_handler  RETRANS: tcp_retransmit_timer(); LOSS_PROBE: tcp_send_loss_probe();
//                   REO_TIMEOUT: tcp_rack_reo_timeout()
//   tcp_retransmit_timer     tcp_enter_loss() (tcp_timeout_mark_lost, CUBIC's ssthresh, cwnd =
//                   in_flight + 1), the head retransmitted as one segment, exponential backoff of
//                   the RTO (at most TCP_RTO_MAX 120 s). Not modelled: zero-window probes, thin
//                   streams, tcp_write_timeout's give-up.
//   tcp_delack_timer_handler the delayed ACK; a missed one inflates ATO, or leaves pingpong mode
//   tcp_tasklet_func         TSQ: per CPU, the sockets tcp_wfree() released, tcp_tsq_write() each
// CPU time: tcp_timer_ns per handler that runs, tsq_ns per socket the tasklet serves, plus what
// they transmit.
#include <algorithm>

#include "sim/kernel/kernel.hpp"

namespace napisim {

void Kernel::tcp_arm_timer(TcpSock& tp, TcpTimer& t, int which) {
  // calc_wheel_index(): the bucket's jiffy, from the jiffy mod_timer() ran at.
  const Nanos due = timer_wheel_expiry(t.armed_j, t.expires_j) * tick_ns_;
  if (!t.ev.armed() || t.ev.expires() > due)
    t.ev.arm(host_.queue(), due, Prio::kTimer, this, kTcpTimer, tcp_timer_code(tp.id, which));
}

bool Kernel::tcp_timer_needed(const TcpSock& tp, int which) const {
  switch (which) {
    case kTcpXmitTimer:
      return tp.pending != TcpXmitTimer::kNone;
    case kTcpDelackTimer:
      return (tp.ack_pending & ack_state::kTimer) != 0;
    default:
      return tp.compressed_ack > 0 && tp.compack_timer.hr <= now();
  }
}

TcpTimer& Kernel::tcp_timer_of(TcpSock& tp, int which) {
  switch (which) {
    case kTcpXmitTimer:
      return tp.xmit_timer;
    case kTcpDelackTimer:
      return tp.delack_timer;
    case kTcpCompackTimer:
      return tp.compack_timer;
    default:
      return tp.pacing_timer;
  }
}

void Kernel::tcp_timer_event(std::uint64_t code) {
  Socket& s = socket(static_cast<int>(code >> 2));
  TcpSock& tp = *s.tcp;
  const int which = static_cast<int>(code & 3);
  TcpTimer& t = tcp_timer_of(tp, which);
  t.ev.fired();
  if (which == kTcpPacingTimer) {
    tcp_fq_release(s);
    return;
  }
  if (!tcp_timer_needed(tp, which)) return;
  if (which != kTcpCompackTimer) {
    const Nanos due = timer_wheel_expiry(t.armed_j, t.expires_j) * tick_ns_;
    if (due > now()) {  // pushed back meanwhile: due later
      t.ev.arm(host_.queue(), due, Prio::kTimer, this, kTcpTimer, code);
      return;
    }
  }
  // Expired: its handler runs in this CPU's TIMER_SOFTIRQ. A tick of this jiffy still to come
  // raises it; otherwise the timer interrupt does.
  TcpCpu& tc = tcp_cpu_[static_cast<std::size_t>(t.cpu)];
  tc.timers.push_back(code);
  Cpu& c = cpu(t.cpu);
  if (c.tick_timer.expires() == now() || tc.timer_irq_at == now()) return;
  tc.timer_irq_at = now();
  raise_irq(t.cpu, irq_code(kIrqTimer, 0), now());
}

bool Kernel::tcp_timers_due(int cpu) const {
  return !tcp_cpu_.empty() && !tcp_cpu_[static_cast<std::size_t>(cpu)].timers.empty();
}

Proc<void> Kernel::run_timer_softirq(Ctx ctx) {
  TcpCpu& tc = tcp_cpu_[static_cast<std::size_t>(ctx.cpu)];
  while (!tc.timers.empty()) {
    const std::uint64_t code = tc.timers.front();
    tc.timers.pop_front();
    Socket& s = socket(static_cast<int>(code >> 2));
    TcpSock& tp = *s.tcp;
    const int which = static_cast<int>(code & 3);
    if (!tcp_timer_needed(tp, which)) continue;
    // tcp_write_timer_handler() and tcp_delack_timer_handler(): a timer pushed back by
    // sk_reset_timer() after it expired, before this softirq ran it, is not due yet (time_after(
    // icsk_timeout, jiffies)); its new expiry has an event of its own (tcp_reset_timer()).
    if (which != kTcpCompackTimer && tcp_timer_of(tp, which).expires_j > jiffies()) continue;
    tcp_cpu_now_ = ctx.cpu;
    switch (which) {
      case kTcpXmitTimer:
        tcp_write_timer_handler(ctx, s);
        break;
      case kTcpDelackTimer:
        tcp_delack_timer_handler(ctx, s);
        break;
      default:  // tcp_compressed_ack_kick()
        tp.compack_timer.hr = kNever;
        tp.compressed_ack--;
        tcp_send_ack(ctx, s);
    }
    co_await exec(ctx, costs_.tcp_timer_ns + take_tcp_owed());
  }
}

void Kernel::tcp_write_timer_handler(Ctx ctx, Socket& s) {
  TcpSock& tp = *s.tcp;
  switch (tp.pending) {
    case TcpXmitTimer::kReoTimeout:
      tcp_rack_reo_timeout(ctx, s);
      break;
    case TcpXmitTimer::kLossProbe:
      tcp_send_loss_probe(ctx, s);
      break;
    case TcpXmitTimer::kRetrans:
      tp.pending = TcpXmitTimer::kNone;
      tcp_retransmit_timer(ctx, s);
      break;
    case TcpXmitTimer::kNone:
      break;
  }
}

void Kernel::tcp_retransmit_timer(Ctx ctx, Socket& s) {
  TcpSock& tp = *s.tcp;
  if (!tp.packets_out || tp.rtx.empty()) return;
  ++tcp_stats_.timeouts;
  tcp_enter_loss(tp);
  ++tp.retransmits;
  tcp_retransmit_skb(ctx, s, 0, 1);
  // Increase the timeout each time we retransmit (exponential backoff).
  tp.rto_j = std::min(tp.rto_j << 1, tcp_rto_max_j_);
  tcp_reset_xmit_timer(tp, TcpXmitTimer::kRetrans, tp.rto_j);
}

void Kernel::tcp_enter_loss(TcpSock& tp) {
  // tcp_timeout_mark_lost(): the head, and every skb whose RACK timeout has passed; a SACKed head
  // means the receiver reneged on its SACKs.
  const bool is_reneg = tp.rtx.front().sacked & tcpcb::kSackedAcked;
  if (is_reneg) tp.sacked_out = 0;
  for (std::size_t i = 0; i < tp.rtx.size(); ++i) {
    TcpSkb& skb = tp.rtx[i];
    if (is_reneg)
      skb.sacked &= static_cast<std::uint8_t>(~tcpcb::kSackedAcked);
    else if (i > 0 && tp.rack_rtt_us - (now() - skb.sent) / 1000 > 0)
      continue;  // don't mark recently sent ones lost yet
    tcp_mark_skb_lost(tp, skb);
  }
  // Reduce ssthresh if it has not yet been made inside this window.
  if (tp.ca_state <= TcpCaState::kDisorder || tp.high_seq <= tp.snd_una ||
      (tp.ca_state == TcpCaState::kLoss && !tp.retransmits)) {
    tp.prior_cwnd = tp.cwnd;
    tp.ssthresh = cubictcp_recalc_ssthresh(tp);
  }
  tp.cwnd = tcp_packets_in_flight(tp) + 1;
  tp.cwnd_cnt = 0;
  tp.snd_cwnd_stamp = jiffies();
  tcp_set_ca_state(tp, TcpCaState::kLoss);
  tp.high_seq = tp.snd_nxt;
  tp.tlp_high_seq = 0;
}

void Kernel::tcp_delack_timer_handler(Ctx ctx, Socket& s) {
  TcpSock& tp = *s.tcp;
  tp.ack_pending &= static_cast<std::uint8_t>(~ack_state::kTimer);
  if (!(tp.ack_pending & ack_state::kSched)) return;
  if (tp.pingpong < 1) {
    tp.ato = std::min(tp.ato << 1, tp.rto_j);  // delayed ACK missed: inflate ATO
  } else {
    tp.pingpong = 0;  // delayed ACK missed: leave pingpong mode and deflate ATO
    tp.ato = tcp_ato_min_j_;
  }
  ++tcp_stats_.delayed_acks;
  tcp_send_ack(ctx, s);
}

void Kernel::tcp_tsq_release(Ctx ctx, TcpSock& tp) {
  // tcp_wfree() of a throttled socket. If this softirq is serviced by ksoftirqd, we are likely under stress: wait until
  // our queues (qdisc + devices) are drained.
  if (tp.wmem_alloc > 0 && ctx.cls == CpuClass::kKsoftirqd) return;
  if (tp.tsq_queued) return;
  tp.tsq_throttled = false;
  tp.tsq_queued = true;
  // Queue this socket to the tasklet queue of this CPU.
  const int c = ctx_cpu(ctx);
  tcp_cpu_[static_cast<std::size_t>(c)].tsq.push_back(tp.id);
  raise_softirq_irqoff(cpu(c), softirq_nr::kTasklet);
}

Proc<void> Kernel::tcp_tasklet_func(Ctx ctx) {
  TcpCpu& tc = tcp_cpu_[static_cast<std::size_t>(ctx.cpu)];
  while (!tc.tsq.empty()) {
    Socket& s = socket(tc.tsq.front());
    tc.tsq.pop_front();
    TcpSock& tp = *s.tcp;
    tp.tsq_queued = false;
    tcp_cpu_now_ = ctx.cpu;
    // tcp_tsq_write()
    if (tp.lost_out > tp.retrans_out && tp.cwnd > tcp_packets_in_flight(tp)) tcp_xmit_retransmit_queue(ctx, s);
    tcp_write_xmit(ctx, s, 0);
    co_await exec(ctx, costs_.tsq_ns + take_tcp_owed());
  }
}

}  // namespace napisim
