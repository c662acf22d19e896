// napisim: the softirq engine (kernel/softirq.c, non-PREEMPT_RT, as of v6.6 unless noted).
//
//   __raise_softirq_irqoff()  sets the pending bit only
//   raise_softirq_irqoff()    + wakeup_softirqd() when not in interrupt context
//   irq_exit() -> invoke_softirq(): run handle_softirqs() on the way out of the hardirq unless
//                 in_interrupt() (a softirq or BH-disabled section was interrupted); in the
//                 4.9-6.4 era ("softirq: Let ksoftirqd do its job", 4cd13c21b207, reverted by
//                 d15121be7485 in v6.5) not while ksoftirqd is runnable
//   handle_softirqs()         MAX_SOFTIRQ_RESTART (10) passes, MAX_SOFTIRQ_TIME (2 ms in
//                 jiffies), need_resched() check, then wakeup_softirqd()
//   local_bh_enable()         runs pending softirqs inline from task context
//   run_ksoftirqd()           the per-CPU ksoftirqd/N thread
//   handlers                  TIMER (TCP's timer wheel timers), NET_RX, TASKLET (TCP Small Queues),
//                             in their bit order
#include "sim/kernel/kernel.hpp"

namespace napisim {

namespace {
constexpr int kMaxSoftirqRestart = 10;
constexpr std::int64_t kMaxSoftirqTimeMs = 2;
constexpr std::uint32_t kSoftirqNowMask = (1u << softirq_nr::kHi) | (1u << softirq_nr::kTasklet);

// ksoftirqd_running() of the 4.9-6.4 era (4cd13c21b207, reverted by d15121be7485): true when
// pending softirqs should be left to a runnable ksoftirqd instead of being run inline.
bool ksoftirqd_defers(bool era_4_9_to_6_4, const Cpu& c) {
  return era_4_9_to_6_4 && c.ksoftirqd &&
         (c.ksoftirqd->state == TaskState::kRunning || c.ksoftirqd->state == TaskState::kRunnable) &&
         !(c.softirq_pending & kSoftirqNowMask);
}
}  // namespace

bool Kernel::in_interrupt(const Cpu& c) const {
  return c.hardirq_active || c.serving_softirq || c.softirq_active || (c.curr && c.curr->bh_disable > 0);
}

void Kernel::raise_softirq_irqoff(Cpu& c, int nr) {
  c.softirq_pending |= 1u << nr;
}

void Kernel::raise_softirq(Cpu& c, int nr) {
  raise_softirq_irqoff(c, nr);
  if (!in_interrupt(c)) wakeup_softirqd(c);
}

void Kernel::wakeup_softirqd(Cpu& c) {
  if (c.ksoftirqd && c.ksoftirqd->state == TaskState::kSleeping) {
    ++c.ksoftirqd_wakeups;
    try_to_wake_up(*c.ksoftirqd, c.id);
  }
}

void Kernel::do_softirq(Cpu& c) {
  if (in_interrupt(c) || c.softirq_pending == 0) return;
  if (ksoftirqd_defers(ksoftirqd_era_, c)) return;  // ksoftirqd_running(): leave it to ksoftirqd
  start_softirq(c);
}

void Kernel::irq_exit(Cpu& c) {
  do_softirq(c);  // invoke_softirq(): do_softirq()'s checks, on the way out of the hardirq
}

void Kernel::start_softirq(Cpu& c) {
  update_exec(c);
  ++c.softirq_runs;
  c.softirq_active = true;
  c.softirq_proc = softirq_body(c);
  c.softirq.h = c.softirq_proc.handle();
  c.softirq.remaining = 0;
  c.softirq.waiting = false;
  c.softirq.cls = CpuClass::kSoftirq;
  c.softirq_proc.handle().promise().on_done = [](void* p) {
    auto* a = static_cast<std::pair<Kernel*, Cpu*>*>(p);
    a->first->softirq_done(*a->second);
  };
  c.softirq_proc.handle().promise().on_done_arg = &softirq_done_args_[static_cast<std::size_t>(c.id)];
  arm_segment(c);
}

Proc<void> Kernel::softirq_body(Cpu& c) {
  co_await handle_softirqs(Ctx{c.id, nullptr, 1, CpuClass::kSoftirq}, false);
}

void Kernel::softirq_done(Cpu& c) {
  update_exec(c);
  c.softirq_active = false;
  c.softirq.h = nullptr;
  c.softirq_proc.reset();
  // A task waiting in local_bh_enable() continues.
  if (c.curr && c.curr->slot.waiting) c.curr->slot.waiting = false;
  dispatch(c);
}

Proc<void> Kernel::handle_softirqs(Ctx ctx, bool /*ksirqd*/) {
  Cpu& c = cpu(ctx.cpu);
  const std::int64_t end = jiffies() + msecs_to_jiffies(kMaxSoftirqTimeMs);
  int max_restart = kMaxSoftirqRestart;
  c.serving_softirq = true;
  for (;;) {
    const std::uint32_t pending = c.softirq_pending;
    c.softirq_pending = 0;
    co_await exec(ctx, costs_.softirq_entry_ns);
    if (pending & (1u << softirq_nr::kTimer)) co_await run_timer_softirq(ctx);
    if (pending & (1u << softirq_nr::kNetRx)) co_await net_rx_action(ctx);
    if (pending & (1u << softirq_nr::kTasklet)) co_await tcp_tasklet_func(ctx);
    if (c.softirq_pending == 0) break;
    if (jiffies() < end && !c.need_resched && --max_restart) continue;
    wakeup_softirqd(c);
    break;
  }
  c.serving_softirq = false;
}

Proc<void> Kernel::ksoftirqd_body(Task& t, Cpu& c) {
  for (;;) {
    while (c.softirq_pending == 0)
      co_await sleep_on(t, c.ksoftirqd_wq);
    // run_ksoftirqd(): softirq work charged to this task (irqtime_account_irq() exception).
    co_await handle_softirqs(Ctx{c.id, &t, 0, CpuClass::kKsoftirqd}, true);
    co_await cond_resched(t);
  }
}

bool Kernel::BhEnableAwait::await_ready() noexcept {
  Cpu& c = k.cpu(t.cpu);
  --t.bh_disable;
  // __local_bh_enable_ip() -> do_softirq(), which in 4.9-6.4 also skips the inline run while
  // ksoftirqd is runnable ("if (pending && !ksoftirqd_running()) do_softirq_own_stack()").
  return t.bh_disable > 0 || c.softirq_pending == 0 || c.hardirq_active || c.softirq_active ||
         ksoftirqd_defers(k.ksoftirqd_era(), c);
}

void Kernel::BhEnableAwait::await_suspend(std::coroutine_handle<> h) {
  Cpu& c = k.park(t, h, true);
  k.start_softirq(c);
  k.dispatch(c);
}

}  // namespace napisim
