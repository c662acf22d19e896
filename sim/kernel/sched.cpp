// napisim: scheduler core glue (kernel/sched/core.c + fair.c + rt.c + psi.c).
//
// try_to_wake_up() (select_task_rq, ttwu_queue_wakelist IPIs, enqueue, check_preempt_curr),
// __schedule() (put_prev / pick_next_task across the RT and fair classes, context-switch cost),
// scheduler_tick(), PELT utilization for SIS_UTIL (pelt.hpp), newidle, periodic and nohz idle
// balancing within an LLC (load_balance() reduced to pulling one runnable, cache-cold task from
// the busiest CPU, and the active balance of a reduced-capacity CPU's lone task, v6.0+'s misfit
// and v5.10's through SMT-core groups, voluntary or after nr_balance_failed passes
// cache_nice_tries + 2: scale_rt_capacity(), update_irq_load_avg(), update_sg_lb_stats(),
// voluntary_active_balance(), need_active_balance(), active_load_balance_cpu_stop();
// docs/kernel-napi.md 9.6.1), and PSI
// "cpu some" (psi.c test_state: SOME = tasks[NR_RUNNING] > oncpu). Kernel version mirrored: v6.6.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "sim/kernel/kernel.hpp"
#include "sim/kernel/timeline.hpp"

namespace napisim {

namespace {
// check_cpu_capacity() (fair.c v5.10, v6.6): RT and IRQ time have cut the CPU's capacity by more
// than the domain's imbalance_pct allows (capacity_orig is 1024 on every napisim CPU).
bool check_cpu_capacity(const Cpu& c, std::int64_t imbalance_pct) {
  return c.cpu_capacity * imbalance_pct < kSchedCapacityScale * 100;
}
}  // namespace

Task& Kernel::create_task(const std::string& name, TaskKind kind, const CpuMask& allowed, SchedPolicy policy, int nice,
                          int rt_priority) {
  auto t = std::make_unique<Task>();
  t->id = static_cast<int>(tasks_.size());
  t->name = name;
  t->kind = kind;
  t->allowed = allowed;
  // is_per_cpu_kthread(): PF_KTHREAD and nr_cpus_allowed == 1 (select_idle_sibling() uses it).
  t->per_cpu_kthread = kind != TaskKind::kUser && allowed.single();
  t->se.owner = t.get();
  set_sched_attr(t->se, policy, nice, rt_priority);
  t->wakee.allowed = &t->allowed;
  t->cpu = allowed.first();
  t->wakee.prev_cpu = t->cpu;
  task_done_args_.push_back({this, t.get()});
  tasks_.push_back(std::move(t));
  return *tasks_.back();
}

void Kernel::kthread_init(Task& t, CpuClass cls) {
  t.slot.h = t.body.handle();
  t.slot.active = true;
  t.slot.cls = cls;
  t.state = TaskState::kSleeping;
}

void Kernel::set_cpus_allowed_ptr(Task& t, const CpuMask& allowed) {
  t.allowed = allowed;
  t.per_cpu_kthread = t.kind != TaskKind::kUser && allowed.single();
  if (t.state == TaskState::kSleeping && !allowed.test(t.cpu)) t.cpu = allowed.first();
}

void Kernel::start_task(Task& t, int cpu_id) {
  NAPISIM_ASSERT(t.body.handle(), "start_task() needs a body");
  t.slot.h = t.body.handle();
  t.slot.active = true;
  t.slot.remaining = 0;
  t.slot.clear_chain();
  t.slot.cls = t.kind == TaskKind::kUser ? CpuClass::kUser : CpuClass::kKthread;
  t.body.handle().promise().on_done = [](void* p) {
    auto* a = static_cast<std::pair<Kernel*, Task*>*>(p);
    a->first->task_exit(*a->second);
  };
  t.body.handle().promise().on_done_arg = &task_done_args_[static_cast<std::size_t>(t.id)];
  set_task_cpu(t, cpu_id >= 0 ? cpu_id : t.allowed.first());
  t.wakee.prev_cpu = t.cpu;
  // wake_up_new_task(): "p->recent_used_cpu = task_cpu(p)", the parent's cpu; here the cpu the
  // task starts on. Only v5.10's placement keeps it past the first wakeup (v6.6 overwrites it
  // with prev there), so v6.6 runs leave it unset.
  if (wake_params_.v5_10) t.wakee.recent_used_cpu = t.cpu;
  t.state = TaskState::kRunnable;
  if (trace_) [[unlikely]]
    trace_->task_state(trace_host_, t, t.state, t.cpu, host_.now());
  Cpu& c = cpu(t.cpu);
  update_exec(c);
  enqueue_task(c, t, enqueue_flags::kInitial);
  if (!c.curr)
    c.need_resched = true;
  else
    check_preempt(c, t, c.id);
  dispatch(c);
}

void Kernel::fold_task_view(Task& t, int cpu_id) {
  if (t.cpu >= 0) t.view_acc = t.view_acc + cpu_times_at(cpu(t.cpu), host_.now()) - t.view_base;
  t.view_base = cpu_times_at(cpu(cpu_id), host_.now());
}

void Kernel::task_exit(Task& t) {
  Cpu& c = cpu(t.cpu);
  update_exec(c);
  charge_curr(c);
  t.slot.active = false;
  t.slot.h = nullptr;
  t.state = TaskState::kDead;
  dequeue_task(c, t, dequeue_flags::kSleep);
  schedule(c);
  dispatch(c);
}

void Kernel::set_task_nice(Task& t, int nice) {
  if (is_rt_policy(t.se.policy)) return;
  if (t.se.on_rq || cpu(t.cpu).cfs->curr() == &t.se) {
    cpu(t.cpu).cfs->set_nice(t.se, nice);
  } else {
    set_sched_attr(t.se, t.se.policy, nice, t.se.rt_priority);
  }
}

void Kernel::enqueue_task(Cpu& c, Task& t, unsigned flags) {
  // enqueue_entity() calls update_curr() before place_entity(): the placement reads V (EEVDF) or
  // min_vruntime (CFS), which must include the running task's time up to now.
  update_exec(c);
  charge_curr(c);
  if (is_rt_policy(t.se.policy))
    c.rt->enqueue(t.se);
  else
    c.cfs->enqueue(t.se, flags);
  update_nr_running(c);
  set_task_cpu(t, c.id);
  psi_update(c);
  ensure_tick(c);
}

void Kernel::dequeue_task(Cpu& c, Task& t, unsigned flags) {
  // dequeue_entity() calls update_curr() first: the saved vlag = V - v must see curr's time.
  update_exec(c);
  charge_curr(c);
  if (!t.se.on_rq) return;
  if (is_rt_policy(t.se.policy))
    c.rt->dequeue(t.se);
  else
    c.cfs->dequeue(t.se, flags);
  update_nr_running(c);
  psi_update(c);
}

void Kernel::update_nr_running(Cpu& c) {
  const int prev_nr = c.nr_running;
  c.nr_running = c.cfs->nr_running() + c.rt->nr_running();
  // add_nr_running() sets rd->overload when a cpu reaches two runnable tasks; the kernel clears it
  // at the next load balance that finds none (update_sd_lb_stats()), napisim as the cpu drops
  // below two. The set of such cpus lets load_balance() look at them alone.
  if ((prev_nr >= 2) == (c.nr_running >= 2)) return;
  if (c.nr_running >= 2)
    overloaded_.set(c.id);
  else
    overloaded_.clear(c.id);
}

bool Kernel::charge_curr(Cpu& c) {
  const Nanos d = c.task_exec_accum;
  c.task_exec_accum = 0;
  if (!c.curr || d <= 0) return false;
  c.curr->exec_ns += d;
  if (is_rt_policy(c.curr->se.policy)) {
    c.rt->update_curr(d);
    return false;
  }
  if (c.cfs->curr() != &c.curr->se) return false;
  const bool expired = c.cfs->update_curr(d);
  if (expired) c.need_resched = true;
  return expired;
}

int Kernel::select_task_rq(Task& t, int this_cpu, bool sync) {
  // core.c select_task_rq()'s nr_cpus_allowed == 1 rule is select_task_rq_fair()'s first test
  // (wake.cpp); for an RT task the rule below already gives that one CPU.
  if (is_rt_policy(t.se.policy)) {
    // select_task_rq_rt(): stay on the previous CPU unless an RT task of higher or equal priority
    // (or one that cannot move) runs there; then take find_lowest_rq()'s CPU if it runs nothing
    // more important than t.
    int c = t.allowed.test(t.cpu) ? t.cpu : t.allowed.first();
    const Task* curr = cpu(c).curr;
    if (curr && is_rt_policy(curr->se.policy) &&
        (curr->allowed.count() < 2 || curr->se.rt_priority >= t.se.rt_priority)) {
      const int target = find_lowest_rq(t, this_cpu);
      if (target >= 0 && t.se.rt_priority > cpu(target).rt->highest_priority()) c = target;
    }
    return c;
  }
  t.wakee.prev_cpu = t.cpu;
  Cpu& w = cpu(this_cpu);
  WakeeInfo* waker = w.curr ? &w.curr->wakee : nullptr;
  // is_per_cpu_kthread(current) && in_task(): in_task() since 8b4e74ccb582 (v5.17, stable
  // 5.10.94, 2022); the CFS kernels (v5.10 as released, 2020) stack a wakee on a per-CPU
  // kthread's CPU from any context, ksoftirqd's NET_RX included.
  const bool waker_kthread =
      w.curr && w.curr->per_cpu_kthread && (wake_params_.v5_10 || (!w.serving_softirq && !w.hardirq_active));
  // select_task_rq_fair(): sync = (wake_flags & WF_SYNC) && !(current->flags & PF_EXITING); no
  // task exits while it wakes another here.
  return select_task_rq_fair(topo_, *this, wake_params_, t.wakee, this_cpu, waker, sync, waker_kthread, host_.now());
}

bool Kernel::wake_up(WaitQueue& wq, int this_cpu, bool sync) {
  Task* t = wq.waiter;
  if (!t) return false;
  return try_to_wake_up(*t, this_cpu, sync);
}

bool Kernel::try_to_wake_up(Task& t, int this_cpu, bool sync) {
  if (t.state != TaskState::kSleeping) return false;
  if (t.waiting_on) {
    t.waiting_on->waiter = nullptr;
    t.waiting_on = nullptr;
  }
  const int target = select_task_rq(t, this_cpu, sync);
  unsigned flags = enqueue_flags::kWakeup;
  if (target != t.cpu) {
    cpu(t.cpu).cfs->detach_sleeping(t.se);
    flags |= enqueue_flags::kMigrated;
    ++t.migrations;
    ++t.wakeups_migrate;  // ttwu_stat(): WF_MIGRATED
    set_task_cpu(t, target);
  }
  t.state = TaskState::kRunnable;
  if (stamps_) t.wake_ran_at = -1;
  if (trace_) [[unlikely]]
    trace_->task_state(trace_host_, t, t.state, target, host_.now());
  Cpu& dst = cpu(target);
  // ttwu_stat(): where the wakeup put the task, seen from the waking CPU.
  ++t.wakeups;
  if (target == this_cpu) ++t.wakeups_local;
  if (sync) ++t.wakeups_sync;
  if (dst.serving_softirq || (dst.curr && dst.curr->kind != TaskKind::kUser)) ++t.wakeups_onto_softirq;
  if (target != this_cpu && ttwu_queue_wakelist(topo_, *this, wake_params_, &t.allowed, target, this_cpu)) {
    // __ttwu_queue_wakelist(): the target enqueues it from its IPI handler.
    t.wake_flags = flags;
    ++dst.ttwu_pending;
    smp_call_single_queue(target, &t);
    return true;
  }
  update_exec(dst);
  const bool flagged = dst.need_resched;
  ttwu_avg_idle(dst);
  enqueue_task(dst, t, flags);
  if (!flagged && dst.need_resched) {
    // enqueue_entity()'s update_curr() found the running task's slice used up: update_deadline()'s
    // resched_curr() interrupts a remote CPU now (IPI), not at its next tick.
    dst.need_resched = false;
    resched_curr(dst, this_cpu);
  }
  check_preempt(dst, t, this_cpu);
  // A remote target acts on need_resched only when the resched IPI that resched_curr() sent
  // arrives (scheduler_ipi()); re-evaluating it here would preempt the remote task at once.
  return true;
}

void Kernel::check_preempt(Cpu& c, Task& t, int this_cpu) {
  if (!c.curr) {
    resched_curr(c, this_cpu);
    return;
  }
  const bool rt_t = is_rt_policy(t.se.policy);
  const bool rt_curr = is_rt_policy(c.curr->se.policy);
  if (rt_t) {
    if (!rt_curr || c.rt->wakeup_preempt(t.se)) resched_curr(c, this_cpu);
    return;
  }
  if (rt_curr || c.need_resched) return;
  update_exec(c);
  charge_curr(c);
  if (c.need_resched || c.cfs->wakeup_preempt(t.se)) {
    c.need_resched = false;
    resched_curr(c, this_cpu);
  }
}

void Kernel::resched_curr(Cpu& c, int this_cpu) {
  if (c.need_resched) return;
  c.need_resched = true;
  if (c.id == this_cpu) return;  // acted on at this CPU's next preemption point
  // set_nr_and_not_polling(): a polling idle CPU sees the flag without an interrupt; otherwise
  // smp_send_reschedule(), and the target acts on it at the IPI's return.
  if (wake_polling_idle(c, irq_code(kIrqIpiResched, 0))) return;
  send_ipi(c.id, irq_code(kIrqIpiResched, 0));
}

Task* Kernel::pick_next_task(Cpu& c) {
  if (c.rt->nr_running() > 0) {
    if (c.cfs->curr()) c.cfs->put_prev();
    SchedEntity* se = c.rt->pick_next_task();
    return se ? static_cast<Task*>(se->owner) : nullptr;
  }
  if (c.rt->curr()) c.rt->put_prev();
  SchedEntity* se = c.cfs->pick_next_task();
  return se ? static_cast<Task*>(se->owner) : nullptr;
}

void Kernel::schedule(Cpu& c) {
  update_exec(c);
  Task* prev = c.curr;
  bool preempted = false;
  if (prev) {
    charge_curr(c);
    if (prev->state == TaskState::kRunning) {
      prev->state = TaskState::kRunnable;
      preempted = true;
    }
    prev->last_ran = host_.now();
  }
  c.need_resched = false;
  if (c.push_cpu >= 0) [[unlikely]]
    active_load_balance_cpu_stop(c, preempted ? prev : nullptr);
  Task* next = pick_next_task(c);
  if (!next) {
    // newidle_balance() (fair.c v6.6) stamps the idle spell before it balances; a pulled task
    // ends it. v5.10's first test there, "this_rq->avg_idle < sysctl_sched_migration_cost -> goto
    // out", is left out: without the SMT domain's 2 ms balance, busy CPUs' own balancing and active
    // balance, the tasks it leaves queued behind a busy kthread wait for CFS's slice
    // (docs/kernel-napi.md 9.6.1).
    c.idle_stamp = host_.now();
    if (kp_.sched.newidle_balance && load_balance(c, true)) {
      next = pick_next_task(c);
      c.idle_stamp = -1;
    }
  }
  if (next != prev) {
    ++c.ctx_switches;
    if (preempted) ++prev->nivcsw;  // __schedule(): ++*switch_count only if prev != next
    if (next)
      c.switch_remaining = costs_.ctx_switch_ns;
    else
      c.switch_remaining = 0;
  }
  c.curr = next;
  if (next) {
    next->state = TaskState::kRunning;
    set_task_cpu(*next, c.id);
    if (stamps_ && next->wake_ran_at < 0) {
      next->wake_ran_at = host_.now();
      if (next->kind == TaskKind::kUser) next->view_at_run = task_view(*next);  // the sockets' readers
    }
    ensure_tick(c);
  }
  if (trace_) [[unlikely]] {
    // sched_switch: prev leaves running (runnable if preempted), next runs here.
    if (prev && prev != next) trace_->task_state(trace_host_, *prev, prev->state, c.id, host_.now());
    if (next) trace_->task_state(trace_host_, *next, TaskState::kRunning, c.id, host_.now());
  }
  util_update(c);
  psi_update(c);
}

void Kernel::ensure_tick(Cpu& c) {
  if (c.tick_timer.armed()) return;
  const Nanos next = (host_.now() / tick_ns_ + 1) * tick_ns_;
  c.tick_timer.arm(host_.queue(), next, Prio::kTimer, this, kTickTimer, static_cast<std::uint64_t>(c.id));
}

void Kernel::scheduler_tick(Cpu& c) {
  update_exec(c);
  charge_curr(c);
  if (c.curr) {
    const bool resched = is_rt_policy(c.curr->se.policy) ? c.rt->tick() : c.cfs->tick();
    if (resched) c.need_resched = true;
  }
  // update_rq_clock() -> update_irq_load_avg() and the RT average at every tick; the kernel keeps
  // rq->cpu_capacity from the CPU's last balance, napisim from its last tick (the same 32 ms PELT
  // signals, read at most a jiffy later).
  if (kp_.sched.capacity_pressure) update_cpu_capacity(c);
  // trigger_load_balance(): this CPU's own balance when due (run_rebalance_domains()), and the kick
  // that balances the tickless idle CPUs.
  rebalance_domains(c, c.id);
  nohz_balancer_kick(c);
}

// rebalance_domains() (fair.c v6.6) for `c`, run on `this_cpu` (c itself at its tick, the idle
// balancer for a tickless idle CPU): napisim's one LLC domain is balanced every
// balance_interval_ms. load_balance() -> update_sd_lb_stats() -> update_idle_cpu_scan() writes
// the LLC's SIS_UTIL scan depth; only an idle CPU pulls (a busy one's pull would need the busy
// interval and active balance, not modelled), and attach_task() -> check_preempt_curr() then
// preempts its idle task.
void Kernel::rebalance_domains(Cpu& c, int this_cpu) {
  if (host_.now() - c.last_balance < balance_interval_ns()) return;
  c.last_balance = host_.now();
  const int llc = topo_.llc_of(c.id);
  llc_nr_idle_scan_[static_cast<std::size_t>(llc)] = nr_idle_scan(topo_, *this, wake_params_.imbalance_pct, llc);
  if (nr_running_of(c) == 0 && load_balance(c, false)) resched_curr(c, this_cpu);
}

// nohz_balancer_kick() (kernel/sched/fair.c v6.6; v5.10's conditions are the same for a machine
// without asymmetric capacity): idle CPUs stop their tick, so none of them balances itself; a
// busy CPU's tick kicks one of them to balance them all once the earliest of their balances is
// due, when this CPU has a task waiting (nr_running >= 2) or another CPU of its LLC is busy
// (sds->nr_busy_cpus > 1). kick_ilb() puts the next kick a jiffy later, find_new_ilb() takes the
// first idle CPU, and a kick already on its way (NOHZ_KICK_MASK set) is not sent twice.
void Kernel::nohz_balancer_kick(Cpu& c) {
  if (!kp_.sched.nohz_idle_balance || host_.now() < nohz_next_balance_) return;
  bool kick = nr_running_of(c) >= 2;
  // "If there's a CFS task and the current CPU has reduced capacity; kick the ILB to see if
  // there's a better CPU to run on" (check_cpu_capacity() on rq->sd, the SMT domain if any; v5.10
  // and v6.6).
  if (!kick && kp_.sched.capacity_pressure)
    kick = c.cfs->nr_running() >= 1 &&
           check_cpu_capacity(c, topo_.smt_active() ? wake_params_.smt_imbalance_pct : wake_params_.imbalance_pct);
  if (!kick) {
    const CpuMask& llc = topo_.llc_mask(topo_.llc_of(c.id));
    for (int i = llc.first(); i >= 0 && !kick; i = llc.next(i))
      kick = i != c.id && !idle_cpu(i);
  }
  if (!kick) return;
  nohz_next_balance_ = (jiffies() + 1) * tick_ns_;  // kick_ilb(): "nohz.next_balance = jiffies+1"
  for (int i = 0; i < topo_.nr_cpus(); ++i) {
    if (i == c.id || !idle_cpu(i)) continue;
    Cpu& ilb = cpu(i);
    if (ilb.nohz_kick_pending) return;
    ilb.nohz_kick_pending = true;
    // v5.8+ (b2a02fc43a1f): smp_call_function_single_async(), which on a CPU polling in idle sets
    // TIF_NEED_RESCHED instead of sending the IPI, and nohz_csd_func() then sees need_resched()
    // and skips the balance (until ea9cffc0a154, v6.13, in the 6.6.y and 6.1.y stable kernels
    // from Dec 2024): v6.6 as released, the EEVDF rows' 2024 kernels. The CFS rows' 2020 kernels
    // kick with smp_send_reschedule() (kick_ilb(), v5.4-v5.7), an IPI in every idle state, and
    // scheduler_ipi() balances when got_nohz_idle_kick() finds the CPU idle without need_resched().
    if (wake_params_.v5_10)
      send_ipi(i, irq_code(kIrqIpiNohz, 0));
    else
      send_call_function_single_ipi(i, irq_code(kIrqIpiNohz, 0));
    return;
  }
}

// nohz_csd_func() (v6.6; scheduler_ipi() before v5.8) raises SCHED_SOFTIRQ on the kicked CPU if it
// is still idle without need_resched() (set by a polled kick since v5.8: nohz_balancer_kick()); its
// run_rebalance_domains() -> nohz_idle_balance() -> _nohz_idle_balance() (v6.6) walks the idle
// CPUs in order, balancing each whose rq->next_balance is due (rebalance_domains(rq, CPU_IDLE)),
// itself last, and stops as soon as it has work of its own (need_resched()). nohz.next_balance
// becomes the earliest next balance it saw, unless it stopped early. Run here at the IPI.
void Kernel::nohz_idle_balance(Cpu& ilb) {
  ilb.nohz_kick_pending = false;
  if (!idle_cpu(ilb.id) || ilb.need_resched) return;
  Nanos last = std::numeric_limits<Nanos>::max();  // the earliest last balance: next is + interval
  for (int i = 0; i < topo_.nr_cpus(); ++i) {
    if (i == ilb.id || !idle_cpu(i)) continue;
    if (ilb.need_resched) return;  // goto abort
    rebalance_domains(cpu(i), ilb.id);
    last = std::min(last, cpu(i).last_balance);
  }
  rebalance_domains(ilb, ilb.id);
  nohz_next_balance_ = std::min(last, ilb.last_balance) + balance_interval_ns();
}

int Kernel::find_lowest_rq(const Task& t, int this_cpu) {
  // cpupri_find(): the lowest priority level (no RT task = CPUPRI_NORMAL, idle included) below t's
  // that has allowed CPUs.
  int lowest = t.se.rt_priority;
  for (int c = t.allowed.first(); c >= 0; c = t.allowed.next(c))
    lowest = std::min(lowest, cpu(c).rt->highest_priority());
  if (lowest >= t.se.rt_priority) return -1;
  auto in_mask = [&](int c) { return c >= 0 && t.allowed.test(c) && cpu(c).rt->highest_priority() == lowest; };
  if (in_mask(t.cpu)) return t.cpu;
  if (!in_mask(this_cpu)) this_cpu = -1;
  // for_each_domain(task_cpu): SMT, LLC, node, machine (all SD_WAKE_AFFINE): the waking CPU if in
  // the span, else a CPU of the mask in it. The kernel rotates that pick
  // (cpumask_any_and_distribute()); the lowest-numbered one is taken here.
  auto in_span = [&](int level, int c) {
    switch (level) {
      case 0:
        return topo_.same_core(c, t.cpu);
      case 1:
        return topo_.share_cache(c, t.cpu);
      case 2:
        return topo_.node_of(c) == topo_.node_of(t.cpu);
      default:
        return true;
    }
  };
  for (int level = 0; level < 4; ++level) {
    if (this_cpu >= 0 && in_span(level, this_cpu)) return this_cpu;
    for (int c = t.allowed.first(); c >= 0; c = t.allowed.next(c))
      if (in_mask(c) && in_span(level, c)) return c;
  }
  return -1;
}

void Kernel::migrate_task(Task& t, Cpu& from, Cpu& to) {
  update_exec(from);
  update_exec(to);
  dequeue_task(from, t, dequeue_flags::kMigrate);
  ++t.migrations;
  enqueue_task(to, t, 0);
}

bool Kernel::load_balance(Cpu& c, bool newly_idle) {
  // rd->overload gates newidle_balance() only; napisim's pull looks at the overloaded CPUs alone.
  const int busiest = overloaded_.any() ? find_busiest_cpu(topo_, *this, c.id, BalanceScope::kLlc, &overloaded_) : -1;
  if (busiest >= 0) {
    Cpu& b = cpu(busiest);
    // The first eligible task in creation order (napisim's stand-in for detach_tasks()' walk of
    // cfs_tasks): the lowest id among the busiest rq's queued CFS tasks, without a walk of all tasks.
    Task* pick = nullptr;
    for (SchedEntity* se : b.cfs->queued()) {
      Task& t = *static_cast<Task*>(se->owner);
      if (pick && t.id > pick->id) continue;
      if (!t.allowed.test(c.id) || task_hot(host_.now(), t.last_ran, kp_.sched.migration_cost_ns)) continue;
      pick = &t;
    }
    if (pick) {
      migrate_task(*pick, b, c);
      return true;
    }
  }
  // Nothing queued to pull: a CPU of cut capacity running one CFS task is a misfit group since
  // c82a69629c53 (v6.0), whose running task need_active_balance() has pushed; v5.10's
  // find_busiest_group() calls such a group balanced unless its SMT core is the busiest group
  // (docs/kernel-napi.md 9.6.1). Such a misfit does not set rd->overload, which
  // newidle_balance() still needs.
  if (kp_.sched.capacity_pressure && (!newly_idle || overloaded_.any())) push_active_balance(c, newly_idle);
  return false;
}

void Kernel::update_cpu_capacity(Cpu& c) {
  update_exec(c);
  const Nanos clock = c.last_update;
  if (clock > c.irq_clock) {
    // update_irq_load_avg() (pelt.c): the irq time since the last update is assumed to have come
    // at its end ("Let be pessimistic"); with CONFIG_IRQ_TIME_ACCOUNTING off there is none.
    const Nanos irq = kp_.irq_time_accounting ? c.time[static_cast<std::size_t>(CpuClass::kHardirq)] +
                                                    c.time[static_cast<std::size_t>(CpuClass::kSoftirq)]
                                              : 0;
    const Nanos running = std::min(irq - c.irq_seen, clock - c.irq_clock);
    c.avg_irq.update(static_cast<std::uint64_t>(clock - running), false);
    c.avg_irq.update(static_cast<std::uint64_t>(clock), true);
    c.irq_seen = irq;
    c.irq_clock = clock;
  }
  c.avg_rt.update(static_cast<std::uint64_t>(host_.now()), c.rt_busy);
  // scale_rt_capacity() (fair.c v5.10 and v6.6; no deadline tasks, no thermal pressure):
  // free = max - avg_rt, scaled by (max - avg_irq) / max; at least 1.
  constexpr std::int64_t kMax = kSchedCapacityScale;
  const std::int64_t irq = c.avg_irq.util_avg, used = c.avg_rt.util_avg;
  c.cpu_capacity = irq >= kMax || used >= kMax ? 1 : std::max<std::int64_t>(1, (kMax - used) * (kMax - irq) / kMax);
  if (check_cpu_capacity(c, wake_params_.imbalance_pct))
    capacity_cut_.set(c.id);
  else
    capacity_cut_.clear(c.id);
}

// voluntary_active_balance() (fair.c v5.10, v6.6) for idle dst and src's lone CFS task, running:
// check_cpu_capacity(src), and capacity_of(src) * imbalance_pct < capacity_of(dst) * 100; the task
// allowed on dst and no push already under way (rq->active_balance).
bool Kernel::voluntary_active_balance(const Cpu& src, const Cpu& dst) const {
  // The capacity tests first: they rule out almost every CPU without touching its runqueue.
  const std::int64_t pct = wake_params_.imbalance_pct;
  return check_cpu_capacity(src, pct) && src.cpu_capacity * pct < dst.cpu_capacity * 100 && src.id != dst.id &&
         src.push_cpu < 0 && src.cfs->nr_running() == 1 && src.curr && !is_rt_policy(src.curr->se.policy) &&
         src.curr->allowed.test(dst.id);
}

void Kernel::push_active_balance(Cpu& dst, bool newly_idle) {
  update_cpu_capacity(dst);
  Cpu* src = nullptr;
  // voluntary_active_balance() needs check_cpu_capacity(src): only the cut CPUs of dst's LLC.
  const CpuMask cut = capacity_cut_ & topo_.llc_mask(topo_.llc_of(dst.id));
  if (!wake_params_.v5_10) {
    for (int i = cut.first(); i >= 0; i = cut.next(i)) {
      Cpu& s = cpu(i);
      if (nr_running_of(s) != 1 || !voluntary_active_balance(s, dst)) continue;
      // find_busiest_queue(): the highest load per capacity, each a lone nice-0 task here: the
      // lowest capacity, the first on a tie.
      if (!src || s.cpu_capacity < src->cpu_capacity) src = &s;
    }
    if (!src) return;
  } else {
    // load_balance() at the MC level (fair.c v5.10): a balanced domain clears the failure count
    // (out_balanced). Nothing queued was pulled, so an imbalance is a failure (ld_moved 0),
    // counted on periodic balances only ("We do not want newidle balance, which can be very
    // frequent, pollute the failure counter"). need_active_balance(): voluntary, or
    // nr_balance_failed > cache_nice_tries + 2; the kick sets it to cache_nice_tries + 1.
    constexpr int kCacheNiceTries = 1;  // sd_init(): SD_SHARE_PKG_RESOURCES (the MC domain)
    // A newidle balance with no failure counted can only push a voluntary candidate, and clears a
    // count that is already 0: without a candidate in dst's LLC it changes nothing, so the group
    // walk (most of the balancing's cost: newidle balances are the frequent ones) is skipped.
    if (newly_idle && dst.nr_balance_failed == 0) {
      int i = cut.first();
      while (i >= 0 && !voluntary_active_balance(cpu(i), dst))
        i = cut.next(i);
      if (i < 0) return;
    }
    src = busiest_core_queue(dst);
    if (!src) {
      dst.nr_balance_failed = 0;
      return;
    }
    if (!newly_idle) ++dst.nr_balance_failed;
    const bool voluntary = voluntary_active_balance(*src, dst);
    if (!voluntary && dst.nr_balance_failed <= kCacheNiceTries + 2) return;
    // "don't kick the active_load_balance_cpu_stop, if the curr task on busiest CPU can't be
    // moved to dst_cpu" (out_one_pinned: the count stays).
    if (!src->curr || !src->curr->allowed.test(dst.id)) return;
    dst.nr_balance_failed = kCacheNiceTries + 1;
    // No second push while one is under way (busiest->active_balance); napisim's stopper moves
    // the CFS task it preempted, so an RT curr is not pushed.
    if (!voluntary && (src->push_cpu >= 0 || is_rt_policy(src->curr->se.policy))) return;
  }
  src->push_cpu = dst.id;
  resched_curr(*src, dst.id);  // the stopper preempts the task at src's next preemption point
}

// v5.10's load_balance() at the MC (LLC) level, whose groups are SMT cores, for idle dst once
// nothing queued could be pulled: update_sd_lb_stats() -> update_sg_lb_stats(), group_classify()
// (no group_runnable, no misfit or asym groups), update_sd_pick_busiest() over the cores after
// dst's in the order build_sched_groups() links them; find_busiest_group()'s tests with
// prefer_sibling (the SMT child domain's SD_PREFER_SIBLING); find_busiest_queue() for
// migrate_task: the first CPU with the most CFS tasks. Returns that CPU, or null when the domain
// is balanced. Without SMT a group is one CPU and one task is always balanced.
Cpu* Kernel::busiest_core_queue(Cpu& dst) {
  if (!topo_.smt_active()) return nullptr;
  const std::int64_t pct = wake_params_.imbalance_pct;
  const int nr_cores = topo_.nr_cores();
  constexpr int kWeight = 2;  // group_weight: a core's two threads
  enum GroupType { kHasSpare = 0, kFullyBusy = 1, kOverloaded = 5 };
  struct SgStats {
    int core = -1, sum_nr_running = 0, sum_h_nr_running = 0, idle_cpus = 0;
    std::int64_t capacity = 0, util = 0, load = 0, avg_load = 0;
    GroupType type = kHasSpare;
  };
  const auto stats = [&](int core) {
    SgStats s;
    s.core = core;
    const int span[] = {core, core + nr_cores};  // the core's two threads (cpu_smt_mask())
    for (int i : span) {
      const Cpu& c = cpu(i);
      s.sum_nr_running += nr_running_of(c);
      s.sum_h_nr_running += c.cfs->nr_running();
      if (nr_running_of(c) == 0 && idle_cpu(i)) ++s.idle_cpus;
    }
    // group_is_overloaded(), group_has_capacity(): a core with fewer tasks than CPUs has spare
    // whatever its util, so the PELT sums are read only for the others.
    if (s.sum_nr_running < kWeight) return s;
    for (int i : span) {
      s.capacity += cpu(i).cpu_capacity;
      s.util += std::min<std::int64_t>(cpu_util(i), kSchedCapacityScale);  // cpu_util(): at most capacity_orig
      s.load += cpu_load(i);
    }
    if (s.sum_nr_running > kWeight && s.capacity * 100 < s.util * pct) {
      s.type = kOverloaded;
      s.avg_load = s.load * kSchedCapacityScale / s.capacity;
    } else if (s.capacity * 100 <= s.util * pct) {
      s.type = kFullyBusy;
    }
    return s;
  };
  // The local group has spare unless dst's sibling runs two tasks or more: then the kernel goes
  // on to migrate_load (or finds local above busiest), which napisim does not model.
  const SgStats local = stats(topo_.core_of(dst.id));
  if (local.type != kHasSpare) return nullptr;
  SgStats busiest;
  for (int k = 1; k < nr_cores; ++k) {
    const int core = (local.core + k) % nr_cores;
    if (!topo_.share_cache(dst.id, core)) continue;
    const SgStats sg = stats(core);
    if (sg.sum_h_nr_running == 0) continue;
    if (busiest.core >= 0) {
      if (sg.type != busiest.type) {
        if (sg.type < busiest.type) continue;
      } else if (sg.type == kOverloaded) {
        if (sg.avg_load <= busiest.avg_load) continue;
      } else if (sg.type == kFullyBusy) {
        continue;  // v5.10: avg_load is not computed for these, so the first one stays
      } else if (sg.idle_cpus > busiest.idle_cpus ||
                 (sg.idle_cpus == busiest.idle_cpus && sg.sum_nr_running <= busiest.sum_nr_running)) {
        continue;
      }
    }
    busiest = sg;
  }
  if (busiest.core < 0) return nullptr;
  // force_balance when prefer_sibling and local has spare: busiest runs two more tasks than local.
  const bool force = busiest.sum_nr_running > local.sum_nr_running + 1;
  if (!force && busiest.type != kOverloaded &&
      (local.idle_cpus <= busiest.idle_cpus + 1 || busiest.sum_h_nr_running == 1))
    return nullptr;
  // calculate_imbalance(), local has spare with prefer_sibling: migrate_task, half the difference.
  if ((busiest.sum_nr_running - local.sum_nr_running) / 2 == 0) return nullptr;
  Cpu* queue = nullptr;
  for (int i : {busiest.core, busiest.core + nr_cores})
    if (cpu(i).cfs->nr_running() > (queue ? queue->cfs->nr_running() : 0)) queue = &cpu(i);
  return queue;
}

// active_load_balance_cpu_stop() (fair.c v5.10, v6.6): the stopper runs when src schedules and
// moves the task it preempted to push_cpu (detach_one_task(); v5.10 sets nr_balance_failed past
// cache_nice_tries when it kicks the stopper, v6.6 has LBF_ACTIVE_LB: cache-hot or not). Nothing
// moves if that task has blocked meanwhile ("busiest_rq->nr_running <= 1").
void Kernel::active_load_balance_cpu_stop(Cpu& c, Task* preempted) {
  const int target = std::exchange(c.push_cpu, -1);
  if (!preempted || is_rt_policy(preempted->se.policy) || !preempted->allowed.test(target)) return;
  Cpu& dst = cpu(target);
  c.cfs->put_prev();
  migrate_task(*preempted, c, dst);
  if (dst.curr)
    check_preempt(dst, *preempted, c.id);
  else
    resched_curr(dst, c.id);
}

// psi_task_change() / psi_task_switch() (kernel/sched/psi.c v6.6): called after every change of
// curr or nr_running (schedule, enqueue_task, dequeue_task), so the time since the last call is
// charged to the states stored then, which held until now.
void Kernel::psi_update(Cpu& c) {
  const Nanos now = host_.now();
  const Nanos dt = now - c.psi_stamp;
  if (dt > 0) {
    if (c.psi_some) c.psi_some_ns += dt;
    if (c.psi_nonidle) c.psi_nonidle_ns += dt;
  }
  c.psi_stamp = now;
  const int nr = nr_running_of(c);
  c.psi_some = nr > (c.curr ? 1 : 0);
  c.psi_nonidle = nr > 0;
}

void Kernel::util_update(Cpu& c) {
  // update_load_avg() on the cfs_rq at every change of curr (put_prev_entity, set_next_entity).
  c.util.update(static_cast<std::uint64_t>(host_.now()), c.util_busy);
  c.util_busy = c.curr != nullptr && !is_rt_policy(c.curr->se.policy);
  if (kp_.sched.capacity_pressure) {
    // update_rt_rq_load_avg() at put_prev_task_rt() / set_next_task_rt().
    c.avg_rt.update(static_cast<std::uint64_t>(host_.now()), c.rt_busy);
    c.rt_busy = c.curr != nullptr && is_rt_policy(c.curr->se.policy);
  }
}

bool Kernel::idle_cpu(int i) const {
  const Cpu& c = cpu(i);
  return c.curr == nullptr && nr_running_of(c) == 0 && c.ttwu_pending == 0;
}
bool Kernel::sched_idle_cpu(int) const {
  return false;
}
Nanos Kernel::avg_idle(int c) const {
  return cpu(c).avg_idle;
}

Nanos Kernel::llc_avg_scan_cost(int llc) const {
  return llc_avg_scan_cost_[static_cast<std::size_t>(llc)];
}

namespace {
// update_avg(), kernel/sched/sched.h v5.10: an exponential average with weight 1/8.
void update_avg(Nanos& avg, Nanos sample) {
  avg += (sample - avg) / 8;
}
}  // namespace

void Kernel::record_scan(int llc, int scanned) const {
  // time = cpu_clock(this) - time: napisim's scan costs sis_scan_ns per cpu examined.
  update_avg(llc_avg_scan_cost_[static_cast<std::size_t>(llc)], scanned * wake_params_.sis_scan_ns);
}

void Kernel::ttwu_avg_idle(Cpu& c) {
  // ttwu_do_wakeup() (v5.10) / ttwu_do_activate() (v6.6): a wakeup ends the idle spell that
  // newidle_balance() stamped; max = 2 * max_idle_balance_cost, at its floor
  // sysctl_sched_migration_cost (napisim's newidle balancing takes no time).
  if (c.idle_stamp < 0) return;
  update_avg(c.avg_idle, host_.now() - c.idle_stamp);
  c.avg_idle = std::min(c.avg_idle, 2 * kp_.sched.migration_cost_ns);
  c.idle_stamp = -1;
}

int Kernel::llc_nr_idle_scan(const Topology&, int, int llc) const {
  return llc_nr_idle_scan_[static_cast<std::size_t>(llc)];
}
int Kernel::nr_running(int i) const {
  return nr_running_of(cpu(i));
}
std::int64_t Kernel::cpu_load(int i) const {
  return cpu(i).cfs->load_weight();
}
std::int64_t Kernel::cpu_util(int i) const {
  // cpu_util_cfs(): the cfs_rq's util_avg, brought up to now as update_blocked_averages() keeps
  // idle CPUs' averages current.
  const Cpu& c = cpu(i);
  pelt::UtilAvg u = c.util;
  u.update(static_cast<std::uint64_t>(host_.now()), c.util_busy);
  return u.util_avg;
}

// ---- awaiters ----------------------------------------------------------------------------------

void Kernel::sleep_task(Task& t, WaitQueue& wq, std::coroutine_handle<> h) {
  Cpu& c = park(t, h, false);
  t.state = TaskState::kSleeping;
  wq.waiter = &t;
  t.waiting_on = &wq;
  charge_curr(c);
  dequeue_task(c, t, dequeue_flags::kSleep);
  ++t.nvcsw;
  schedule(c);
  dispatch(c);
}

bool Kernel::CondReschedAwait::await_ready() const noexcept {
  return !k.cpu(t.cpu).need_resched;
}

void Kernel::CondReschedAwait::await_suspend(std::coroutine_handle<> h) {
  Cpu& c = k.park(t, h, false);
  k.schedule(c);
  k.dispatch(c);
}

}  // namespace napisim
