// napisim: fair-class run queue — EEVDF (Linux v6.6) and CFS (Linux v5.10). See fair.hpp.
#include "sim/kernel/fair.hpp"

#include <algorithm>
#include <array>

#include "sim/core/error.hpp"

namespace napisim {

namespace {

// sched_prio_to_weight[40] (kernel/sched/core.c): nice -20 .. 19, ratio ~1.25 per step.
constexpr std::array<std::int64_t, 40> kPrioToWeight = {
    /* -20 */ 88761, 71755, 56483, 46273, 36291,
    /* -15 */ 29154, 23254, 18705, 14949, 11916,
    /* -10 */ 9548,  7620,  6100,  4904,  3906,
    /*  -5 */ 3121,  2501,  1991,  1586,  1277,
    /*   0 */ 1024,  820,   655,   526,   423,
    /*   5 */ 335,   272,   215,   172,   137,
    /*  10 */ 110,   87,    70,    56,    45,
    /*  15 */ 36,    29,    23,    18,    15,
};

int ilog2(int v) {
  int r = 0;
  while (v > 1) {
    v >>= 1;
    ++r;
  }
  return r;
}

// div_s64(a * b, c): 128-bit product, division truncating toward zero.
Nanos mul_div(Nanos a, std::int64_t b, std::int64_t c) {
  return static_cast<Nanos>(static_cast<__int128>(a) * b / c);
}

}  // namespace

std::int64_t nice_to_weight(int nice) {
  NAPISIM_ASSERT(nice >= -20 && nice <= 19, "nice out of [-20, 19]");
  return kPrioToWeight[static_cast<std::size_t>(nice + 20)];
}

std::int64_t sched_weight(SchedPolicy policy, int nice) {
  return policy == SchedPolicy::kIdle ? kWeightIdleprio : nice_to_weight(nice);
}

Nanos calc_delta_fair(Nanos delta, std::int64_t weight) {
  if (weight == kNice0Load) return delta;
  return mul_div(delta, kNice0Load, weight);
}

void set_sched_attr(SchedEntity& se, SchedPolicy policy, int nice, int rt_priority) {
  NAPISIM_ASSERT(!se.on_rq, "set_sched_attr on a queued entity");
  NAPISIM_ASSERT(!is_rt_policy(policy) || (rt_priority >= 1 && rt_priority <= 99), "RT priority out of [1, 99]");
  se.policy = policy;
  se.nice = nice;
  se.rt_priority = is_rt_policy(policy) ? rt_priority : 0;
  se.weight = sched_weight(policy, nice);
}

int FairParams::scaling_factor() const {
  // get_update_sysctl_factor(), SCHED_TUNABLESCALING_LOG.
  const int cpus = std::clamp(nr_cpus, 1, 8);
  return 1 + ilog2(cpus);
}

Nanos FairParams::scaled(Nanos normalized) const {
  return normalized * scaling_factor();
}

// ---------------------------------------------------------------------------------------------

FairRq::FairRq(const FairParams& params)
    : params_(params)
    , base_slice_(params.scaled(params.base_slice_ns))
    , latency_(params.scaled(params.sched_latency_ns))
    , min_gran_(params.scaled(params.min_granularity_ns))
    , wakeup_gran_(params.scaled(params.wakeup_granularity_ns))
    // sched_nr_latency = DIV_ROUND_UP(sysctl_sched_latency, sysctl_sched_min_granularity) = 8.
    , nr_latency_(static_cast<int>((latency_ + min_gran_ - 1) / std::max<Nanos>(min_gran_, 1))) {
  NAPISIM_ASSERT(base_slice_ > 0 && latency_ > 0 && min_gran_ > 0 && params.tick_ns > 0,
                 "fair tunables must be positive");
  queue_.reserve(16);
}

// --- avg_vruntime / eligibility (v6.6 avg_vruntime(), vruntime_eligible()) -------------------

FairRq::Sums FairRq::sums() const {
  // The kernel keeps Σ key*w and Σ w incrementally (avg_vruntime_add/sub/update); the sums are
  // exact integers, so recomputing them over the (small) queue gives identical values.
  Sums s;
  for (const SchedEntity* se : queue_) {
    s.avg += static_cast<__int128>(se->vruntime - min_vruntime_) * se->weight;
    s.load += se->weight;
  }
  if (curr_ && curr_->on_rq) {
    s.avg += static_cast<__int128>(curr_->vruntime - min_vruntime_) * curr_->weight;
    s.load += curr_->weight;
  }
  return s;
}

Nanos FairRq::avg_vruntime() const {
  const Sums s = sums();
  __int128 avg = s.avg;
  if (s.load != 0) {
    // "sign flips effective floor / ceil": floor division, so avg_vruntime() of an entity is
    // always eligible (left bias).
    if (avg < 0) avg -= s.load - 1;
    avg /= s.load;
  }
  return min_vruntime_ + static_cast<Nanos>(avg);
}

bool FairRq::vruntime_eligible(const Sums& s, Nanos vruntime) const {
  // lag_i >= 0  <=>  Σ (v_j - v0) w_j >= (v_i - v0) Σ w_j  (no division, exact).
  return s.avg >= static_cast<__int128>(vruntime - min_vruntime_) * s.load;
}

bool FairRq::entity_eligible(const SchedEntity& se) const {
  return vruntime_eligible(sums(), se.vruntime);
}

Nanos FairRq::lag_limit(const SchedEntity& se) const {
  // entity_lag(): limit = calc_delta_fair(max(2*slice, TICK_NSEC), se).
  return calc_delta_fair(std::max<Nanos>(2 * se.slice, params_.tick_ns), se.weight);
}

// --- min_vruntime (update_min_vruntime(), v5.10 and v6.6/6.8) ---------------------------------

SchedEntity* FairRq::find_leftmost() const {
  // __pick_first_entity() of the vruntime-ordered tree; equal keys go right in the rbtree, so
  // the first-enqueued entity wins ties.
  SchedEntity* best = nullptr;
  for (SchedEntity* se : queue_) {
    if (!best || se->vruntime < best->vruntime) best = se;
  }
  return best;
}

void FairRq::add_to_queue(SchedEntity* se) {
  // The kernel caches the tree's leftmost node (rb_root_cached) for the same reason: queued
  // vruntimes do not change, so a newcomer is leftmost only if strictly left of it (ties go right).
  queue_.push_back(se);
  if (!leftmost_ || se->vruntime < leftmost_->vruntime) leftmost_ = se;
}

void FairRq::update_min_vruntime() {
  // v6.6 used the leftmost entity of its vruntime-ordered tree; v6.8 the augmented min_vruntime.
  // Both are the minimum queued vruntime. V and eligibility are independent of this reference.
  SchedEntity* curr = (curr_ && curr_->on_rq) ? curr_ : nullptr;
  Nanos vruntime = min_vruntime_;
  if (curr) vruntime = curr->vruntime;
  if (const SchedEntity* se = leftmost()) vruntime = curr ? std::min(vruntime, se->vruntime) : se->vruntime;
  // Ensure we never gain time by being placed backwards.
  min_vruntime_ = std::max(min_vruntime_, vruntime);
}

// --- CFS period / slice (v5.10 __sched_period(), sched_slice()) -------------------------------

Nanos FairRq::sched_period(int nr_running) const {
  if (nr_running > nr_latency_) return nr_running * min_gran_;
  return latency_;
}

Nanos FairRq::sched_slice(const SchedEntity& se) const {
  const Nanos period = sched_period(nr_running_ + (se.on_rq ? 0 : 1));
  const std::int64_t load = load_ + (se.on_rq ? 0 : se.weight);
  // __calc_delta(slice, se->load.weight, load) = slice * w / W.
  return mul_div(period, se.weight, load);
}

// --- placement ----------------------------------------------------------------------------

void FairRq::place_entity_eevdf(SchedEntity& se, unsigned flags) {
  // v6.6 place_entity(). Called with se not yet accounted (nr_running and V exclude it).
  const Nanos vruntime = avg_vruntime();
  Nanos lag = 0;
  se.slice = base_slice_;
  Nanos vslice = calc_delta_fair(se.slice, se.weight);

  if (params_.place_lag && nr_running_ > 0) {
    // Adding an entity with lag vl moves V by -w*vl/(W+w); inflate the lag so that after the
    // placement the entity has exactly its saved lag: vl_i = (W + w_i) * vl'_i / W.
    lag = se.vlag;
    std::int64_t load = static_cast<std::int64_t>(sums().load);  // avg_load + curr (if on_rq)
    const __int128 inflated = static_cast<__int128>(lag) * (load + se.weight);
    if (load == 0) load = 1;
    lag = static_cast<Nanos>(inflated / load);
  }

  se.vruntime = vruntime - lag;

  // PLACE_DEADLINE_INITIAL: new tasks start with half a slice to ease into the competition.
  if (params_.place_deadline_initial && (flags & enqueue_flags::kInitial)) vslice /= 2;

  // EEVDF: vd_i = ve_i + r_i / w_i
  se.deadline = se.vruntime + vslice;
}

void FairRq::place_entity_cfs(SchedEntity& se, bool initial) {
  // v5.10 place_entity().
  Nanos vruntime = min_vruntime_;
  // START_DEBIT: the current period is already promised to the running tasks.
  if (initial && params_.start_debit) vruntime += calc_delta_fair(sched_slice(se), se.weight);
  // Sleeps up to a single latency don't count (GENTLE_FAIR_SLEEPERS: half of it).
  if (!initial) {
    Nanos thresh = latency_;
    if (params_.gentle_fair_sleepers) thresh >>= 1;
    vruntime -= thresh;
  }
  // Ensure we never gain time by being placed backwards.
  se.vruntime = std::max(se.vruntime, vruntime);
}

// --- enqueue / dequeue ----------------------------------------------------------------------

void FairRq::enqueue(SchedEntity& se, unsigned flags) {
  NAPISIM_ASSERT(!se.on_rq, "enqueue of an entity already on a run queue");
  NAPISIM_ASSERT(is_fair_policy(se.policy), "FairRq::enqueue of a non-fair entity");
  const bool is_curr = (&se == curr_);

  if (is_eevdf()) {
    // A new task has no lag (__sched_fork()); then v6.6 enqueue_entity(): place_entity() for
    // every enqueue.
    if (flags & enqueue_flags::kInitial) se.vlag = 0;
    place_entity_eevdf(se, flags);
  } else {
    // v5.10 enqueue_entity(): vruntime is relative to min_vruntime unless this is a wakeup on
    // the same rq (blocked tasks keep absolute vruntime).
    const bool renorm = !(flags & enqueue_flags::kWakeup) || (flags & enqueue_flags::kMigrated);
    if (renorm) se.vruntime += min_vruntime_;
    // task_fork_fair(): place_entity(initial = 1) before the first enqueue.
    if (flags & enqueue_flags::kInitial) place_entity_cfs(se, /*initial=*/true);
    if (flags & enqueue_flags::kWakeup) place_entity_cfs(se, /*initial=*/false);
  }

  // account_entity_enqueue() + __enqueue_entity() ('current' is not kept in the tree).
  if (!is_curr) add_to_queue(&se);
  se.on_rq = true;
  ++nr_running_;
  load_ += se.weight;
}

void FairRq::dequeue(SchedEntity& se, unsigned flags) {
  NAPISIM_ASSERT(se.on_rq, "dequeue of an entity that is not queued");

  // v6.6 update_entity_lag(): vlag = clamp(V - v_i), with se still counted in V.
  if (is_eevdf()) {
    const Nanos limit = lag_limit(se);
    se.vlag = std::clamp<Nanos>(avg_vruntime() - se.vruntime, -limit, limit);
  }

  clear_buddies(&se);
  if (&se != curr_) remove_from_queue(&se);
  se.on_rq = false;
  --nr_running_;
  load_ -= se.weight;

  // v5.10: normalize after update_curr(), before update_min_vruntime().
  if (!is_eevdf() && !(flags & dequeue_flags::kSleep)) se.vruntime -= min_vruntime_;

  // DEQUEUE_SAVE without DEQUEUE_MOVE: don't advance min_vruntime, or the entity would be
  // placed back further than it started.
  if (!(flags & dequeue_flags::kSave)) update_min_vruntime();
}

void FairRq::detach_sleeping(SchedEntity& se) const {
  NAPISIM_ASSERT(!se.on_rq, "detach_sleeping of a queued entity");
  // v5.10 migrate_task_rq_fair(), TASK_WAKING: blocked tasks keep absolute vruntime.
  if (!is_eevdf()) se.vruntime -= min_vruntime_;
}

void FairRq::remove_from_queue(SchedEntity* se) {
  const auto it = std::find(queue_.begin(), queue_.end(), se);
  NAPISIM_ASSERT(it != queue_.end(), "entity not in this run queue");
  queue_.erase(it);
  if (se == leftmost_) leftmost_ = find_leftmost();
}

// --- update_curr / tick -------------------------------------------------------------------

bool FairRq::update_curr(Nanos delta_exec) {
  if (!curr_ || delta_exec <= 0) return false;
  SchedEntity& curr = *curr_;
  curr.sum_exec_runtime += delta_exec;
  curr.vruntime += calc_delta_fair(delta_exec, curr.weight);

  bool resched = false;
  if (is_eevdf()) {
    // v6.6 update_deadline(): the request (slice) is used up once vruntime reaches the deadline.
    if (curr.vruntime - curr.deadline >= 0) {
      curr.slice = base_slice_;
      curr.deadline = curr.vruntime + calc_delta_fair(curr.slice, curr.weight);
      if (nr_running_ > 1) {
        resched = true;
        clear_buddies(&curr);
      }
    }
  }
  update_min_vruntime();
  return resched;
}

bool FairRq::tick() {
  // entity_tick(): update_curr() is the caller's; v6.6 has no check_preempt_tick().
  if (is_eevdf()) return false;
  if (!curr_ || !curr_->on_rq || nr_running_ <= 1) return false;

  // v5.10 check_preempt_tick().
  SchedEntity& curr = *curr_;
  const Nanos ideal_runtime = sched_slice(curr);
  const Nanos delta_exec = curr.sum_exec_runtime - curr.prev_sum_exec_runtime;
  if (delta_exec > ideal_runtime) {
    // Ran long enough: make sure it is not re-elected due to buddy favours.
    clear_buddies(&curr);
    return true;
  }
  // A task that missed wakeup preemption by a narrow margin doesn't wait for a full slice.
  if (delta_exec < min_gran_) return false;
  const SchedEntity* se = leftmost();
  if (!se) return false;
  const Nanos delta = curr.vruntime - se->vruntime;
  if (delta < 0) return false;
  return delta > ideal_runtime;
}

// --- pick -----------------------------------------------------------------------------------

SchedEntity* FairRq::resolve(const SchedEntity* buddy) const {
  if (!buddy) return nullptr;
  if (buddy == curr_) return curr_->on_rq ? curr_ : nullptr;
  for (SchedEntity* se : queue_) {
    if (se == buddy) return se;
  }
  return nullptr;
}

SchedEntity* FairRq::pick_eevdf() const {
  // v6.6 __pick_eevdf() (with the v6.6-rc6 heap-search fix), semantics without the tree.
  SchedEntity* curr = (curr_ && curr_->on_rq) ? curr_ : nullptr;
  if (queue_.empty()) return curr;  // single entity (v6.8 shortcut; same result in v6.6)

  const Sums s = sums();
  if (curr && !vruntime_eligible(s, curr->vruntime)) curr = nullptr;

  // Once selected, run a task until it either becomes non-eligible or until it gets a new
  // slice (the HACK in set_next_entity(): vlag == deadline).
  if (params_.run_to_parity && curr && curr->vlag == curr->deadline) return curr;

  // Earliest eligible deadline; best starts as curr and is replaced only by a strictly earlier
  // deadline (deadline_gt(best, se)), so curr wins ties.
  SchedEntity* best = curr;
  for (SchedEntity* se : queue_) {
    if (!vruntime_eligible(s, se->vruntime)) continue;
    if (!best || se->deadline - best->deadline < 0) best = se;
  }
  // "EEVDF scheduling fail, picking leftmost" (cannot happen with exact eligibility).
  if (!best) best = leftmost();
  return best;
}

int FairRq::wakeup_preempt_entity(const SchedEntity& curr, const SchedEntity& se) const {
  // v5.10 wakeup_preempt_entity(): -1 if se is right of curr, 1 if more than wakeup_gran(se)
  // left of it, else 0. wakeup_gran() converts the granularity to se's virtual time.
  const Nanos vdiff = curr.vruntime - se.vruntime;
  if (vdiff <= 0) return -1;
  const Nanos gran = calc_delta_fair(wakeup_gran_, se.weight);
  return vdiff > gran ? 1 : 0;
}

SchedEntity* FairRq::pick_cfs() const {
  // v5.10 pick_next_entity() (skip buddy not modelled).
  SchedEntity* curr = (curr_ && curr_->on_rq) ? curr_ : nullptr;
  SchedEntity* left = leftmost();
  if (!left || (curr && curr->vruntime < left->vruntime)) left = curr;
  if (!left) return nullptr;

  SchedEntity* se = left;  // ideally we run the leftmost entity
  SchedEntity* next = resolve(next_);
  SchedEntity* last = resolve(last_);
  if (next && wakeup_preempt_entity(*next, *left) < 1) {
    se = next;  // someone really wants this to run; if it's not unfair, run it
  } else if (last && wakeup_preempt_entity(*last, *left) < 1) {
    se = last;  // try to return the CPU to a preempted task
  }
  return se;
}

SchedEntity* FairRq::pick_next() const {
  if (!is_eevdf()) return pick_cfs();
  // v6.6 pick_next_entity(): NEXT_BUDDY affects latency but not fairness.
  if (params_.next_buddy) {
    SchedEntity* next = resolve(next_);
    if (next && entity_eligible(*next)) return next;
  }
  return pick_eevdf();
}

SchedEntity* FairRq::pick_next_task() {
  SchedEntity* se = pick_next();
  if (!se) {
    put_prev();
    return nullptr;
  }
  clear_buddies(se);
  if (se != curr_) {
    put_prev();
    set_next(*se);
  }
  return se;
}

void FairRq::set_next(SchedEntity& se) {
  if (&se == curr_) return;
  NAPISIM_ASSERT(curr_ == nullptr, "set_next with a current entity: put_prev() first");
  clear_buddies(&se);
  // 'current' is not kept within the tree.
  if (se.on_rq) {
    remove_from_queue(&se);
    // HACK (v6.6): stash a copy of deadline at the point of pick in vlag, which isn't used
    // until dequeue; pick_eevdf()'s RUN_TO_PARITY test compares against it.
    if (is_eevdf()) se.vlag = se.deadline;
  }
  curr_ = &se;
  se.prev_sum_exec_runtime = se.sum_exec_runtime;
}

void FairRq::put_prev() {
  if (!curr_) return;
  // Put 'current' back into the tree (if still runnable; else the dequeue already accounted).
  if (curr_->on_rq) add_to_queue(curr_);
  curr_ = nullptr;
}

// --- wakeup preemption ----------------------------------------------------------------------

void FairRq::clear_buddies(const SchedEntity* se) {
  if (next_ == se) next_ = nullptr;
  if (last_ == se) last_ = nullptr;
}

bool FairRq::wakeup_preempt(const SchedEntity& woken) {
  // v6.6 check_preempt_wakeup() / v5.10 check_preempt_wakeup(), flat hierarchy.
  NAPISIM_ASSERT(woken.on_rq, "wakeup_preempt: woken entity must be enqueued first");
  if (!curr_ || !curr_->on_rq) return true;
  if (&woken == curr_) return false;

  const bool scale = nr_running_ >= nr_latency_;  // v5.10 only
  bool next_buddy_marked = false;
  // set_next_buddy() refuses SCHED_IDLE tasks.
  if (params_.next_buddy && (is_eevdf() || scale) && woken.policy != SchedPolicy::kIdle) {
    next_ = &woken;
    next_buddy_marked = true;
  }

  bool preempt = false;
  if (curr_->policy == SchedPolicy::kIdle && woken.policy != SchedPolicy::kIdle) {
    // Idle tasks are by definition preempted by non-idle tasks.
    preempt = true;
  } else if (woken.policy != SchedPolicy::kNormal || !params_.wakeup_preemption) {
    // Batch and idle tasks do not preempt non-idle tasks (their preemption is tick driven).
    return false;
  } else if (is_eevdf()) {
    preempt = pick_eevdf() == &woken;
  } else if (wakeup_preempt_entity(*curr_, woken) == 1) {
    // Bias pick_next to pick the entity that is triggering this preemption.
    if (!next_buddy_marked) next_ = &woken;
    preempt = true;
  }
  if (!preempt) return false;

  // v5.10 LAST_BUDDY: return the CPU to the preempted task (only under load).
  if (!is_eevdf() && params_.last_buddy && scale && curr_->policy != SchedPolicy::kIdle) last_ = curr_;
  return true;
}

// --- reweight ---------------------------------------------------------------------------------

void FairRq::set_nice(SchedEntity& se, int nice) {
  NAPISIM_ASSERT(is_fair_policy(se.policy), "set_nice on a non-fair entity");
  se.nice = nice;
  const std::int64_t old_weight = se.weight;
  const std::int64_t weight = sched_weight(se.policy, nice);
  if (weight == old_weight) return;

  if (is_eevdf()) {
    if (se.on_rq) {
      // v6.7 reweight_eevdf(): keep lag_i = w_i * (V - v_i) and therefore V:
      //   v' = V - (V - v) * w / w',   vd' = V + (vd - V) * w / w'.
      // (A current entity loses its RUN_TO_PARITY marker, as in the kernel.)
      const Nanos avruntime = avg_vruntime();
      se.vruntime = avruntime - mul_div(avruntime - se.vruntime, old_weight, weight);
      se.deadline = avruntime + mul_div(se.deadline - avruntime, old_weight, weight);
      if (&se != curr_) leftmost_ = find_leftmost();  // a queued vruntime moved
    } else {
      // se->vlag = V - v_i while lag_i = w_i * (V - v_i): scale with the weight.
      se.vlag = mul_div(se.vlag, old_weight, weight);
    }
  }
  // v5.10 CFS: reweight_entity() only changes the load; vruntime is kept.
  if (se.on_rq) load_ += weight - old_weight;
  se.weight = weight;
  if (se.on_rq) update_min_vruntime();
}

}  // namespace napisim
