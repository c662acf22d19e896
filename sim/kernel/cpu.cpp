// napisim: per-CPU execution contexts.
//
// Mirrors what the kernel's entry code and the scheduler core provide: hardirq > softirq > task
// priority, irq_exit() running softirqs, the return-to-task preemption point, time accounting by
// context (kernel/sched/cputime.c irqtime_account_irq(): interrupt time is not task time with
// CONFIG_IRQ_TIME_ACCOUNTING, except softirq work done by ksoftirqd), SMT siblings sharing a
// core's throughput, and the per-CPU call_single_queue (kernel/smp.c v6.6
// __smp_call_single_queue(), flush_smp_call_function_queue()) that carries wakelist wakeups and
// RPS calls, one IPI per empty-to-non-empty transition.
#include <algorithm>
#include <iterator>

#include "sim/kernel/kernel.hpp"
#include "sim/kernel/timeline.hpp"

namespace napisim {

const char* cpu_class_name(CpuClass c) {
  switch (c) {
    case CpuClass::kIdle:
      return "idle";
    case CpuClass::kHardirq:
      return "hardirq";
    case CpuClass::kSoftirq:
      return "softirq";
    case CpuClass::kKsoftirqd:
      return "ksoftirqd";
    case CpuClass::kKthread:
      return "kthread";
    case CpuClass::kUser:
      return "user";
    case CpuClass::kSystem:
      return "system";
    case CpuClass::kBusyPoll:
      return "busy_poll";
    case CpuClass::kBusySpin:
      return "busy_spin";
    case CpuClass::kCount:
      break;
  }
  return "?";
}

const char* wait_class_name(int i) {
  return i == kSelf ? "self" : cpu_class_name(static_cast<CpuClass>(i));
}

void Kernel::update_exec_slow(Cpu& c) {
  // One copy of the accounting with the trace's and the attribution's calls and one without: a
  // run without them pays no test for them on its busiest path.
  if (observed_) [[unlikely]]
    update_exec_observed(c);
  else
    update_exec_impl<false, false>(c);
}

void Kernel::update_exec_observed(Cpu& c) {
  if (stamps_) napi_wait_observe(c);
  if (trace_ && stamps_)
    update_exec_impl<true, true>(c);
  else if (trace_)
    update_exec_impl<true, false>(c);
  else
    update_exec_impl<false, true>(c);
}

namespace {
// The classes of a task's own time on its CPU (the rest is the CPU's idle time and interrupts).
bool own_class(CpuClass cls) {
  return cls != CpuClass::kIdle && cls != CpuClass::kHardirq && cls != CpuClass::kSoftirq;
}
}  // namespace

template <bool kTraced, bool kStamps>
void Kernel::account(Cpu& c, CpuClass cls, Nanos until) {
  c.time[static_cast<int>(cls)] += until - c.last_update;
  if constexpr (kStamps)
    if (c.curr && own_class(cls)) c.curr->own[static_cast<std::size_t>(cls)] += until - c.last_update;
  if constexpr (kTraced) trace_->cpu_time(trace_host_, c.id, cls, c.curr, c.last_update, until);
  c.last_update = until;
}

ClassTimes Kernel::cpu_times_at(const Cpu& c, Nanos t, ClassTimes* own) const {
  // update_exec_impl()'s walk over (last_update, t], without its effects.
  ClassTimes out{};
  for (int i = 0; i < kNumCpuClasses; ++i)
    out[static_cast<std::size_t>(i)] = c.time[static_cast<std::size_t>(i)];
  if (own) own->fill(0);
  Nanos at = c.last_update;
  auto add = [&](CpuClass cls, Nanos until) {
    out[static_cast<std::size_t>(cls)] += until - at;
    if (own && c.curr && own_class(cls)) (*own)[static_cast<std::size_t>(cls)] += until - at;
    at = until;
  };
  if (t <= at) return out;
  if (c.seg_start > at) add(CpuClass::kIdle, std::min(t, c.seg_start));
  CpuClass cls = c.acct_cls;
  const Nanos ran = t - c.seg_start;
  if (ran > 0) {
    int level;
    const Slot* s = top_slot(c, &level);
    const Nanos work = work_in(ran, c.speed_milli);
    if (!(level == 0 && c.switch_remaining > 0) && s && s->remaining > 0 && !s->waiting) {
      Nanos tail = s->tail;
      std::size_t part = s->part;
      while (tail > 0 && work >= s->remaining - tail) {
        const Nanos cross = c.seg_start + exec_ns(s->remaining - tail, c.speed_milli);
        if (cross > at) add(cls, cross);
        cls = s->next[part].cls;
        tail -= s->next[part++].cost;
      }
    }
  }
  if (t > at) add(cls, t);
  return out;
}

ClassTimes Kernel::task_view(const Task& t) const {
  const Cpu& c = cpu(t.cpu);
  ClassTimes pending{};
  ClassTimes v = t.view_acc + cpu_times_at(c, host_.now(), c.curr == &t ? &pending : nullptr) - t.view_base;
  const ClassTimes own = t.own + pending;
  v[kSelf] = 0;
  for (int i = 0; i < kNumCpuClasses; ++i) {
    v[static_cast<std::size_t>(i)] -= own[static_cast<std::size_t>(i)];
    v[kSelf] += own[static_cast<std::size_t>(i)];
  }
  return v;
}

template <bool kTraced, bool kStamps>
void Kernel::update_exec_impl(Cpu& c) {
  const Nanos now = host_.now();
  if (now <= c.last_update) return;
  if (c.seg_start > c.last_update) {
    // Leaving an idle state (idle_exit()): idle until the CPU executes again.
    account<kTraced, kStamps>(c, CpuClass::kIdle, std::min(now, c.seg_start));
  }
  // Work done by the running segment since it (re)started.
  const Nanos ran = now - c.seg_start;
  if (ran > 0) {
    int level;
    Slot* s = top_slot(c, &level);
    const Nanos work = work_in(ran, c.speed_milli);
    if (level == 0 && c.switch_remaining > 0) {
      c.switch_remaining = std::max<Nanos>(0, c.switch_remaining - work);
    } else if (s && s->remaining > 0 && !s->waiting) {
      // A chain's part boundaries passed since seg_start: the time up to each is its part's.
      while (s->tail > 0 && work >= s->remaining - s->tail) {
        const Nanos cross = c.seg_start + exec_ns(s->remaining - s->tail, c.speed_milli);
        if (cross > c.last_update) account<kTraced, kStamps>(c, c.acct_cls, cross);
        s->next_part();
        s->part_begun = cross;
        c.acct_cls = s->cls;
      }
      s->remaining = std::max<Nanos>(0, s->remaining - work);
    }
    if (level == 0 || (!kp_.irq_time_accounting && c.curr)) c.task_exec_accum += ran;
    c.seg_start = now;
  }
  account<kTraced, kStamps>(c, c.acct_cls, now);
}

Nanos Kernel::vary_cost(Cpu& c, Nanos cost) {
  if (!cost_factor_) return cost;
  const double f = cost_factor_->sample(c.cost_rng);
  return std::max<Nanos>(1, static_cast<Nanos>(static_cast<double>(cost) * f + 0.5));
}

void Kernel::exit_to_user_mode(Cpu& c, const Task& t) {
  // exit_to_user_mode_loop() (kernel/entry/common.c): _TIF_NEED_RESCHED -> schedule(), in every
  // preemption model.
  if (c.need_resched && c.curr == &t && !c.hardirq_active && !c.softirq_active) schedule(c);
}

void Kernel::begin_segment(const Ctx& ctx, std::coroutine_handle<> h, Nanos cost) {
  Cpu& c = cpu(ctx.task ? ctx.task->cpu : ctx.cpu);
  update_exec(c);
  cost = vary_cost(c, cost);
  Slot* s;
  // Whose working set the work touches (cache.cpp): a NAPI poll names its NAPI; other kernel work
  // in softirq context or a kthread goes on with the owner already running there (net_rx_action()
  // between polls, ksoftirqd's loop), a user task's syscalls with the task's own.
  CacheOwner* owner = ctx.owner;
  if (ctx.task) {
    s = &ctx.task->slot;
    if (!owner)
      owner =
          ctx.task->kind != TaskKind::kUser && c.curr == ctx.task && c.cache_owner ? c.cache_owner : &ctx.task->cache;
  } else if (ctx.level == 2) {
    s = &c.hardirq;
  } else {
    s = &c.softirq;
    if (!owner) owner = c.cache_owner ? c.cache_owner : &c.softirq_cache;
  }
  s->owner = owner;
  s->h = h;
  s->remaining = cost;
  s->clear_chain();
  s->cls = ctx.cls;
  s->waiting = false;
  if (ctx.task && ctx.cls == CpuClass::kUser) exit_to_user_mode(c, *ctx.task);
  dispatch(c);
}

void Kernel::begin_chain(Task& t, std::coroutine_handle<> h, const ExecPart (&parts)[Slot::kMaxNext + 1]) {
  Cpu& c = cpu(t.cpu);
  update_exec(c);
  Slot& s = t.slot;
  // The parts with work, in order, each with its own cost factor: the first runs now, the others
  // wait in s.next.
  const ExecPart* p = std::begin(parts);
  while (p != std::end(parts) && !p->has_work())
    ++p;
  NAPISIM_ASSERT(p != std::end(parts), "begin_chain(): no part has work (ChainAwait::await_ready() lets none through)");
  const ExecPart& head = *p;
  const Nanos first = vary_cost(c, head.cost);
  s.owner = &t.cache;
  s.tail = 0;
  std::size_t n = 0;
  for (++p; p != std::end(parts); ++p) {
    if (!p->has_work()) continue;
    const Nanos cost = vary_cost(c, p->cost);
    s.next[n++] = ExecPart{p->cls, cost, p->from_user};
    s.tail += cost;
  }
  s.h = h;
  s.remaining = first + s.tail;
  s.part = 0;
  s.cls = head.cls;
  s.part_from_user = head.from_user;
  s.part_begun = host_.now();
  s.waiting = false;
  if (head.preemption_point()) exit_to_user_mode(c, t);
  dispatch(c);
}

Cpu& Kernel::park(Task& t, std::coroutine_handle<> h, bool waiting) {
  Cpu& c = cpu(t.cpu);
  update_exec(c);
  t.slot.h = h;
  t.slot.remaining = 0;
  t.slot.clear_chain();
  t.slot.waiting = waiting;
  return c;
}

bool Kernel::can_preempt_now(const Cpu& c) const {
  if (!c.curr) return true;
  const Task& t = *c.curr;
  if (t.bh_disable > 0 || c.serving_softirq || t.spinning) return false;
  if (preempt_full_) return true;
  // voluntary/none: only user-mode code is preempted at interrupt return.
  return t.slot.cls == CpuClass::kUser && t.slot.remaining > 0;
}

void Kernel::dispatch(Cpu& c) {
  // A spinning busy poller checks need_resched itself (preemption is disabled while it spins).
  if (c.need_resched && c.curr && c.curr->spinning) spin_wake(*c.curr);
  // Preemption point: returning from interrupt levels to the task level (or idle).
  if (!c.hardirq_active && !c.softirq_active && c.need_resched && c.switch_remaining == 0 && can_preempt_now(c)) {
    schedule(c);
  }
  arm_segment(c);
}

void Kernel::arm_segment(Cpu& c) {
  int level;
  Slot* s = top_slot(c, &level);
  const Nanos now = host_.now();
  bool busy = true;
  CpuClass cls = CpuClass::kIdle;
  c.ready = false;
  c.part_stop = false;
  if (level == 0 && c.switch_remaining > 0) {
    if (c.cache_owner) cache_leave(c);
    cls = CpuClass::kSystem;
    c.seg_start = std::max(c.seg_start, now);
    rearm(c, c.seg_start + exec_ns(c.switch_remaining, c.speed_milli));
  } else if (s && s->remaining > 0 && !s->waiting) {
    if (kp_.cache_model && s->owner != c.cache_owner) cache_enter(c, *s);
    cls = s->cls;
    c.seg_start = std::max(c.seg_start, now);
    // While need_resched is set, a chain stops at its next part boundary: the preemption point
    // that exec() calls one after the other would have offered there.
    c.part_stop = s->tail > 0 && c.need_resched;
    const Nanos work = c.part_stop ? s->remaining - s->tail : s->remaining;
    rearm(c, c.seg_start + exec_ns(work, c.speed_milli));
  } else if (s && s->h && !s->waiting) {
    // Ready to be resumed now: inside an event handler for c, run_ready() resumes it directly;
    // otherwise (a wakeup initiated from another CPU) a timer at now does.
    cls = s->cls;
    c.ready = true;
    c.seg_start = std::max(c.seg_start, now);
    if (handler_cpu_ == c.id && c.seg_start == now) {
      c.seg_timer.cancel();
    } else {
      rearm(c, c.seg_start);
    }
  } else {
    busy = s != nullptr;  // a waiting slot still occupies the CPU (e.g. spinning), idle otherwise
    if (!busy && c.cache_owner) cache_leave(c);
    if (s) cls = s->cls;
    c.seg_timer.cancel();
  }
  c.acct_cls = cls;
  if (c.busy != busy) set_smt_busy(c, busy);
}

void Kernel::rearm(Cpu& c, Nanos at) {
  // Re-arming at the same expiry would only leave a stale event in the heap.
  if (c.seg_timer.armed() && c.seg_timer.expires() == at) return;
  c.seg_timer.arm(host_.queue(), at, Prio::kCpu, this, kSegDone, static_cast<std::uint64_t>(c.id));
}

void Kernel::set_smt_busy(Cpu& c, bool busy) {
  if (c.busy == busy) return;
  c.busy = busy;
  const int sib = topo_.sibling_of(c.id);
  if (sib < 0) return;
  Cpu& s = cpu(sib);
  const int speed = busy ? smt_speed_milli_ : 1000;
  // This CPU's own speed also depends on the sibling.
  c.speed_milli = s.busy ? smt_speed_milli_ : 1000;
  if (s.speed_milli == speed) return;
  // A busy sibling's work so far was done at its old speed: settle it, then re-time its segment.
  // An idle one (no segment, timer cancelled, idle time accounted whenever it is next updated)
  // only takes the new speed for its next segment.
  if (s.busy) update_exec(s);
  s.speed_milli = speed;
  if (s.seg_timer.armed()) arm_segment(s);
}

void Kernel::run_ready(Cpu& c) {
  while (c.ready && c.seg_start <= host_.now()) {
    int level;
    Slot* s = top_slot(c, &level);
    if (!s || !s->h || s->waiting || s->remaining > 0 || (level == 0 && c.switch_remaining > 0)) {
      c.ready = false;
      break;
    }
    c.ready = false;
    if (c.seg_timer.armed() && c.seg_timer.expires() <= host_.now()) c.seg_timer.cancel();
    resume_slot(c, level, *s);
    // The coroutine suspended again (exec, sleep) or ended, or the task slept again in ep_poll();
    // each path re-armed c. A coroutine that suspended without re-arming leaves c idle.
  }
}

void Kernel::raise_irq(int cpu_id, std::uint64_t code, Nanos at) {
  host_.queue().push(at, Prio::kHardirq, this, kIrq, code | (static_cast<std::uint64_t>(cpu_id) << 48));
}

void Kernel::start_hardirq(Cpu& c, std::uint64_t code) {
  update_exec(c);
  if (trace_) [[unlikely]] {
    // irq_handler_entry, by vector; a "polled" one is run from the polling idle loop, no interrupt.
    static constexpr const char* kNames[] = {"irq",      "irq:nic", "ipi:resched", "ipi:wake", "irq:napi_timer",
                                             "irq:tick", "ipi:rps", "irq:hrtimer"};
    const std::uint64_t type = (code >> 40) & 0xff;
    const char* name = type < std::size(kNames) ? kNames[type] : "irq";
    trace_->irq(trace_host_, c.id, (code & kIrqPolled) ? "ipi:polled" : name, host_.now());
  }
  ++c.irqs;
  c.hardirq_active = true;
  c.hardirq_proc = hardirq_body(c, code);
  c.hardirq.h = c.hardirq_proc.handle();
  c.hardirq.remaining = 0;
  c.hardirq.waiting = false;
  c.hardirq.cls = CpuClass::kHardirq;
  auto done = [](void* p) {
    auto* pair = static_cast<std::pair<Kernel*, Cpu*>*>(p);
    pair->first->hardirq_done(*pair->second);
  };
  // The on_done argument must outlive the coroutine: keep it in a per-CPU static-lifetime slot.
  static_assert(sizeof(std::pair<Kernel*, Cpu*>) <= 16);
  c.hardirq_proc.handle().promise().on_done = done;
  c.hardirq_proc.handle().promise().on_done_arg = &irq_done_args_[static_cast<std::size_t>(c.id)];
  arm_segment(c);
}

Proc<void> Kernel::hardirq_body(Cpu& c, std::uint64_t code) {
  const auto type = static_cast<IrqType>((code >> 40) & 0xff);
  Nanos cost = costs_.hardirq_ns;
  // Every IPI is one vector's entry, handler and exit (sysvec_call_function_single, or
  // sysvec_reschedule_ipi): the RPS call and the wakeups it flushes cost no more than the IPI.
  if (is_ipi(type)) cost = costs_.ipi_handler_ns;
  if (type == kIrqTick) cost = costs_.tick_ns;
  co_await exec(Ctx{c.id, nullptr, 2, CpuClass::kHardirq}, cost);
  handle_irq(c, code);
}

void Kernel::hardirq_done(Cpu& c) {
  // Called from the hardirq coroutine's final suspension: destroying it here is safe.
  update_exec(c);
  c.hardirq_active = false;
  c.hardirq.h = nullptr;
  c.hardirq_proc.reset();
  if (!c.pending_irqs.empty()) {
    const std::uint64_t code = c.pending_irqs.front();
    c.pending_irqs.pop_front();
    start_hardirq(c, code);
    return;
  }
  irq_exit(c);
  dispatch(c);
}

void Kernel::on_event(std::uint32_t kind, std::uint64_t arg) {
  ++events_;
  switch (kind) {
    case kSegDone: {
      Cpu& c = cpu(static_cast<int>(arg));
      c.seg_timer.fired();
      handler_cpu_ = c.id;
      const bool part_stop = c.part_stop;
      c.part_stop = false;
      update_exec(c);
      int level;
      Slot* s = top_slot(c, &level);
      if (level == 0 && c.switch_remaining > 0) {
        c.switch_remaining = 0;
        arm_segment(c);
      } else if (part_stop && s && s->remaining > 0 && !s->waiting) {
        // A chain's part boundary, stopped at because need_resched is set: the checks
        // begin_segment() makes for a new segment of the next part's class.
        if (level == 0 && (s->cls == CpuClass::kUser || s->part_from_user)) exit_to_user_mode(c, *c.curr);
        dispatch(c);
      } else if (s && s->h && !s->waiting) {
        // What arm_segment() and run_ready() do for a slot whose segment just ended, without their
        // checks (all hold: the slot has a coroutine, no switch is pending, the timer has fired):
        // it resumes now, on the same class, and the CPU stays busy (update_exec() brought
        // seg_start up to now).
        s->remaining = 0;
        c.ready = false;
        c.seg_start = host_.now();
        c.acct_cls = s->cls;
        if (!c.busy) set_smt_busy(c, true);
        resume_slot(c, level, *s);
      } else {
        if (s) {
          s->remaining = 0;
          s->clear_chain();
        }
        arm_segment(c);  // marks the top slot ready
      }
      run_ready(c);
      handler_cpu_ = -1;
      break;
    }
    case kIrq: {
      Cpu& c = cpu(static_cast<int>(arg >> 48));
      const std::uint64_t code = arg & ((1ULL << 48) - 1);
      if (in_idle_loop(c)) idle_exit(c);  // the handler runs once the CPU has left its idle state
      if (c.hardirq_active) {
        c.pending_irqs.push_back(code);
        break;
      }
      handler_cpu_ = c.id;
      start_hardirq(c, code);
      run_ready(c);
      handler_cpu_ = -1;
      break;
    }
    case kCoalTimer: {
      Channel& ch = channel_of(arg);
      ch.coal_timer.fired();
      if (ch.irq_armed) {
        if (ch.cq_mode != Channel::kArrival)
          nic_coal_check(ch);  // a CQE-mode deadline may have moved later
        else
          nic_fire_irq(ch);
      }
      break;
    }
    case kNapiTimer: {
      Napi& n = *napis_[arg];
      n.timer.fired();
      ++n.timer_fires;
      // hrtimer interrupt on the CPU that armed it (HRTIMER_MODE_REL_PINNED).
      raise_irq(n.timer_cpu, irq_code(kIrqNapiTimer, arg), host_.now());
      break;
    }
    case kTickTimer: {
      Cpu& c = cpu(static_cast<int>(arg));
      c.tick_timer.fired();
      if (c.curr || nr_running_of(c) > 0) {
        raise_irq(c.id, irq_code(kIrqTick, 0), host_.now());
        c.tick_timer.arm(host_.queue(), host_.now() + tick_ns_, Prio::kTimer, this, kTickTimer, arg);
      }
      break;
    }
    case kSpinDeadline:
      spin_wake(*tasks_[arg]);
      break;
    case kSleepTimer: {
      // The local APIC timer interrupt on the CPU the sleeper armed its hrtimer on.
      Task& t = *tasks_[arg];
      t.sleep_timer.fired();
      raise_irq(t.cpu, irq_code(kIrqHrtimerSleeper, arg), host_.now());
      break;
    }
    case kRxArrive:
      rx_sync(channel_of(arg));
      break;
    case kTcpTimer:
      tcp_timer_event(arg);
      break;
    case kTxDone: {
      Channel& ch = channel_of(arg);
      ch.tx_event = false;
      const std::int64_t n = tx_collect(ch);
      if (n > 0) nic_completion(ch, n, true);
      tx_schedule_event(ch);
      break;
    }
    default:
      NAPISIM_ASSERT(false, "unknown kernel event");
  }
}

void Kernel::smp_call_single_queue(int target, Task* task) {
  Cpu& c = cpu(target);
  if (!task && c.csq_rps) return;  // smp_call_function_single_async(): -EBUSY while the csd is pending
  // llist_add() returns whether the list was empty: only then is the IPI sent (the queue is
  // emptied only by the flush that IPI runs, so a non-empty queue has one on its way).
  const bool was_empty = !c.csq_head && !c.csq_rps;
  if (task) {
    task->wake_entry = nullptr;
    (c.csq_tail ? c.csq_tail->wake_entry : c.csq_head) = task;
    c.csq_tail = task;
  } else {
    c.csq_rps = true;
  }
  // The IPI's type follows the call that sent it.
  if (was_empty) send_call_function_single_ipi(target, irq_code(task ? kIrqIpiWake : kIrqIpiRps, 0));
}

void Kernel::flush_smp_call_function_queue(Cpu& c) {
  // Calls queued until the handler runs are flushed with it (the kernel's llist_del_all() takes
  // them at the handler's start, and a later one sends its own IPI).
  if (c.csq_rps) {
    // rps_trigger_softirq(): ____napi_schedule(sd, &sd->backlog) (SCHED taken by the enqueuer).
    c.csq_rps = false;
    ++c.sd.received_rps;
    napi_schedule_local(c, c.sd.backlog);
  }
  // sched_ttwu_pending(): enqueue each queued wakeup on this CPU.
  Task* t = c.csq_head;
  c.csq_head = c.csq_tail = nullptr;
  while (t) {
    Task* next = t->wake_entry;
    --c.ttwu_pending;
    ttwu_avg_idle(c);
    enqueue_task(c, *t, t->wake_flags);
    check_preempt(c, *t, c.id);
    t = next;
  }
}

void Kernel::send_call_function_single_ipi(int target, std::uint64_t code) {
  if (!wake_polling_idle(cpu(target), code)) send_ipi(target, code);
}

bool Kernel::wake_polling_idle(Cpu& c, std::uint64_t code) {
  if (!kp_.idle_polling || !in_idle_loop(c)) return false;
  // set_nr_if_polling() / set_nr_and_not_polling() (kernel/sched/core.c v6.6): the idle task polls
  // its thread flags (mwait_idle_with_hints() monitors them, cpu_idle_poll() spins on them), so
  // setting TIF_NEED_RESCHED wakes it and no IPI is sent (trace_sched_wake_idle_without_ipi).
  // do_idle() then leaves its need_resched() loop: flush_smp_call_function_queue() runs the queued
  // call (sched_ttwu_pending(), rps_trigger_softirq()) and do_softirq() if it raised one;
  // schedule_idle() follows.
  ++c.polled_wakeups;
  idle_exit(c);
  c.need_resched = true;
  handle_irq(c, code | kIrqPolled);
  do_softirq(c);
  dispatch(c);
  return true;
}

void Kernel::idle_exit(Cpu& c) {
  // The wake source's work is queued at once (the wakee is on the runqueue, the CPU is no longer
  // idle_cpu()); the CPU executes it after the idle state's exit latency, idle until then.
  update_exec(c);
  c.seg_start = std::max(c.seg_start, host_.now() + costs_.cstate_exit_ns);
}

void Kernel::handle_irq(Cpu& c, std::uint64_t code) {
  const auto type = static_cast<IrqType>((code >> 40) & 0xff);
  const std::uint64_t arg = code & kIrqArgMask;
  if (!(code & kIrqPolled) && is_ipi(type)) ++c.ipis;
  switch (type) {
    case kIrqNic: {
      // mlx5e_completion_event(): napi_schedule(&c->napi); the CQ stays disarmed until re-armed.
      napi_schedule(c, channel_of(arg).napi);
      break;
    }
    case kIrqIpiResched:
      c.need_resched = true;  // scheduler_ipi(): the resched flag was set by the sender
      break;
    case kIrqIpiWake:
    case kIrqIpiRps:
      flush_smp_call_function_queue(c);
      break;
    case kIrqIpiNohz:
      nohz_idle_balance(c);  // nohz_csd_func() -> SCHED_SOFTIRQ
      break;
    case kIrqNapiTimer:
      napi_watchdog(c, *napis_[arg]);
      break;
    case kIrqTick:
      scheduler_tick(c);
      // run_local_timers(): timer wheel timers expired at this jiffy run in TIMER_SOFTIRQ.
      if (tcp_timers_due(c.id)) raise_softirq_irqoff(c, softirq_nr::kTimer);
      break;
    case kIrqTimer:
      raise_softirq_irqoff(c, softirq_nr::kTimer);
      break;
    case kIrqHrtimerSleeper:
      // hrtimer_wakeup() -> wake_up_process(): the timed-out sleeper is woken from this CPU.
      try_to_wake_up(*tasks_[arg], c.id);
      break;
  }
}

}  // namespace napisim
