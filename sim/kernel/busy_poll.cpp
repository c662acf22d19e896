// napisim: busy polling (net/core/dev.c napi_busy_loop / busy_poll_stop, fs/eventpoll.c
// ep_busy_loop, include/net/busy_poll.h; IRQ suspension napi_suspend_irqs / napi_resume_irqs,
// v6.13). kernel-napi.md 3.3, 3.4, 7.
//
//   __napi_busy_loop()  take ownership (SCHED|IN_BUSY_POLL) unless softirq/a kthread owns the NAPI,
//                       in which case PREFER_BUSY_POLL asks it to yield; poll `budget` packets per
//                       iteration with BHs disabled; local_bh_enable() runs pending softirqs inline;
//                       stop when loop_end() (events, or the busy-poll time is up); on need_resched
//                       release ownership (busy_poll_stop) and cond_resched(); IRQs stay masked
//                       while IN_BUSY_POLL (napi_complete_done returns false)
//   busy_poll_stop()    clear IN_BUSY_POLL; with prefer_busy_poll and napi_defer_hard_irqs +
//                       gro_flush_timeout, arm the timer and skip the final schedule; one more
//                       poll to re-enable interrupts; a full poll hands the rest to softirq
//   ep_busy_loop()      epoll: busy-poll the epoll's NAPI (ep->napi_id, learned from ready
//                       sockets) for busy_poll_usecs (or net.core.busy_poll), budget
//                       busy_poll_budget (or BUSY_POLL_BUDGET 8); on timeout resume IRQs when
//                       prefer_busy_poll and forget the NAPI id; with event_poll_only (Gulati
//                       2024, not merged) spin on the ready list alone, cond_resched() on
//                       need_resched, until events or the timeout
//   ep_poll()           events returned with prefer_busy_poll -> napi_suspend_irqs()
//   sk_busy_loop()      a blocking tcp_recvmsg() on a socket with sk_ll_usec (SO_BUSY_POLL,
//                       default net.core.busy_read) busy-polls sk_napi_id until the socket has
//                       data (sk_busy_loop_end) or sk_ll_usec passes, before sk_wait_data()
//
// Modelling note: an iteration that finds nothing changes nothing, so a poller with nothing to
// do spins in one SpinAwait (CPU busy, preemption disabled) until a packet reaches its NAPI, the
// NAPI completes, the epoll gets an event, its socket gets data, need_resched is set, or its
// deadline passes.
#include "sim/kernel/kernel.hpp"

namespace napisim {

using namespace napi_state;

namespace {
constexpr int kBusyPollBudget = 8;  // BUSY_POLL_BUDGET
}

bool Kernel::SpinAwait::await_ready() const noexcept {
  if (ep && !ep->ready.empty()) return true;
  if (sk && sk->rx_avail > 0) return true;
  if (k.now() >= deadline) return true;
  if (k.cpu(t.cpu).need_resched) return true;
  if (napi) {
    if (!(napi->state & kSched)) return true;  // ownable
    if ((napi->state & kInBusyPoll) && napi->ch) {
      k.rx_sync(*napi->ch);
      if (napi->ch->ring_pkts > 0 || napi->ch->tx_pending > 0) return true;
      if (napi->ch->xdp && napi->ch->xdp->xsk && !napi->ch->xdp->xsk->tx.empty()) return true;  // mlx5e_xsk_tx()
    }
  }
  return false;
}

void Kernel::SpinAwait::await_suspend(std::coroutine_handle<> h) {
  Cpu& c = k.park(t, h, true);
  t.slot.cls = cls;
  t.spinning = true;
  // One spinner slot per NAPI: the owning busy poller (it must see RX completions) wins it over a
  // task waiting for ownership, which also watches its socket or epoll and its deadline.
  if (napi && (!napi->spinner || napi->busy_owner == &t)) {
    if (napi->ch) k.rx_sync(*napi->ch);  // what arrived before the spinner does not wake it
    napi->spinner = &t;
    if (napi->ch) k.rx_watch(*napi->ch);  // what arrives from now on does
  }
  if (ep) ep->spinner = &t;
  if (sk) sk->spinner = &t;
  if (deadline != kNever)
    t.spin_timer.arm(k.host().queue(), deadline, Prio::kTimer, &k, kSpinDeadline, static_cast<std::uint64_t>(t.id));
  k.arm_segment(c);
}

void Kernel::SpinAwait::await_resume() noexcept {
  t.spinning = false;
  t.spin_timer.cancel();
  if (napi && napi->spinner == &t) napi->spinner = nullptr;
  if (ep && ep->spinner == &t) ep->spinner = nullptr;
  if (sk && sk->spinner == &t) sk->spinner = nullptr;
}

void Kernel::spin_wake(Task& t) {
  if (!t.spinning || !t.slot.waiting) return;
  Cpu& c = cpu(t.cpu);
  update_exec(c);
  t.slot.waiting = false;
  t.spin_timer.cancel();
  arm_segment(c);
}

Proc<void> Kernel::napi_busy_loop(Task& t, Napi& n, Epoll* ep, Socket* s, Nanos timeout, bool prefer, int budget) {
  const Nanos end = now() + timeout;
  const Ctx spin = task_ctx(t, CpuClass::kBusySpin);
  auto loop_end = [&] { return (ep ? !ep->ready.empty() : (s && s->rx_avail > 0)) || now() > end; };
  bool owned = false;
  for (;;) {
    local_bh_disable(t);
    int work = 0;
    if (!owned) {
      if (n.state & (kDisable | kSched | kInBusyPoll)) {
        if (prefer) n.state |= kPreferBusyPoll;  // ask the owner (softirq) to yield
      } else {
        n.state |= kInBusyPoll | kSched;
        if (stamps_) n.mark_sched(now());
        if (n.stamps) napi_wait_begin(n, t.cpu);
        n.busy_owner = &t;
        owned = true;
      }
    }
    if (owned) {
      work = co_await driver_poll(task_ctx(t, CpuClass::kBusyPoll), n, budget);
    } else {
      // The failed ownership attempt and cpu_relax(): at least 1 ns, so that a spin with every
      // cost set to 0 still lets time pass until the owner is done.
      co_await exec(spin, std::max<Nanos>(1, costs_.napi_poll_ns));
    }
    co_await local_bh_enable(t);
    if (loop_end()) break;
    if (cpu(t.cpu).need_resched) {
      if (owned) co_await busy_poll_stop(t, n, prefer, budget);
      owned = false;
      co_await cond_resched(t);
      if (loop_end()) co_return;
      continue;
    }
    if (work < budget) co_await spin_until(t, &n, ep, end + 1, CpuClass::kBusySpin, s);
  }
  if (owned) co_await busy_poll_stop(t, n, prefer, budget);
}

Proc<void> Kernel::sk_busy_loop(Task& t, Socket& s) {
  // sk_can_busy_loop(): SO_BUSY_POLL set and a valid sk_napi_id (a NIC NAPI delivered to it).
  if (s.ll_usec <= 0 || s.napi_id < 0) co_return;
  // sk_busy_loop(sk, nonblock=0): napi_busy_loop(napi_id, sk_busy_loop_end, sk,
  // sk_prefer_busy_poll (0), sk_busy_poll_budget ?: BUSY_POLL_BUDGET) until data or sk_ll_usec.
  co_await napi_busy_loop(t, *napis_[static_cast<std::size_t>(s.napi_id)], nullptr, &s, s.ll_usec * kNsPerUs, false,
                          kBusyPollBudget);
}

Proc<void> Kernel::busy_poll_stop(Task& t, Napi& n, bool prefer, int budget) {
  n.state &= ~(kMissed | kInBusyPoll);
  n.busy_owner = nullptr;
  local_bh_disable(t);
  bool skip_schedule = false;
  if (prefer) {
    // The defer_hard_irqs/gro_flush_timeout re-arm (kernel-napi.md 3.4); irq_suspend_timeout is
    // only napi_suspend_irqs()'s (the v6 patch that also used it here was dropped in v7).
    n.defer_hard_irqs_count = n.defer_hard_irqs;
    const Nanos timeout = n.gro_flush_timeout;
    if (n.defer_hard_irqs_count && timeout) {
      n.timer_cpu = t.cpu;
      n.timer.arm(host_.queue(), now() + timeout, Prio::kTimer, this, kNapiTimer, static_cast<std::uint64_t>(n.id));
      skip_schedule = true;
    }
  }
  // "All we really want here is to re-enable device interrupts."
  const int rc = co_await driver_poll(task_ctx(t, CpuClass::kBusyPoll), n, budget);
  if (rc == budget) {
    if (!skip_schedule)
      napi_schedule_local(cpu(t.cpu), n);  // __napi_schedule: softirq takes the rest
    else
      n.state &= ~kSched;
  }
  co_await local_bh_enable(t);
}

// busy_loop_ep_timeout() (fs/eventpoll.c v6.9): the epoll's busy_poll_usecs, else busy_loop_timeout()'s
// net.core.busy_poll.
std::int64_t Kernel::ep_busy_poll_usecs(const Epoll& ep) const {
  return ep.busy_poll_usecs ? ep.busy_poll_usecs : kp_.net.busy_poll;
}

bool Kernel::ep_busy_poll_on(const Epoll& ep) const {
  return ep.busy_poll_usecs || ep.prefer_busy_poll || kp_.net.busy_poll;
}

bool Kernel::ep_busy_loop_on(const Epoll& ep) const {
  return (ep.event_poll_only && ep_busy_poll_usecs(ep) > 0) || (ep.napi_id >= 0 && ep_busy_poll_on(ep));
}

Proc<bool> Kernel::ep_busy_loop(Task& t, Epoll& ep) {
  if (!ep_busy_loop_on(ep)) co_return false;
  const std::int64_t usecs = ep_busy_poll_usecs(ep);
  if (ep.event_poll_only && usecs > 0) {
    // Gulati 2024 (not merged): spin on the ready list only, no napi_poll:
    //   while (!ep_busy_loop_end(ep, start)) cond_resched();
    // need_resched ends a spin only to yield; the loop goes on until events or the timeout.
    const Nanos end = now() + usecs * kNsPerUs;
    while (ep.ready.empty() && now() <= end) {
      co_await spin_until(t, nullptr, &ep, end + 1);
      co_await cond_resched(t);
    }
    co_return !ep.ready.empty();
  }
  // Busy polling is on and the epoll has learned a NAPI (ep_busy_loop_on()).
  const int napi_id = ep.napi_id;
  Napi& n = *napis_[static_cast<std::size_t>(napi_id)];
  const int budget = ep.busy_poll_budget ? static_cast<int>(ep.busy_poll_budget) : kBusyPollBudget;
  co_await napi_busy_loop(t, n, &ep, nullptr, usecs * kNsPerUs, ep.prefer_busy_poll, budget);
  if (!ep.ready.empty()) co_return true;
  if (ep.prefer_busy_poll) {
    local_bh_disable(t);
    napi_resume_irqs(cpu(t.cpu), napi_id);
    co_await local_bh_enable(t);
  }
  ep.napi_id = -1;  // re-learned from the next ready socket
  co_return false;
}

void Kernel::napi_suspend_irqs(Cpu& c, int napi_id) {
  Napi& n = *napis_[static_cast<std::size_t>(napi_id)];
  if (n.irq_suspend_timeout) {
    n.timer_cpu = c.id;
    n.timer.arm(host_.queue(), now() + n.irq_suspend_timeout, Prio::kTimer, this, kNapiTimer,
                static_cast<std::uint64_t>(n.id));
  }
}

void Kernel::napi_resume_irqs(Cpu& c, int napi_id) {
  Napi& n = *napis_[static_cast<std::size_t>(napi_id)];
  if (n.irq_suspend_timeout) napi_schedule(c, n);
}

}  // namespace napisim
