// napisim: CFS wakeup placement and the load-balance helpers the CPU model needs.
//
// Mirrors kernel/sched/fair.c of Linux v6.6 (CFS/EEVDF, no energy model, no asymmetric capacity,
// no clusters, no core scheduling):
//   select_task_rq_fair()  -> select_task_rq_fair (plus core.c select_task_rq()'s
//                             nr_cpus_allowed == 1 shortcut and select_fallback_rq())
//   record_wakee(), wake_wide()
//   wake_affine() = wake_affine_idle() (WA_IDLE) then wake_affine_weight() (WA_WEIGHT, WA_BIAS)
//   select_idle_sibling(), select_idle_cpu(), select_idle_core(), select_idle_smt(),
//   test_idle_cores(), update_idle_cpu_scan() (SIS_UTIL's nr_idle_scan)
//   and, for the CFS kernels (v5.10): select_idle_core(), select_idle_cpu() under SIS_PROP
//                           (rq->avg_idle, sd->avg_scan_cost), select_idle_smt(target)
//   ttwu_queue_cond()      (core.c: whether try_to_wake_up() queues the wakeup on the target's
//                           wake list and IPIs it, sched_feat TTWU_QUEUE)
//   find_busiest_queue()   (simplified, see find_busiest_cpu)
//   task_hot()             (sysctl_sched_migration_cost)
// Every function is pure: the machine state is read through WakeView, which the CPU model
// implements; the only state written is the task bookkeeping the kernel keeps in task_struct
// (wakee_flips, wakee_flip_decay_ts, last_wakee, recent_used_cpu), passed in as WakeeInfo, and
// SIS_PROP's avg_scan_cost, which the kernel's select_idle_cpu() updates (WakeView::record_scan).
//
// Softirq is invisible to placement, as in the kernel: available_idle_cpu() looks at the
// runqueue only, so a cpu that is busy running NET_RX softirq on top of its idle task is "idle"
// here and will be picked. Reproducing that blind spot is the point of this module.
#pragma once

#include <cstdint>

#include "sim/core/time.hpp"
#include "sim/hw/topology.hpp"
#include "sim/kernel/pelt.hpp"

namespace napisim {

/// Read-only view of the runqueues, implemented by the CPU/scheduler model.
struct WakeView {
  virtual ~WakeView() = default;
  /// available_idle_cpu(): rq->curr == rq->idle && nr_running == 0 && no queued (ttwu_pending)
  /// wakeups. Softirq/hardirq activity on the idle task does NOT make a cpu non-idle.
  virtual bool idle_cpu(int cpu) const = 0;
  /// sched_idle_cpu(): every runnable task is SCHED_IDLE.
  virtual bool sched_idle_cpu(int cpu) const = 0;
  /// rq->nr_running (including the running task; a running kthread counts).
  virtual int nr_running(int cpu) const = 0;
  /// cpu_load(): CFS runnable load (sum of weights or a PELT-like average; opaque).
  virtual std::int64_t cpu_load(int cpu) const = 0;
  /// cpu_util_cfs(): the cfs_rq's PELT util_avg, 0..1024, summed per LLC for SIS_UTIL.
  virtual std::int64_t cpu_util(int cpu) const = 0;
  /// capacity_of(): 1024 unless RT/IRQ pressure is modelled.
  virtual std::int64_t capacity(int cpu) const {
    (void)cpu;
    return 1024;
  }
  /// sd_llc_shared->nr_idle_scan of `llc`: what the LLC's last periodic load balance wrote
  /// (update_idle_cpu_scan()). By default computed now from cpu_util().
  virtual int llc_nr_idle_scan(const Topology& topo, int imbalance_pct, int llc) const;
  /// rq->avg_idle of `cpu` (SIS_PROP, v5.10): by default its initial value, twice
  /// sysctl_sched_migration_cost.
  virtual Nanos avg_idle(int cpu) const;
  /// sd_llc->avg_scan_cost of `llc` (SIS_PROP, v5.10); by default 0.
  virtual Nanos llc_avg_scan_cost(int llc) const {
    (void)llc;
    return 0;
  }
  /// select_idle_cpu()'s update_avg(&this_sd->avg_scan_cost, time) after a scan of `scanned`
  /// cpus that did not run out of its SIS_PROP budget (v5.10). By default nothing is kept.
  virtual void record_scan(int llc, int scanned) const { (void)llc, (void)scanned; }
};

/// The task_struct fields placement reads and writes. The wakee's identity for record_wakee() is
/// the address of its WakeeInfo, so keep one WakeeInfo per task at a stable address.
struct WakeeInfo {
  int prev_cpu = 0;  ///< task_cpu(p): where it last ran
  /// p->recent_used_cpu (-1: none yet); updated by select_idle_sibling (and, v5.10, set to the
  /// waking cpu of an affine wakeup this task makes)
  int recent_used_cpu = -1;
  const CpuMask* allowed = nullptr;  ///< p->cpus_ptr; nullptr = every cpu
  /// task_h_load(p) used by wake_affine_weight(): the task's (PELT) load; nice-0 weight 1024 when
  /// no average is modelled.
  std::int64_t weight = 1024;
  /// PF_KTHREAD with nr_cpus_allowed == 1 (is_per_cpu_kthread()). Informational: the check in
  /// select_idle_sibling() also needs in_task(), so select_task_rq_fair() takes the waker's
  /// answer as the explicit waker_is_per_cpu_kthread argument.
  bool per_cpu_kthread = false;
  // wake_wide() bookkeeping (as waker): flips decay by half once per second.
  unsigned wakee_flips = 0;
  Nanos wakee_flip_decay_ts = 0;
  const void* last_wakee = nullptr;
  // wake_affine()'s schedstats (p->stats.nr_wakeups_affine_attempts, nr_wakeups_affine): calls,
  // and calls that pulled the task to the waking CPU.
  std::uint64_t nr_wakeups_affine_attempts = 0, nr_wakeups_affine = 0;
};

struct WakeParams {
  bool wake_affine = true;  ///< SD_WAKE_AFFINE on the domains (false: never pull to the waker)
  bool sis_util = true;     ///< sched_feat(SIS_UTIL): bound the LLC scan by nr_idle_scan
  bool ttwu_queue = true;   ///< sched_feat(TTWU_QUEUE): see ttwu_queue_wakelist()
  /// The placement of Linux v5.10 (sched algo "cfs"): select_idle_core() over the LLC, then
  /// select_idle_cpu() bounded by SIS_PROP, then select_idle_smt(target). False: v6.6.
  bool v5_10 = false;
  bool sis_prop = true;         ///< sched_feat(SIS_PROP) (v5.10 placement only)
  Nanos sis_scan_ns = 0;        ///< what select_idle_cpu() spends per cpu it examines
  int imbalance_pct = 117;      ///< MC / PKG / NUMA domains (sd_init default)
  int smt_imbalance_pct = 110;  ///< SMT domain (SD_SHARE_CPUCAPACITY)
};

inline constexpr Nanos kSchedMigrationCostNs = 500000;  ///< sysctl_sched_migration_cost default
inline constexpr int kNodeReclaimDistance = 30;         ///< node_reclaim_distance (RECLAIM_DISTANCE)
inline constexpr std::int64_t kSchedCapacityScale = std::int64_t{1} << pelt::kCapacityShift;  // SCHED_CAPACITY_SCALE

// --- wake_wide ------------------------------------------------------------------------------

/// record_wakee() (v6.6), called with `current` = waker: once more than a second (HZ jiffies)
/// has passed since wakee_flip_decay_ts, halve waker.wakee_flips; then count a flip if the waker
/// wakes a different task than last time. Approximation: Nanos instead of jiffies (no 1/HZ
/// granularity).
void record_wakee(WakeeInfo& waker, const WakeeInfo& wakee, Nanos now);

/// wake_wide() (v6.6): true when the waker/wakee pair looks 1:N with N above the LLC size:
/// with factor = sd_llc_size of this_cpu, master = max(flips), slave = min(flips), wide iff
/// slave >= factor && master >= slave * factor. A null waker has zero flips (never wide).
bool wake_wide(const Topology& topo, const WakeeInfo& wakee, const WakeeInfo* waker, int this_cpu);

// --- wake_affine ----------------------------------------------------------------------------

/// wake_affine_idle() (v6.6). Returns this_cpu, prev_cpu, or -1 (nr_cpumask_bits: no opinion):
///  * this_cpu idle and sharing the LLC with prev_cpu (a wakeup from interrupt context):
///    prev_cpu if it is idle too, else this_cpu;
///  * sync and this_cpu runs only the waker: this_cpu;
///  * prev_cpu idle: prev_cpu.
int wake_affine_idle(const Topology& topo, const WakeView& view, int this_cpu, int prev_cpu, bool sync);

/// wake_affine_weight() (v6.6, WA_BIAS on). Compares
///   (load(this) - [sync] waker_load + task_load) * 100 * capacity(prev)
///   (load(prev) - task_load) * (100 + (imbalance_pct - 100) / 2) * capacity(this) [+1 if sync]
/// and returns this_cpu when the first is smaller, else -1. With sync, a waker heavier than
/// this_cpu's whole load returns this_cpu at once.
int wake_affine_weight(const WakeView& view, int imbalance_pct, std::int64_t task_load, std::int64_t waker_load,
                       int this_cpu, int prev_cpu, bool sync);

/// wake_affine() (v6.6): WA_IDLE then WA_WEIGHT on the lowest domain spanning both cpus
/// (imbalance_pct of the SMT domain if they are siblings, else of MC/PKG/NUMA). Returns this_cpu
/// if the wakeup should be pulled to the waker's cpu, else prev_cpu.
int wake_affine(const Topology& topo, const WakeView& view, const WakeParams& params, const WakeeInfo& wakee,
                const WakeeInfo* waker, int this_cpu, int prev_cpu, bool sync);

// --- select_idle_sibling --------------------------------------------------------------------

/// test_idle_cores(): the LLC of `cpu` has a core whose threads are all available_idle.
/// Approximation: the kernel keeps this as a lazily maintained hint (sd_llc_shared->has_idle_cores,
/// set by __update_idle_core() when a cpu goes idle, cleared by a failed select_idle_cpu() scan),
/// which can be stale-true; here it is computed exactly. False without SMT.
bool test_idle_cores(const Topology& topo, const WakeView& view, int cpu);

/// nr_idle_scan of the LLC, as update_idle_cpu_scan() (v6.6) computes it from the LLC's summed
/// cpu_util:  x = sum_util / llc_weight;  tmp = min(x^2 * pct^2 / (10000 * 1024), 1024);
///            nr_idle_scan = (1024 - tmp) * llc_weight / 1024
/// so the scan depth falls quadratically and reaches 0 when the LLC is ~85% (100/117) utilized.
/// The kernel recomputes it only during periodic (not newidle) load balancing at the LLC level and
/// select_idle_cpu() reads that possibly-stale value (WakeView::llc_nr_idle_scan()).
int nr_idle_scan(const Topology& topo, const WakeView& view, int imbalance_pct, int llc);

/// select_idle_core() (v6.6): if every thread of `core_cpu`'s core is available_idle, returns
/// core_cpu. Otherwise records in `idle_cpu` (if still -1) the first thread seen that is in
/// `cpus` (the candidate set: LLC & allowed) and idle or sched_idle, removes the core's threads
/// from `cpus`, and returns -1.
int select_idle_core(const Topology& topo, const WakeView& view, int core_cpu, CpuMask& cpus, int& idle_cpu);

/// select_idle_smt() (v6.6): an allowed, idle (or sched_idle) SMT sibling of `target` inside
/// target's LLC, or -1.
int select_idle_smt(const Topology& topo, const WakeView& view, const CpuMask& allowed, int target);

/// select_idle_cpu() (v6.6): scans target's LLC (intersected with `allowed`) in cpu-number
/// order starting after target and wrapping (for_each_cpu_wrap(cpu, cpus, target + 1)).
///  * SIS_UTIL: nr = nr_idle_scan + 1; nr == 1 (LLC overloaded) returns -1 before scanning,
///    also when has_idle_core; otherwise at most nr_idle_scan cpus are examined in the
///    !has_idle_core case.
///  * has_idle_core: look for a fully idle core (select_idle_core) over the whole LLC, not
///    bounded by nr; if none, fall back to the first idle thread seen.
/// SIS_PROP (off by default in v6.6) is not modelled. Returns a cpu or -1.
int select_idle_cpu(const Topology& topo, const WakeView& view, const WakeParams& params, const CpuMask& allowed,
                    bool has_idle_core, int target);

/// select_idle_sibling() (v6.6), in order:
///  1. target idle (available_idle or sched_idle) -> target (not checked against `allowed`:
///     select_task_rq_fair() applies the fallback, as core.c does);
///  2. prev != target, shares the LLC with target and idle -> prev;
///  3. the waker is a per-cpu kthread in task context, prev == this_cpu, nr_running(this_cpu) <= 1
///     -> prev (I/O-completion stacking);
///  4. p->recent_used_cpu (then set to prev; v5.10: set to prev only when taken): != prev,
///     != target, shares the LLC, idle, allowed
///     -> it;
///  5. SMT: has_idle_core = test_idle_cores(target); if !has_idle_core and prev shares the LLC,
///     an idle SMT sibling of prev;
///  6. select_idle_cpu(); 7. target.
/// With params.v5_10 (the CFS kernels, Linux v5.10), steps 5-7 are v5.10's instead: with an idle
/// core in the LLC, select_idle_core() walks the whole LLC from target for it; then
/// select_idle_cpu() walks from target itself, bounded by SIS_PROP: nr = llc_size *
/// (avg_idle(this_cpu) / 512) / (llc_avg_scan_cost + 1), at least 4 ("if (!--nr) return -1":
/// nr - 1 cpus examined), a walk that ends within its budget reported by record_scan(); then an
/// idle SMT sibling of target (target included); then target. No step tries prev's sibling.
int select_idle_sibling(const Topology& topo, const WakeView& view, const WakeParams& params, WakeeInfo& wakee,
                        int prev, int target, int this_cpu, bool waker_is_per_cpu_kthread);

/// select_fallback_rq() (core.c, v6.6), first two passes: the first allowed cpu on `cpu`'s node,
/// else the first allowed cpu. `allowed` must not be empty.
int select_fallback_rq(const Topology& topo, const CpuMask& allowed, int cpu);

/// The wakeup fast path: core.c select_task_rq() + select_task_rq_fair() for a WF_TTWU wakeup
/// (v6.6). this_cpu is the waker's cpu (smp_processor_id(), e.g. the cpu running NET_RX softirq).
/// `waker` is `current` on this_cpu: the waking task, or, for a wakeup from irq/softirq context,
/// the interrupted task (the idle task's record if the cpu was idle; the kernel really does
/// accumulate wakee_flips on swapper). nullptr = no record: zero flips, nothing recorded.
/// `sync` is WF_SYNC (sock_def_readable() wakes with it, even from softirq); with a null waker the
/// waker load in wake_affine_weight() is 0. waker_is_per_cpu_kthread must already include the
/// kernel's in_task() test where the kernel has it (8b4e74ccb582, v5.17 and stable 5.10.94: false
/// when the waker is serving softirq, e.g. ksoftirqd in __do_softirq; true e.g. for a
/// threaded-NAPI kthread pinned to one cpu); v5.10 as released (params.v5_10) has none.
///  * nr_cpus_allowed == 1: that cpu (no record_wakee, as select_task_rq_fair is not called);
///  * record_wakee(); want_affine = wake_affine && !wake_wide() && this_cpu allowed;
///  * if want_affine and this_cpu, prev_cpu share a domain with SD_WAKE_AFFINE (same node, or
///    node distance <= node_reclaim_distance): new_cpu = wake_affine() when this_cpu != prev_cpu;
///    else new_cpu = prev_cpu;
///  * select_idle_sibling(p, prev_cpu, new_cpu); a result outside `allowed` goes through
///    select_fallback_rq().
/// Never returns a cpu outside wakee.allowed.
int select_task_rq_fair(const Topology& topo, const WakeView& view, const WakeParams& params, WakeeInfo& wakee,
                        int this_cpu, WakeeInfo* waker, bool sync, bool waker_is_per_cpu_kthread, Nanos now);

/// ttwu_queue_cond() under sched_feat(TTWU_QUEUE) (core.c, v6.6): whether try_to_wake_up() on
/// this_cpu hands the activation of a task chosen for `cpu` to `cpu`'s wake list (+ IPI) instead
/// of enqueueing it remotely itself: false if TTWU_QUEUE is off, cpu not allowed, or
/// cpu == this_cpu; true if the cpus do not share an LLC; otherwise true iff
/// nr_running(cpu) == 0 (wakee cpu idle). While such a wakeup is pending the target cpu is not
/// available_idle (ttwu_pending) -- the view must reflect that.
bool ttwu_queue_wakelist(const Topology& topo, const WakeView& view, const WakeParams& params, const CpuMask* allowed,
                         int cpu, int this_cpu);

// --- load balancing helpers -----------------------------------------------------------------

enum class BalanceScope : std::uint8_t { kCore, kLlc, kNode, kSystem };

/// Simplified find_busiest_queue() (v6.6, migrate_task flavour): among the cpus of this_cpu's
/// core / LLC / node / machine other than this_cpu, the one with the most runnable tasks, if that
/// is more than 1; ties go to the higher cpu_load, then the lower cpu id. -1 if none. The group
/// statistics, imbalance calculation and LBF_* retries of load_balance() are the caller's (or not
/// modelled). The kernel's newidle_balance() also skips balancing when the root domain is not
/// overloaded (Kernel::load_balance() does) or rq->avg_idle is below the domain's
/// max_newidle_lb_cost (not modelled). A caller that keeps the set of cpus with nr_running >= 2
/// (`overloaded`) lets the scan walk only those: no other cpu can win.
int find_busiest_cpu(const Topology& topo, const WakeView& view, int this_cpu, BalanceScope scope = BalanceScope::kLlc,
                     const CpuMask* overloaded = nullptr);

/// task_hot() (v6.6), the time test: a task that last ran less than migration_cost ago is cache
/// hot and can_migrate_task() leaves it alone unless balancing keeps failing. migration_cost -1 =
/// always hot, 0 = never. Callers model the other cases: never hot across SMT siblings
/// (SD_SHARE_CPUCAPACITY), non-CFS and SCHED_IDLE tasks are never hot.
bool task_hot(Nanos now, Nanos last_ran, Nanos migration_cost = kSchedMigrationCostNs);

}  // namespace napisim
