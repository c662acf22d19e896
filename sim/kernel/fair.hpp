// napisim: per-CPU fair-class run queue (SCHED_NORMAL / SCHED_BATCH / SCHED_IDLE).
//
// A pure data structure: no event queue, no CPU, no clock. The caller (the CPU execution engine)
// charges execution time with update_curr(delta) and acts on the returned "resched" flags.
//
// Two algorithms behind one interface (FairParams::algo):
//   * kEevdf (default) mirrors kernel/sched/fair.c of Linux v6.6 (EEVDF, Peter Zijlstra 2023, with
//     the v6.6-rc6 pick_eevdf() fix): avg_vruntime(), entity_lag()/update_entity_lag(),
//     entity_eligible(), update_deadline(), update_curr(), place_entity() (PLACE_LAG,
//     PLACE_DEADLINE_INITIAL), __pick_eevdf() (RUN_TO_PARITY), set_next_entity() (the
//     "vlag = deadline" HACK), put_prev_entity(), check_preempt_wakeup(), reweight_entity().
//     Deviations, all documented where they occur: update_min_vruntime() uses the true minimum
//     vruntime (the v6.8 fix; V and eligibility do not depend on it), and reweight of a queued
//     entity uses the lag-preserving v6.7 reweight_eevdf() (v6.6 left vruntime unchanged).
//   * kCfs mirrors Linux v5.10 CFS: __sched_period(), sched_slice(), sched_vslice(),
//     update_curr(), update_min_vruntime(), place_entity() (START_DEBIT, GENTLE_FAIR_SLEEPERS),
//     enqueue_entity()/dequeue_entity() vruntime (re)normalisation, check_preempt_tick(),
//     pick_next_entity() (next/last buddies; the skip buddy of sched_yield() is not modelled),
//     wakeup_gran()/wakeup_preempt_entity()/check_preempt_wakeup().
//
// Not modelled (flat hierarchy, single cfs_rq per CPU): group scheduling, CFS bandwidth,
// PELT/load tracking, HRTICK, NEXT_BUDDY's WF_FORK exclusion (no wake flags here).
//
// Arithmetic is 64-bit integer like the kernel; calc_delta_fair() is delta * 1024 / weight with
// truncation (the kernel's __calc_delta() fixed point can differ by 1 ns; plain 128-bit
// multiply/divide is used instead). Weights are unscaled (NICE_0_LOAD = 1024), i.e. already
// scale_load_down()'d as in the kernel's avg_vruntime bookkeeping.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/time.hpp"

namespace napisim {

enum class SchedPolicy { kNormal, kBatch, kIdle, kFifo, kRr };

/// chrt's policies by name, for the *_policy parameters of workloads and models: normal is
/// SCHED_OTHER, then SCHED_BATCH, SCHED_IDLE, SCHED_FIFO and SCHED_RR.
inline SchedPolicy sched_policy_named(const std::string& name) {
  if (name == "batch") return SchedPolicy::kBatch;
  if (name == "idle") return SchedPolicy::kIdle;
  if (name == "fifo") return SchedPolicy::kFifo;
  if (name == "rr") return SchedPolicy::kRr;
  return SchedPolicy::kNormal;
}

constexpr bool is_fair_policy(SchedPolicy p) {
  return p == SchedPolicy::kNormal || p == SchedPolicy::kBatch || p == SchedPolicy::kIdle;
}
constexpr bool is_rt_policy(SchedPolicy p) {
  return p == SchedPolicy::kFifo || p == SchedPolicy::kRr;
}

inline constexpr std::int64_t kNice0Load = 1024;    // NICE_0_LOAD (scale_load_down'ed)
inline constexpr std::int64_t kWeightIdleprio = 3;  // WEIGHT_IDLEPRIO (SCHED_IDLE)

/// sched_prio_to_weight[nice + 20] (kernel/sched/core.c); nice must be in [-20, 19].
std::int64_t nice_to_weight(int nice);
/// Load weight of a task: SCHED_IDLE → WEIGHT_IDLEPRIO (set_load_weight()), else by nice.
/// RT policies return the nice weight too (unused by RtRq).
std::int64_t sched_weight(SchedPolicy policy, int nice);

/// calc_delta_fair(): wall-clock delta → virtual delta for an entity of `weight`
/// (delta * NICE_0_LOAD / weight, truncated; identity for weight 1024).
Nanos calc_delta_fair(Nanos delta, std::int64_t weight);

struct FairParams {                                      // plain struct; the lead wraps it into scenario params
  enum class Algo { kEevdf, kCfs } algo = Algo::kEevdf;  // EEVDF (>= v6.6) default; CFS (v5.x)
  /// For sysctl_sched_tunable_scaling = SCHED_TUNABLESCALING_LOG:
  /// factor = 1 + ilog2(min(nr_cpus, 8)) (get_update_sysctl_factor()).
  int nr_cpus = 8;
  Nanos base_slice_ns = 750000;           // normalized sysctl_sched_base_slice (EEVDF)
  Nanos sched_latency_ns = 6000000;       // normalized sysctl_sched_latency (CFS)
  Nanos min_granularity_ns = 750000;      // normalized sysctl_sched_min_granularity (CFS)
  Nanos wakeup_granularity_ns = 1000000;  // normalized sysctl_sched_wakeup_granularity (CFS)
  /// TICK_NSEC (1e9 / HZ); EEVDF lag clamp uses max(2 * slice, TICK_NSEC). Default HZ = 250.
  Nanos tick_ns = 4000000;
  // sched_feat() switches (kernel/sched/features.h defaults of the respective version).
  bool run_to_parity = true;           // EEVDF RUN_TO_PARITY
  bool place_lag = true;               // EEVDF PLACE_LAG
  bool place_deadline_initial = true;  // EEVDF PLACE_DEADLINE_INITIAL
  bool wakeup_preemption = true;       // WAKEUP_PREEMPTION (both)
  bool gentle_fair_sleepers = true;    // CFS GENTLE_FAIR_SLEEPERS
  bool start_debit = true;             // CFS START_DEBIT
  bool next_buddy = false;             // NEXT_BUDDY (both; default off)
  bool last_buddy = true;              // CFS LAST_BUDDY (v5.10 default on; removed by EEVDF)

  int scaling_factor() const;
  /// normalized × scaling_factor() (update_sysctl()).
  Nanos scaled(Nanos normalized) const;
};

struct SchedEntity {  // embedded in the lead's Task
  SchedPolicy policy = SchedPolicy::kNormal;
  int nice = 0;
  std::int64_t weight = 1024;  // must equal sched_weight(policy, nice); see set_sched_attr()
  int rt_priority = 0;         // 1..99 for kFifo/kRr (higher value = higher priority)
  Nanos vruntime = 0, deadline = 0, vlag = 0, slice = 0, sum_exec_runtime = 0, prev_sum_exec_runtime = 0;
  bool on_rq = false;
  bool sched_delayed = false;  // unused (v6.12 DELAY_DEQUEUE not modelled)
  void* owner = nullptr;
  // RtRq bookkeeping: remaining SCHED_RR time slice in ticks (p->rt.time_slice); 0 = not set yet.
  int rt_time_slice_ticks = 0;
};

/// Sets policy/nice/rt_priority and the matching weight of an entity that is not queued
/// (__setscheduler_params() + set_load_weight()). Use FairRq::set_nice() for a queued one.
void set_sched_attr(SchedEntity& se, SchedPolicy policy, int nice, int rt_priority = 0);

namespace enqueue_flags {
constexpr unsigned kWakeup = 1, kInitial = 2 /*new task, fork*/, kMigrated = 4, kRestore = 8;
}
namespace dequeue_flags {
constexpr unsigned kSleep = 1, kMigrate = 2, kSave = 4;
}

class FairRq {
 public:
  explicit FairRq(const FairParams& params);

  const FairParams& params() const { return params_; }
  bool is_eevdf() const { return params_.algo == FairParams::Algo::kEevdf; }

  /// enqueue_entity(). EEVDF: place_entity() — vruntime = V - vlag * (W + w) / W (PLACE_LAG,
  /// only if the queue is non-empty), slice = base slice, deadline = vruntime + vslice (halved
  /// for kInitial with PLACE_DEADLINE_INITIAL); kInitial resets vlag to 0 (new task).
  /// CFS: vruntime is relative (+= min_vruntime) unless the flags are a plain same-rq wakeup
  /// (kWakeup without kMigrated); kInitial → max(vruntime, min_vruntime + sched_vslice) with
  /// START_DEBIT (task_fork_fair()); kWakeup → max(vruntime, min_vruntime - latency[/2]).
  /// Enqueueing the current entity (after dequeue(curr, kSave)) keeps it current.
  void enqueue(SchedEntity& se, unsigned flags);
  /// dequeue_entity(). EEVDF: vlag = clamp(V - vruntime) on every dequeue (update_entity_lag()).
  /// CFS: vruntime -= min_vruntime unless kSleep. min_vruntime is not advanced for kSave.
  /// Dequeuing curr leaves it curr (not on_rq) until put_prev()/pick_next_task().
  /// Charge curr with update_curr() first (the kernel does it inside dequeue_entity()).
  void dequeue(SchedEntity& se, unsigned flags);
  /// migrate_task_rq_fair() for a *sleeping* entity that will be enqueued on another FairRq with
  /// kWakeup | kMigrated. CFS: vruntime -= min_vruntime of this rq. EEVDF: no-op (vlag carries).
  void detach_sleeping(SchedEntity& se) const;

  /// update_curr(): charge the running entity delta_exec of task time (IRQ/softirq time must be
  /// excluded by the caller). Returns true if curr must be rescheduled: EEVDF update_deadline()
  /// found vruntime >= deadline (a new slice/deadline is assigned) with nr_running > 1.
  /// CFS: always false (its slice check is in tick()). No-op (false) if there is no curr or
  /// delta_exec <= 0.
  bool update_curr(Nanos delta_exec);
  /// entity_tick() after update_curr(): EEVDF: nothing (returns false). CFS: check_preempt_tick()
  /// when nr_running > 1 — resched if ran > sched_slice(), or if ran >= min_granularity and
  /// curr.vruntime - leftmost.vruntime > sched_slice().
  bool tick();

  /// pick_next_entity(): EEVDF NEXT_BUDDY (if eligible) else __pick_eevdf() — the eligible entity
  /// with the earliest deadline; curr competes only if on_rq and eligible, ties go to curr, and
  /// with RUN_TO_PARITY an eligible curr still holding the set_next marker (vlag == deadline)
  /// is returned directly. CFS: leftmost vruntime (curr included), then next/last buddy if
  /// within wakeup_gran of it. nullptr if nothing is runnable. Does not change state.
  SchedEntity* pick_next() const;
  /// pick_next_task_fair() for a flat hierarchy: pick_next(), clear the buddies of the pick, and
  /// if it differs from curr do put_prev() + set_next(). Returns the new curr (nullptr → idle:
  /// the previous curr has been put back). Call update_curr() before (the kernel does it here).
  SchedEntity* pick_next_task();
  /// set_next_entity(): se leaves the queue and becomes curr; prev_sum_exec_runtime = sum;
  /// EEVDF stores vlag = deadline (RUN_TO_PARITY marker). No-op if se is already curr (the
  /// kernel does not call it when the same task is picked again). Requires curr() == nullptr
  /// otherwise (call put_prev() first).
  void set_next(SchedEntity& se);
  /// put_prev_entity(): curr goes back into the queue if still on_rq; curr = nullptr.
  /// Charge it with update_curr() first.
  void put_prev();

  /// check_preempt_wakeup(): should the running curr be preempted by `woken`, which must
  /// already be enqueued here? Returns true if curr is null or not on_rq (nothing to protect).
  /// Order as in the kernel: SCHED_IDLE curr vs non-idle woken → true; woken BATCH/IDLE or
  /// !WAKEUP_PREEMPTION → false; EEVDF: pick_eevdf() == woken; CFS: curr.vruntime -
  /// woken.vruntime > wakeup_gran scaled by woken's weight (sets next buddy, and last buddy =
  /// curr when nr_running >= sched_nr_latency). Call update_curr() first; the kernel's
  /// "curr already has TIF_NEED_RESCHED → return" is the caller's business.
  bool wakeup_preempt(const SchedEntity& woken);

  /// reweight_entity() through set_user_nice(): changes nice (and weight unless SCHED_IDLE).
  /// EEVDF queued: lag-preserving (v6.7 reweight_eevdf: v' = V - (V - v) * w / w',
  /// d' = V + (d - V) * w / w', V unchanged); EEVDF sleeping: vlag *= w / w'.
  /// CFS keeps vruntime. Charge curr first if se is curr.
  void set_nice(SchedEntity& se, int nice);

  SchedEntity* curr() const { return curr_; }
  /// The queued entities except curr, in enqueue order (the cfs_tasks a balancer detaches from).
  const std::vector<SchedEntity*>& queued() const { return queue_; }
  int nr_running() const { return nr_running_; }  // including curr (if on_rq)
  std::int64_t load_weight() const { return load_; }
  /// avg_vruntime(): V = min_vruntime + floor(Σ (v_i - min_vruntime) * w_i / Σ w_i) over queued
  /// entities and curr (if on_rq); min_vruntime if empty. Exact (no incremental error).
  Nanos avg_vruntime() const;
  Nanos min_vruntime() const { return min_vruntime_; }
  /// entity_eligible(): V >= se.vruntime, evaluated exactly (vruntime_eligible()).
  bool entity_eligible(const SchedEntity& se) const;

  // Effective (scaled) tunables and derived quantities, for callers and tests.
  Nanos base_slice() const { return base_slice_; }
  Nanos sched_latency() const { return latency_; }
  Nanos min_granularity() const { return min_gran_; }
  Nanos wakeup_granularity() const { return wakeup_gran_; }
  int sched_nr_latency() const { return nr_latency_; }
  /// CFS __sched_period(nr_running).
  Nanos sched_period(int nr_running) const;
  /// CFS sched_slice(): wall-time share of the period (entity counted if not queued).
  Nanos sched_slice(const SchedEntity& se) const;
  /// EEVDF lag clamp of entity_lag(): calc_delta_fair(max(2 * slice, TICK_NSEC), se).
  Nanos lag_limit(const SchedEntity& se) const;
  const SchedEntity* next_buddy() const { return next_; }
  const SchedEntity* last_buddy() const { return last_; }

 private:
  struct Sums {
    __int128 avg = 0;   // Σ (v_i - min_vruntime) * w_i
    __int128 load = 0;  // Σ w_i
  };
  Sums sums() const;
  bool vruntime_eligible(const Sums& s, Nanos vruntime) const;
  SchedEntity* pick_eevdf() const;
  SchedEntity* pick_cfs() const;
  SchedEntity* leftmost() const { return leftmost_; }  // __pick_first_entity()
  SchedEntity* find_leftmost() const;                  // min vruntime, first queued on ties: what leftmost_ caches
  void add_to_queue(SchedEntity* se);
  SchedEntity* resolve(const SchedEntity* buddy) const;
  void place_entity_eevdf(SchedEntity& se, unsigned flags);
  void place_entity_cfs(SchedEntity& se, bool initial);
  void update_min_vruntime();
  void clear_buddies(const SchedEntity* se);
  void remove_from_queue(SchedEntity* se);
  int wakeup_preempt_entity(const SchedEntity& curr, const SchedEntity& se) const;

  FairParams params_;
  Nanos base_slice_, latency_, min_gran_, wakeup_gran_;
  int nr_latency_;
  std::vector<SchedEntity*> queue_;  // queued entities except curr, in enqueue order
  SchedEntity* leftmost_ = nullptr;  // find_leftmost() of queue_, kept up to date
  SchedEntity* curr_ = nullptr;
  const SchedEntity* next_ = nullptr;  // cfs_rq->next
  const SchedEntity* last_ = nullptr;  // cfs_rq->last (CFS only)
  int nr_running_ = 0;
  std::int64_t load_ = 0;
  Nanos min_vruntime_ = 0;
};

}  // namespace napisim
