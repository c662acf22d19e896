// napisim: per-CPU real-time run queue (SCHED_FIFO / SCHED_RR), header-only.
//
// Mirrors kernel/sched/rt.c (same behaviour in v5.10 and v6.6) for a flat rt_rq:
//   * __enqueue_rt_entity(): one FIFO list per priority; wakeups go to the tail, ENQUEUE_HEAD to
//     the head. The running task stays in its list (a preempted task therefore keeps its place at
//     the head of its priority: do not dequeue it on preemption; if you must, re-enqueue with
//     head = true).
//   * pick_next_rt_entity(): head of the highest non-empty priority.
//   * check_preempt_curr_rt(): a woken task preempts only with a strictly higher priority
//     (the equal-priority SMP push heuristic is not modelled).
//   * task_tick_rt(): SCHED_RR time slice of sched_rr_timeslice = RR_TIMESLICE = 100 ms counted
//     in ticks; on expiry it is refilled and, if other tasks share the priority, the task is
//     requeued to the tail (requeue_task_rt()) and rescheduled.
//   * RT throttling (sched_rt_runtime_exceeded(), do_sched_rt_period_timer()): constants and a
//     standalone budget helper (RtBandwidth) the engine may use; RtRq itself does not throttle.
// Priorities are the user-visible sched_priority 1..99 (higher value = higher priority; kernel
// prio = MAX_RT_PRIO - 1 - sched_priority).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/time.hpp"
#include "sim/kernel/fair.hpp"

namespace napisim {

inline constexpr int kMaxRtPrio = 100;                        // MAX_RT_PRIO
inline constexpr int kSchedSetFifoPriority = kMaxRtPrio / 2;  // sched_set_fifo(): 50
inline constexpr int kSchedSetFifoLowPriority = 1;            // sched_set_fifo_low()
inline constexpr Nanos kSchedRrTimesliceNs = ms(100);         // RR_TIMESLICE = 100 * HZ / 1000 jiffies
inline constexpr Nanos kSysctlSchedRtPeriodNs = sec(1);       // sysctl_sched_rt_period = 1000000 us
inline constexpr Nanos kSysctlSchedRtRuntimeNs = ms(950);     // sysctl_sched_rt_runtime = 950000 us

/// sched_rr_timeslice in ticks for a given TICK_NSEC (25 at HZ=250, 100 at HZ=1000).
constexpr int rr_timeslice_ticks(Nanos tick_ns) {
  const Nanos t = kSchedRrTimesliceNs / tick_ns;
  return t < 1 ? 1 : static_cast<int>(t);
}

/// RT bandwidth accounting of one rt_rq (no RT_RUNTIME_SHARE borrowing between CPUs).
struct RtBandwidth {
  Nanos period_ns = kSysctlSchedRtPeriodNs;
  Nanos runtime_ns = kSysctlSchedRtRuntimeNs;  // < 0: RUNTIME_INF (sysctl_sched_rt_runtime = -1)
  Nanos rt_time = 0;                           // RT execution charged in the current period
  bool throttled = false;

  /// update_curr_rt() → sched_rt_runtime_exceeded(): charge delta of RT execution; returns true
  /// when this charge throttles the rt_rq (the caller reschedules and stops picking RT tasks).
  bool charge(Nanos delta) {
    if (runtime_ns < 0 || runtime_ns >= period_ns) return false;
    rt_time += delta;
    if (!throttled && rt_time > runtime_ns) {
      throttled = true;
      return true;
    }
    return false;
  }
  /// do_sched_rt_period_timer() after `overrun` periods: rt_time -= min(rt_time, overrun *
  /// runtime); returns true if this unthrottles the rt_rq.
  bool replenish(int overrun = 1) {
    if (runtime_ns < 0) return false;
    rt_time -= std::min(rt_time, overrun * runtime_ns);
    if (throttled && rt_time < runtime_ns) {
      throttled = false;
      return true;
    }
    return false;
  }
};

class RtRq {
 public:
  explicit RtRq(Nanos tick_ns = 4000000) : rr_ticks_(rr_timeslice_ticks(tick_ns)) { queue_.reserve(16); }

  /// enqueue_task_rt(): tail of its priority list (head = ENQUEUE_HEAD).
  void enqueue(SchedEntity& se, bool head = false) {
    NAPISIM_ASSERT(!se.on_rq, "RtRq::enqueue of a queued entity");
    NAPISIM_ASSERT(is_rt_policy(se.policy) && se.rt_priority >= 1 && se.rt_priority < kMaxRtPrio,
                   "RtRq::enqueue needs SCHED_FIFO/SCHED_RR with priority 1..99");
    if (se.rt_time_slice_ticks <= 0) se.rt_time_slice_ticks = rr_ticks_;  // sched_fork()
    insert(&se, head);
    se.on_rq = true;
  }
  /// dequeue_task_rt(). Dequeuing curr leaves it curr until put_prev().
  void dequeue(SchedEntity& se) {
    NAPISIM_ASSERT(se.on_rq, "RtRq::dequeue of an entity that is not queued");
    remove(&se);
    se.on_rq = false;
  }
  /// requeue_task_rt(): move a queued entity to the tail (or head) of its priority list.
  void requeue(SchedEntity& se, bool head = false) {
    NAPISIM_ASSERT(se.on_rq, "RtRq::requeue of an entity that is not queued");
    remove(&se);
    insert(&se, head);
  }

  /// pick_next_rt_entity(): head of the highest-priority list (may be curr). Does not change state.
  SchedEntity* pick_next() const { return queue_.empty() ? nullptr : queue_.front(); }
  /// pick_next_task_rt() + set_next_task_rt(): the pick becomes curr (nullptr if empty).
  SchedEntity* pick_next_task() {
    SchedEntity* se = pick_next();
    curr_ = se;
    if (se) se->prev_sum_exec_runtime = se->sum_exec_runtime;
    return se;
  }
  /// set_next_task_rt(): se (queued) starts running.
  void set_next(SchedEntity& se) {
    NAPISIM_ASSERT(se.on_rq, "RtRq::set_next of an entity that is not queued");
    curr_ = &se;
    se.prev_sum_exec_runtime = se.sum_exec_runtime;
  }
  /// put_prev_task_rt(): curr stops running (its list position is unchanged).
  void put_prev() { curr_ = nullptr; }

  /// update_curr_rt(): charge curr's execution (bandwidth accounting is RtBandwidth's).
  void update_curr(Nanos delta_exec) {
    if (curr_ && delta_exec > 0) curr_->sum_exec_runtime += delta_exec;
  }
  /// task_tick_rt(): SCHED_RR slice accounting; returns true if curr must be rescheduled
  /// (slice expired and another task of the same priority was queued; curr went to the tail).
  bool tick() {
    if (!curr_ || !curr_->on_rq || curr_->policy != SchedPolicy::kRr) return false;
    if (--curr_->rt_time_slice_ticks > 0) return false;
    curr_->rt_time_slice_ticks = rr_ticks_;
    // Requeue to the end of queue if we (and all of our ancestors) are not the only element.
    if (count_priority(curr_->rt_priority) > 1) {
      requeue(*curr_, /*head=*/false);
      return true;
    }
    return false;
  }
  /// check_preempt_curr_rt(): woken (queued) preempts curr iff strictly higher priority.
  /// Returns true if nothing RT is running.
  bool wakeup_preempt(const SchedEntity& woken) const {
    if (!curr_ || !curr_->on_rq) return true;
    if (&woken == curr_) return false;
    return woken.rt_priority > curr_->rt_priority;
  }

  SchedEntity* curr() const { return curr_; }
  int nr_running() const { return static_cast<int>(queue_.size()); }  // including curr
  int rr_timeslice() const { return rr_ticks_; }
  /// Highest queued priority, 0 if empty.
  int highest_priority() const { return queue_.empty() ? 0 : queue_.front()->rt_priority; }

 private:
  void insert(SchedEntity* se, bool head) {
    // queue_ is sorted by priority (descending), FIFO within a priority.
    const int prio = se->rt_priority;
    auto it = queue_.begin();
    if (head) {
      while (it != queue_.end() && (*it)->rt_priority > prio)
        ++it;
    } else {
      while (it != queue_.end() && (*it)->rt_priority >= prio)
        ++it;
    }
    queue_.insert(it, se);
  }
  void remove(SchedEntity* se) {
    const auto it = std::find(queue_.begin(), queue_.end(), se);
    NAPISIM_ASSERT(it != queue_.end(), "entity not in this RT run queue");
    queue_.erase(it);
  }
  int count_priority(int prio) const {
    return static_cast<int>(
        std::count_if(queue_.begin(), queue_.end(), [prio](const SchedEntity* e) { return e->rt_priority == prio; }));
  }

  int rr_ticks_;
  std::vector<SchedEntity*> queue_;
  SchedEntity* curr_ = nullptr;
};

}  // namespace napisim
