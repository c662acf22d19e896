// napisim: XDP verdicts in the driver's poll and AF_XDP sockets (Linux v6.6; see xsk.hpp).
#include "sim/kernel/xsk.hpp"

#include <algorithm>

#include "sim/kernel/kernel.hpp"

namespace napisim {

namespace {
constexpr int kBusyPollBudget = 8;             // BUSY_POLL_BUDGET
constexpr std::int64_t kXskTxPollBudget = 64;  // MLX5E_TX_XSK_POLL_BUDGET
}  // namespace

XdpProg& Kernel::xdp_attach(Channel& ch, XdpAction action) {
  if (!ch.xdp) {
    xdp_progs_.push_back(std::make_unique<XdpProg>());
    ch.xdp = xdp_progs_.back().get();
  }
  ch.xdp->action = action;
  return *ch.xdp;
}

Xsk& Kernel::xsk_bind(Channel& ch, bool zerocopy, bool need_wakeup) {
  XdpProg& prog = ch.xdp ? *ch.xdp : xdp_attach(ch, XdpAction::kPass);
  auto x = std::make_unique<Xsk>();
  x->id = static_cast<int>(xsks_.size());
  x->ch = &ch;
  x->zerocopy = zerocopy;
  x->need_wakeup = need_wakeup;
  x->tx_need_wakeup = need_wakeup;
  Socket& s = sockets_.add();
  s.nic = -1;
  s.ll_usec = kp_.net.busy_read;
  x->sock = s.id;
  prog.xsk = x.get();
  xsks_.push_back(std::move(x));
  return *xsks_.back();
}

void Kernel::xsk_redirect(Xsk& xs, int sock) {
  XdpProg& prog = *xs.ch->xdp;
  if (prog.xsk_of_sock.size() <= static_cast<std::size_t>(sock))
    prog.xsk_of_sock.resize(static_cast<std::size_t>(sock) + 1, -1);
  prog.xsk_of_sock[static_cast<std::size_t>(sock)] = xs.id;
}

void Kernel::xdp_transmit(Ctx ctx, Channel& ch, int sock, std::uint32_t bytes) {
  // The XDP SQ of the channel (XDP_TX) or the XSK SQ: one frame, its completion reaped by a poll.
  (void)ctx;
  Nic& nic = *ch.nic;
  const Nanos done = nic.tx_port.transmit(now(), static_cast<std::int64_t>(bytes) + kWireOverheadBytes);
  ++ch.tx_pkts;
  ch.tx_bytes += bytes;
  if (peer_) peer_->on_transmit(WireTrain{sock, bytes, 1, false}, done);
  ch.tx_done.push_back(TxDesc{done, -1, 0});
  tx_schedule_event(ch);
}

XdpAction Kernel::xdp_rx(Ctx ctx, Channel& ch, const RxEntry& e, Nanos* cost, bool* stall) {
  XdpProg& prog = *ch.xdp;
  *cost += costs_.xdp_prog_ns;  // bpf_prog_run_xdp()
  const auto idx = static_cast<std::size_t>(e.sock);
  const int x = idx < prog.xsk_of_sock.size() ? prog.xsk_of_sock[idx] : -1;
  if (x < 0 || xsks_[static_cast<std::size_t>(x)]->ch != &ch) {
    switch (prog.action) {
      case XdpAction::kPass:
        ++prog.passes;
        return XdpAction::kPass;
      case XdpAction::kTx:  // XDP_TX: the frame goes back out as it is
        ++prog.tx;
        *cost += costs_.xsk_tx_ns;
        xdp_transmit(ctx, ch, e.sock, e.bytes);
        return XdpAction::kTx;
      default:
        ++prog.drops;
        if (peer_) peer_->on_rx_drop(e.sock, e.bytes, e.segs);
        return XdpAction::kDrop;
    }
  }
  Xsk& xs = *xsks_[static_cast<std::size_t>(x)];
  if (xs.fill == 0) {  // no UMEM frame to receive into
    ++xs.fill_empty;
    *stall = true;
    return XdpAction::kAborted;
  }
  ++prog.redirects;
  if (static_cast<std::int64_t>(xs.rx.size()) >= xs.rx_size) {  // xskq_prod_reserve() failed
    ++xs.rx_dropped;
    if (peer_) peer_->on_rx_drop(e.sock, e.bytes, e.segs);
    return XdpAction::kDrop;
  }
  --xs.fill;
  xs.rx.push_back(XskFrame{e.sock, e.bytes, 0, e.at});
  ++xs.unflushed;
  ++xs.rx_packets;
  Socket& s = socket(xs.sock);
  if (s.napi_id < 0) s.napi_id = ch.napi.id;  // sk_mark_napi_id_once_xdp()
  *cost += costs_.xsk_rcv_ns + (xs.zerocopy ? 0 : static_cast<Nanos>(e.bytes) * costs_.copy_ns_per_kb / 1024);
  if (!xs.flush) *cost += costs_.sk_data_ready_ns + (s.wq.waiter ? costs_.wakeup_ns : 0);
  xs.flush = true;
  return XdpAction::kRedirect;
}

void Kernel::xdp_do_flush(Ctx ctx, Channel& ch) {
  Xsk* xs = ch.xdp->xsk;
  if (!xs || !xs->flush) return;
  xs->flush = false;
  for (std::size_t i = xs->rx.size() - xs->unflushed; i < xs->rx.size(); ++i)
    xs->rx[i].at = now();  // __xsk_map_flush() -> xsk_flush(): the producer index is published
  xs->unflushed = 0;
  Socket& s = socket(xs->sock);
  s.rx_avail = static_cast<std::int64_t>(xs->rx.size());
  if (s.spinner) spin_wake(*s.spinner);  // an application spinning on its RX ring sees the entries
  sk_data_ready(ctx, s);                 // xsk_flush(): poll() and epoll waiters
}

Nanos Kernel::xsk_tx_poll(Ctx ctx, Channel& ch, bool* busy) {
  Xsk* xs = ch.xdp->xsk;
  if (!xs || !xs->zerocopy) return 0;
  // mlx5e_napi_xsk_post(): the TX ring asks for a wakeup while the SQ has nothing in flight (no
  // completion would bring the NAPI back), and stops asking once this poll queues descriptors.
  if (xs->need_wakeup && ch.tx_done.empty() && ch.tx_pending == 0) xs->tx_need_wakeup = true;
  Nanos cost = 0;
  std::int64_t sent = 0;
  while (!xs->tx.empty() && sent < kXskTxPollBudget) {
    const XskFrame f = xs->tx.front();
    xs->tx.pop_front();
    xdp_transmit(ctx, ch, f.sock, f.bytes);
    ++xs->tx_packets;
    ++sent;
    cost += costs_.xsk_tx_ns;
  }
  if (xs->need_wakeup && sent > 0) xs->tx_need_wakeup = false;
  if (!xs->tx.empty()) *busy = true;
  return cost;
}

void Kernel::xsk_tx_post(Xsk& xs, const XskFrame& f) {
  xs.tx.push_back(f);
  Napi& n = xs.ch->napi;
  if (n.spinner) spin_wake(*n.spinner);  // a busy-polling NAPI kthread finds it on its next loop
}

void Kernel::xsk_fill(Xsk& xs, std::int64_t frames) {
  xs.fill = std::min(xs.fill + frames, xs.rx_size);
}

void Kernel::xsk_wakeup(Xsk& xs, int this_cpu) {
  // mlx5e_xsk_wakeup(): if (!napi_if_scheduled_mark_missed(&c->napi)) mlx5e_trigger_irq(&c->icosq)
  (void)this_cpu;
  Channel& ch = *xs.ch;
  Napi& n = ch.napi;
  ++xs.wakeups;
  const bool stalled = xs.fill_stalled;
  xs.fill_stalled = false;
  xs.rx_need_wakeup = false;
  if (n.state & napi_state::kSched) {
    n.state |= napi_state::kMissed;
    return;
  }
  // The NOP posted on the ICOSQ interrupts only if its CQ is armed: a poll that completed armed it
  // (on an empty fill ring too); one that deferred (napi_defer_hard_irqs) did not, and the next
  // poll, from the timer or a busy poll, sends.
  if (!ch.irq_armed && !stalled) return;
  nic_fire_irq(ch);
}

bool Kernel::xsk_no_wakeup(const Xsk& xs) const {
  // xsk_no_wakeup(): READ_ONCE(sk->sk_prefer_busy_poll) && READ_ONCE(sk->sk_ll_usec) && napi_id
  const Socket& s = sockets_[xs.sock];
  return xs.prefer_busy_poll && s.ll_usec > 0 && s.napi_id >= 0;
}

Proc<void> Kernel::xsk_busy_poll_once(Task& t, Xsk& xs) {
  Socket& s = socket(xs.sock);
  if (s.ll_usec <= 0 || s.napi_id < 0) co_return;  // sk_can_busy_loop()
  const int budget = xs.busy_poll_budget > 0 ? static_cast<int>(xs.busy_poll_budget) : kBusyPollBudget;
  co_await napi_busy_loop(t, *napis_[static_cast<std::size_t>(s.napi_id)], nullptr, &s, 0, xs.prefer_busy_poll, budget);
}

Proc<void> Kernel::xsk_sendto(Task& t, Xsk& xs) {
  ++xs.kicks;
  co_await exec(task_ctx(t, CpuClass::kSystem), costs_.syscall_ns + costs_.xsk_sendmsg_ns);
  co_await xsk_busy_poll_once(t, xs);
  if (xsk_no_wakeup(xs)) co_return;
  if (xs.zerocopy) {
    xsk_wakeup(xs, t.cpu);
    co_return;
  }
  // xsk_generic_xmit(): an skb per descriptor, copied, through the qdisc to the driver.
  while (!xs.tx.empty()) {
    const XskFrame f = xs.tx.front();
    xs.tx.pop_front();
    co_await exec(task_ctx(t, CpuClass::kSystem),
                  costs_.send_ns + static_cast<Nanos>(f.bytes) * costs_.copy_ns_per_kb / 1024);
    Nic& nic = *xs.ch->nic;
    xdp_transmit(task_ctx(t, CpuClass::kSystem), *nic.channels[static_cast<std::size_t>(txq_of_cpu(nic, t.cpu))],
                 f.sock, f.bytes);
    ++xs.tx_packets;
  }
}

Proc<void> Kernel::xsk_recvfrom(Task& t, Xsk& xs) {
  ++xs.kicks;
  co_await exec(task_ctx(t, CpuClass::kSystem), costs_.syscall_ns);
  co_await xsk_busy_poll_once(t, xs);
  if (xsk_no_wakeup(xs)) co_return;
  if (xs.zerocopy) xsk_wakeup(xs, t.cpu);
}

Proc<void> Kernel::xsk_poll_wait(Task& t, Xsk& xs) {
  Socket& s = socket(xs.sock);
  // do_sys_poll() -> xsk_poll(): kick a driver that needs it, then sleep until sk_data_ready().
  co_await exec(task_ctx(t, CpuClass::kSystem), costs_.syscall_ns + costs_.epoll_wait_ns);
  if (xs.zerocopy && (xs.rx_need_wakeup || xs.tx_need_wakeup)) xsk_wakeup(xs, t.cpu);  // cached_need_wakeup
  while (xs.visible() == 0)
    co_await sleep_on(t, s.wq);
}

}  // namespace napisim
