// napisim: NAPI core (net/core/dev.c, as of v6.13: DEV-T in docs/kernel-napi.md).
//
//   napi_schedule_prep()    take SCHED or record MISSED
//   ____napi_schedule()     threaded: set SCHED_THREADED and wake the kthread; else add to this
//                           CPU's poll_list and __raise_softirq_irqoff(NET_RX) unless
//                           in_net_rx_action (8b43fd3d1d7d, v6.4; ksoftirqd_mode "v6.5" -- the
//                           older modes raise always and net_rx_action() does not refill)
//   net_rx_action()         netdev_budget (300) and netdev_budget_usecs (2 jiffies) with the budget
//                           checked after each poll, round robin via the repoll list,
//                           time_squeeze, re-raise
//   __napi_poll()           weight-sized polls; full polls stay scheduled (or yield to a
//                           PREFER_BUSY_POLL poller)
//   napi_complete_done()    napi_defer_hard_irqs / gro_flush_timeout: keep the IRQ masked and arm
//                           the pinned hrtimer; MISSED reschedules
//   napi_watchdog()         the hrtimer: relaxed schedule, clears PREFER_BUSY_POLL
//   napi_threaded_poll()    the threaded NAPI kthread loop (29863d41bb6e, v5.12)
#include <algorithm>

#include "sim/kernel/kernel.hpp"
#include "sim/kernel/timeline.hpp"

namespace napisim {

using namespace napi_state;

bool Kernel::napi_schedule_prep(Napi& n) {
  if (n.state & kDisable) return false;
  const bool was_sched = n.state & kSched;
  n.state |= kSched;
  if (was_sched) {
    n.state |= kMissed;
    return false;
  }
  if (stamps_) n.mark_sched(host_.now());
  return true;
}

void Kernel::napi_schedule(Cpu& c, Napi& n) {
  if (!napi_schedule_prep(n)) return;
  napi_schedule_local(c, n);
  if (n.stamps) napi_wait_begin(n, n.thread && (n.state & kSchedThreaded) ? n.thread->cpu : c.id);
}

void Kernel::napi_schedule_local(Cpu& c, Napi& n) {
  if (n.hook) {
    n.hook->schedule(*this, n, c);
    return;
  }
  if ((n.state & kThreaded) && n.thread) {
    n.state |= kSchedThreaded;
    try_to_wake_up(*n.thread, c.id);
    return;
  }
  c.sd.poll_list.push_back(&n);
  n.list_owner = c.id;
  if (!net_rx_refill_ || !c.sd.in_net_rx_action) raise_softirq_irqoff(c, softirq_nr::kNetRx);
}

bool Kernel::napi_complete_done(Cpu& c, Napi& n, int work_done) {
  if (n.state & (kNpsvc | kInBusyPoll)) return false;
  Nanos timeout = 0;
  bool ret = true;
  if (work_done) {
    // GRO held packets: trains are delivered whole here, so nothing is held at completion.
    n.defer_hard_irqs_count = n.defer_hard_irqs;
  }
  // irq_suspend_timeout plays no part here: the IRQ-suspension series' "net: Suspend softirq when
  // prefer_busy_poll is set" (v6 2/7) was dropped in v7, whose numbers karsten2024 quotes, and is
  // not in mainline (kernel-napi.md 2.5, 3.3).
  if (n.defer_hard_irqs_count > 0) {
    --n.defer_hard_irqs_count;
    timeout = n.gro_flush_timeout;
    if (timeout) ret = false;
  }
  if (n.on_list) c.sd.poll_list.remove(&n);
  ++n.completions;
  if (n.spinner) spin_wake(*n.spinner);  // a busy poller may now take ownership
  const bool missed = n.state & kMissed;
  n.state &= ~(kMissed | kSched | kSchedThreaded | kPreferBusyPoll);
  if (missed) {
    n.state |= kSched;
    napi_schedule_local(c, n);
    return false;
  }
  if (timeout) {
    n.timer_cpu = c.id;
    n.timer.arm(host_.queue(), host_.now() + timeout, Prio::kTimer, this, kNapiTimer, static_cast<std::uint64_t>(n.id));
  }
  return ret;
}

void Kernel::napi_watchdog(Cpu& c, Napi& n) {
  if (n.state & kDisable) return;
  if (n.state & kSched) return;  // test_and_set_bit(NAPI_STATE_SCHED): no MISSED here
  n.state |= kSched;
  if (stamps_) n.mark_sched(host_.now());
  n.state &= ~kPreferBusyPoll;
  napi_schedule_local(c, n);
  if (n.stamps) napi_wait_begin(n, n.thread && (n.state & kSchedThreaded) ? n.thread->cpu : c.id);
}

// ---- latency attribution: the waits for NET_RX (NapiStamps) -----------------------------------

void Kernel::napi_wait_begin(Napi& n, int cpu_id) {
  if (!n.ch) return;  // a backlog's wait is its skbs' napi stage
  NapiStamps& ns = *n.stamps;
  if (ns.view_cpu != cpu_id) {
    if (ns.view_cpu >= 0) {
      auto& old = wait_viewers_[static_cast<std::size_t>(ns.view_cpu)];
      old.erase(std::find(old.begin(), old.end(), n.ch));
    }
    wait_viewers_[static_cast<std::size_t>(cpu_id)].push_back(n.ch);
  }
  ns.view_cpu = cpu_id;
  ns.view_from = host_.now();
  ns.view_mark = cpu_times_at(cpu(cpu_id), host_.now());
}

bool Kernel::napi_waiting(const Napi& n) {
  return (n.state & kSched) && n.poll_began < 0 && n.stamps->view_cpu >= 0;
}

void Kernel::napi_wait_poll(Napi& n) {
  NapiStamps& ns = *n.stamps;
  if (napi_waiting(n)) ns.waited = ns.waited + cpu_times_at(cpu(ns.view_cpu), host_.now()) - ns.view_mark;
}

void Kernel::napi_wait_resume(Napi& n) {
  NapiStamps& ns = *n.stamps;
  if (!(n.state & kSched) || ns.view_cpu < 0) return;
  ns.view_from = host_.now();
  ns.view_mark = cpu_times_at(cpu(ns.view_cpu), host_.now());
}

ClassTimes Kernel::napi_waited_at(const Napi& n, Nanos at, const ClassTimes* observed) const {
  // A train that came before the wait in progress (while the NAPI was not scheduled: its stage
  // starts at the schedule) or while none is in progress (a poll) has waited nothing yet.
  const NapiStamps& ns = *n.stamps;
  if (!napi_waiting(n) || at <= ns.view_from) return ns.waited;
  const Cpu& c = cpu(ns.view_cpu);
  if (at >= c.last_update) return ns.waited + cpu_times_at(c, at) - ns.view_mark;
  NAPISIM_ASSERT(observed, "napi_waited_at(): an arrival the waited-on CPU has accounted past, unobserved");
  return *observed;
}

void Kernel::napi_wait_observe(const Cpu& c) {
  const Nanos now = host_.now();
  for (Channel* ch : wait_viewers_[static_cast<std::size_t>(c.id)]) {
    // A train with its arrival event enters the ring at its arrival: only the others need this.
    const Napi& n = ch->napi;
    if (ch->inbound_idle == 0 || !napi_waiting(n)) continue;
    NapiStamps& ns = *n.stamps;
    const Nanos from = std::max(c.last_update, ns.view_from);
    for (std::size_t i = ch->inbound.size(); i-- > 0;) {  // in arrival order
      const Inbound& in = ch->inbound[i];
      if (in.at <= from) break;
      if (in.at <= now && !in.queued) ns.inbound_marks[i] = ns.waited + cpu_times_at(c, in.at) - ns.view_mark;
    }
  }
}

Proc<int> Kernel::napi_poll(Ctx ctx, Napi& n, bool& repoll) {
  const int weight = n.weight;
  int work = 0;
  // The poll works on the NAPI's rings and skbs, whoever polls it (cache.cpp).
  Ctx pc = ctx;
  pc.owner = &n.cache;
  const Nanos start = host_.now();
  if (n.state & kSched) work = n.ch ? co_await driver_poll(pc, n, weight) : co_await process_backlog(pc, n, weight);
  ++n.polls;
  if (trace_) [[unlikely]]
    trace_->napi_poll(trace_host_, ctx.cpu, n.id, work, weight, start, host_.now());
  if (work < weight) co_return work;
  ++n.full_polls;
  Cpu& c = cpu(ctx.cpu);
  if (n.state & kDisable) {
    napi_complete_done(c, n, 0);  // napi_complete(n)
    co_return work;
  }
  if (n.state & kPreferBusyPoll) {
    if (napi_complete_done(c, n, work)) napi_schedule(c, n);
    co_return work;
  }
  repoll = true;
  co_return work;
}

Proc<void> Kernel::net_rx_action(Ctx ctx) {
  Cpu& c = cpu(ctx.cpu);
  SoftnetData& sd = c.sd;
  const std::int64_t time_limit = jiffies() + usecs_to_jiffies(kp_.net.netdev_budget_usecs);
  std::int64_t budget = kp_.net.netdev_budget;
  NapiList list, repoll;
  sd.in_net_rx_action = true;
  list.splice_tail(sd.poll_list);
  for (;;) {
    if (list.empty()) {
      if (!net_rx_refill_) {
        // Before v6.4: "if (!sd_has_rps_ipi_waiting(sd) && list_empty(&repoll)) goto out;". NAPIs
        // scheduled meanwhile stay on poll_list with NET_RX raised: __do_softirq()'s restart (or
        // ksoftirqd) polls them, not this invocation.
        if (repoll.empty() && sd.rps_ipi_list.empty()) {
          sd.in_net_rx_action = false;
          co_return;
        }
        break;
      }
      if (repoll.empty()) {
        sd.in_net_rx_action = false;
        if (!sd.poll_list.empty()) {  // goto start: ____napi_schedule() refilled poll_list
          sd.in_net_rx_action = true;
          list.splice_tail(sd.poll_list);
          continue;
        }
        net_rps_send_ipis(c);
        co_return;
      }
      break;
    }
    Napi* n = list.pop_front();
    bool do_repoll = false;
    budget -= co_await napi_poll(ctx, *n, do_repoll);
    if (do_repoll) repoll.push_back(n);
    // The budget is checked after each poll, never before (overshoot is normal).
    if (budget <= 0 || jiffies() >= time_limit) {
      ++sd.time_squeeze;
      break;
    }
  }
  // Not polled this round, then newly scheduled, then repoll: round robin.
  list.splice_tail(sd.poll_list);
  list.splice_tail(repoll);
  sd.poll_list.splice_tail(list);
  if (!sd.poll_list.empty())
    raise_softirq_irqoff(c, softirq_nr::kNetRx);
  else
    sd.in_net_rx_action = false;
  net_rps_send_ipis(c);  // net_rps_action_and_irq_enable()
}

Proc<void> Kernel::napi_threaded_poll(Task& t, Napi& n) {
  for (;;) {
    // napi_thread_wait(): sleep until SCHED_THREADED.
    while (!(n.state & kSchedThreaded))
      co_await sleep_on(t, n.thread_wq);
    // napi_threaded_poll_loop()
    for (;;) {
      local_bh_disable(t);
      Cpu& c = cpu(t.cpu);
      c.sd.in_napi_threaded_poll = true;
      bool repoll = false;
      co_await napi_poll(Ctx{t.cpu, &t, 0, CpuClass::kKthread}, n, repoll);
      cpu(t.cpu).sd.in_napi_threaded_poll = false;
      // "if (sd_has_rps_ipi_waiting(sd)) net_rps_action_and_irq_enable(sd)": enqueue_to_backlog()
      // raised no NET_RX for remote backlogs while in_napi_threaded_poll, so their IPIs go now.
      net_rps_send_ipis(cpu(t.cpu));
      co_await local_bh_enable(t);
      if (!repoll) break;
      co_await cond_resched(t);
    }
  }
}

Task& Kernel::napi_kthread_create(Napi& n, const CpuMask& allowed, SchedPolicy policy, int nice, int rt_priority) {
  const std::string dev = n.ch ? n.ch->nic->params.name : std::string("backlog");
  n.thread = &kthread_create(
      "napi/" + dev + "-" + std::to_string(n.id), TaskKind::kKthread, allowed, CpuClass::kKthread,
      [&](Task& t) { return napi_threaded_poll(t, n); }, policy, nice, rt_priority);
  return *n.thread;
}

}  // namespace napisim
