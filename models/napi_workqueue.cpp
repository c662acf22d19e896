// napi_workqueue: NAPI polls as work items on one WQ_UNBOUND | WQ_HIGHPRI workqueue.
//
// Mirrors Felix Fietkau's 2020 proposal "net: add support for threaded NAPI polling"
// (RFC <20200726163119.86162-1-nbd@nbd.name>, PATCH <20200729165058.83984-1-nbd@nbd.name>, against
// net-next ~v5.8; never merged; kernel-napi.md 5.1), on the v5.8 workqueue (kernel/workqueue.c):
//   net_dev_init()           napi_workq = alloc_workqueue("napi_workq", WQ_UNBOUND | WQ_HIGHPRI,
//                            WQ_UNBOUND_MAX_ACTIVE)
//   __napi_schedule()        THREADED: queue_work(napi_workq, &n->work) instead of the poll_list
//                            (here a NapiScheduleHook)
//   napi_workfn()            loop { local_bh_disable(); __napi_poll(n, &repoll);
//                            local_bh_enable(); if (!repoll) return; if (!need_resched())
//                            continue; queue_work(napi_workq, work); return; } -- "have to pay for
//                            the latency of task switch even if napi is scheduled"
// Workqueue mechanics (v5.8):
//   __queue_work()           PENDING test-and-set; the pool of the queueing CPU's NUMA node
//                            (wq_numa; unbound_pwq_by_node), or the pool still executing the item
//                            (non-reentrancy); nr_active < max_active else the inactive list
//   insert_work()            worklist tail; unbound workers are WORKER_NOT_RUNNING, so nr_running
//                            is 0 and every insert wakes first_idle_worker() (the head of the LIFO
//                            idle_list: the most recently idle worker; it stays listed until it runs)
//   worker_thread()          leave idle; if the worklist is empty sleep; if no idle worker is left,
//                            manage_workers() -> maybe_create_worker() -> create_worker() (the
//                            pool always keeps one idle worker: workers are created on demand);
//                            process items while the worklist is non-empty (keep_working())
//   process_one_work()       an item already executing on another worker of the pool goes to that
//                            worker's scheduled list; clear PENDING; wake another idle worker if work
//                            remains (chaining, for NOT_RUNNING workers); run; cond_resched()
//   workers                  "kworker/u<pool>:<n>", SCHED_NORMAL at HIGHPRI_NICE_LEVEL (-20), allowed
//                            on the pool cpumask (one cpumask and one nice for the whole queue, via
//                            WQ_SYSFS), placed at wakeup by select_task_rq_fair
// Assumptions: create_worker() (kthread_create_on_node via kthreadd, worker_attach_to_pool) is
// charged as create_worker_ns of CPU time to the managing worker; idle workers are never reaped
// (IDLE_WORKER_TIMEOUT is 300 s, longer than a run); the mayday/rescuer path is not modelled;
// max_active bounds the concurrently active items of a pool, hence the number of busy workers.
#include <algorithm>
#include <deque>

#include "sim/kernel/kernel.hpp"
#include "sim/model/model.hpp"

namespace napisim {

namespace {

struct NapiWorkqueueParams {
  std::int64_t nice = -20;                // HIGHPRI_NICE_LEVEL = MIN_NICE (WQ_HIGHPRI)
  std::string cpumask = "";               // /sys/devices/virtual/workqueue/napi_workq/cpumask
  std::int64_t max_active = 0;            // 0 = WQ_UNBOUND_MAX_ACTIVE = max(512, 4 * nr_cpus)
  bool numa = true;                       // wq_numa: one worker pool per NUMA node
  std::int64_t create_worker_ns = 30000;  // create_worker(): kthread creation [INFER]

  template <class V>
  static void fields(V& v) {
    v("nice", &NapiWorkqueueParams::nice, "", "Nice value of the workqueue's kworkers (WQ_HIGHPRI: -20)",
      Range{-20, 19});
    v("cpumask", &NapiWorkqueueParams::cpumask, "cpulist", "The workqueue's cpumask (\"\" = all CPUs)");
    v("max_active", &NapiWorkqueueParams::max_active, "items",
      "Max concurrently active work items per pool (0 = WQ_UNBOUND_MAX_ACTIVE)", Range{0, 1e6});
    v("numa", &NapiWorkqueueParams::numa, "", "wq_numa: per-NUMA-node worker pools (else one pool)");
    v("create_worker_ns", &NapiWorkqueueParams::create_worker_ns, "ns",
      "CPU time of creating a kworker on demand, charged to the managing worker", Range{0, 1e9});
  }
  bool operator==(const NapiWorkqueueParams&) const = default;
};

class NapiWorkqueue : public RxModel, public NapiScheduleHook {
 public:
  NapiWorkqueue(const NapiWorkqueueParams& p, std::string path) : p_(p), path_(std::move(path)) {}

  void attach(Kernel& k, const std::vector<int>& nics) override {
    k_ = &k;
    const int ncpu = k.nr_cpus();
    if (pools_.empty()) {
      const CpuMask mask = CpuMask::parse(p_.cpumask, ncpu, path_ + "/cpumask");
      if (mask.none()) throw ConfigError(path_ + "/cpumask", "expected at least one CPU");
      max_active_ = p_.max_active > 0 ? static_cast<int>(p_.max_active) : std::max(512, 4 * ncpu);
      // apply_wqattrs_prepare(): the default pwq's pool spans the whole cpumask; with wq_numa each
      // node whose CPUs intersect it gets a pool of its part (get_unbound_pool() shares pools with
      // equal attrs, so on one node the node pool is the default one).
      dfl_pool_ = new_pool(mask);
      node_pool_.assign(static_cast<std::size_t>(k.topo().nr_nodes()), -1);
      if (p_.numa) {
        for (int node = 0; node < k.topo().nr_nodes(); ++node) {
          CpuMask m(ncpu);
          for (int c : k.topo().cpus_of_node(node))
            if (mask.test(c)) m.set(c);
          if (m.any()) node_pool_[static_cast<std::size_t>(node)] = m == mask ? dfl_pool_ : new_pool(m);
        }
      }
    }
    if (state_.size() < k.napis().size()) state_.resize(k.napis().size());
    for (int i : nics)
      for (auto& ch : k.nics()[static_cast<std::size_t>(i)]->channels) {
        Napi& n = ch->napi;
        // THREADED in Felix's patch; a mainline kthread stops receiving schedules (a NAPI it owns
        // finishes there).
        Kernel::napi_set_threaded(n, false);
        n.hook = this;
      }
  }

  // ____napi_schedule() with the THREADED bit: queue_work(napi_workq, &n->work).
  void schedule(Kernel& /*k*/, Napi& n, Cpu& this_cpu) override { queue_work(n, this_cpu.id); }

  void report(Json& out) const override {
    Json workers = Json::array();
    int ran = 0;
    for (const auto& w : workers_) {
      Json j;
      j["name"] = w->task->name;
      j["items"] = w->items;
      j["polls"] = w->polls;
      j["exec_ns"] = w->task->exec_ns;
      j["wakeups"] = w->task->wakeups;
      j["migrations"] = w->task->migrations;
      workers.push_back(j);
      if (w->polls > 0) ++ran;
    }
    out["workers"] = workers;
    out["nr_workers"] = workers_.size();
    out["workers_that_polled"] = ran;
    out["requeues"] = requeues_;
  }

 private:
  struct Worker;
  struct Pool {
    int id = 0;
    CpuMask mask;
    std::deque<Napi*> worklist;
    std::deque<Napi*> inactive;      // pwq->inactive_works (nr_active >= max_active)
    std::vector<Worker*> idle_list;  // back = list head (worker_enter_idle() list_add)
    std::vector<Worker*> workers;
    int nr_active = 0;
    bool manager_active = false;  // POOL_MANAGER_ACTIVE
    int next_worker_id = 0;
  };
  struct Worker {
    Task* task = nullptr;
    Pool* pool = nullptr;
    Napi* current = nullptr;      // current_work
    std::deque<Napi*> scheduled;  // worker->scheduled (collisions)
    bool idle = false;
    WaitQueue wq;
    std::uint64_t items = 0, polls = 0;
  };
  struct WorkState {
    bool pending = false;  // WORK_STRUCT_PENDING
    Pool* pool = nullptr;  // pool of the last queueing
  };

  int new_pool(const CpuMask& m) {
    auto pool = std::make_unique<Pool>();
    pool->id = 2 * k_->nr_cpus() + static_cast<int>(pools_.size());  // after the per-cpu pools
    pool->mask = m;
    pools_.push_back(std::move(pool));
    // get_unbound_pool(): a new pool starts with one idle worker.
    Worker& w = create_worker(*pools_.back());
    enter_idle(w);
    return static_cast<int>(pools_.size()) - 1;
  }

  Pool& pool_of_cpu(int cpu) {
    const int p = node_pool_[static_cast<std::size_t>(k_->topo().node_of(cpu))];
    return *pools_[static_cast<std::size_t>(p >= 0 ? p : dfl_pool_)];
  }

  Worker* executing(Pool& pool, const Napi* n) {
    for (Worker* w : pool.workers)
      if (w->current == n) return w;
    return nullptr;
  }

  Worker& create_worker(Pool& pool) {
    auto w = std::make_unique<Worker>();
    w->pool = &pool;
    const std::string name = "kworker/u" + std::to_string(pool.id) + ":" + std::to_string(pool.next_worker_id++);
    Worker& wr = *w;
    // Asleep until start_worker() wakes it.
    w->task = &k_->kthread_create(
        name, TaskKind::kKthread, pool.mask, CpuClass::kKthread, [&](Task& t) { return worker_thread(t, wr); },
        SchedPolicy::kNormal, static_cast<int>(p_.nice));
    pool.workers.push_back(w.get());
    workers_.push_back(std::move(w));
    return *workers_.back();
  }

  void enter_idle(Worker& w) {
    w.idle = true;
    w.pool->idle_list.push_back(&w);
  }
  void leave_idle(Worker& w) {
    if (!w.idle) return;
    w.idle = false;
    auto& l = w.pool->idle_list;
    l.erase(std::find(l.begin(), l.end(), &w));
  }

  // wake_up_worker(): first_idle_worker() (the most recently idle one), if any.
  void wake_up_worker(Pool& pool, int this_cpu) {
    if (pool.idle_list.empty()) return;
    k_->try_to_wake_up(*pool.idle_list.back()->task, this_cpu);
  }

  void insert_work(Pool& pool, Napi& n, int this_cpu) {
    pool.worklist.push_back(&n);
    // __need_more_worker(): nr_running is always 0 for unbound (NOT_RUNNING) workers.
    wake_up_worker(pool, this_cpu);
  }

  bool queue_work(Napi& n, int this_cpu) {
    WorkState& s = state_[static_cast<std::size_t>(n.id)];
    if (s.pending) return false;
    s.pending = true;
    Pool* pool = &pool_of_cpu(this_cpu);
    // Non-reentrancy: an item still running on a worker of its last pool is queued there.
    if (s.pool && s.pool != pool && executing(*s.pool, &n)) pool = s.pool;
    s.pool = pool;
    if (pool->nr_active < max_active_) {
      ++pool->nr_active;
      insert_work(*pool, n, this_cpu);
    } else {
      pool->inactive.push_back(&n);
    }
    return true;
  }

  // pwq_dec_nr_in_flight(): an item finished; activate the first inactive one.
  void dec_nr_active(Pool& pool) {
    --pool.nr_active;
    if (!pool.inactive.empty() && pool.nr_active < max_active_) {
      Napi* n = pool.inactive.front();
      pool.inactive.pop_front();
      ++pool.nr_active;
      pool.worklist.push_back(n);
    }
  }

  // napi_workfn() of Felix Fietkau's PATCH version (reuses __napi_poll()).
  Proc<void> napi_workfn(Task& t, Worker& w, Napi& n) {
    for (;;) {
      bool repoll = false;
      k_->local_bh_disable(t);
      ++w.polls;
      co_await k_->napi_poll(k_->task_ctx(t, CpuClass::kKthread), n, repoll);
      co_await k_->local_bh_enable(t);
      if (!repoll) co_return;
      if (!k_->cpu(t.cpu).need_resched) continue;
      // "have to pay for the latency of task switch even if napi is scheduled"
      ++requeues_;
      queue_work(n, t.cpu);
      co_return;
    }
  }

  Proc<void> process_one_work(Task& t, Worker& w, Napi& n) {
    Pool& pool = *w.pool;
    if (Worker* other = executing(pool, &n); other && other != &w) {
      other->scheduled.push_back(&n);  // move_linked_works(): run after the current execution
      co_return;
    }
    state_[static_cast<std::size_t>(n.id)].pending = false;  // set_work_pool_and_clear_pending()
    w.current = &n;
    ++w.items;
    if (!pool.worklist.empty()) wake_up_worker(pool, t.cpu);  // chain NOT_RUNNING workers
    co_await napi_workfn(t, w, n);
    w.current = nullptr;
    dec_nr_active(pool);
    co_await k_->cond_resched(t);
  }

  Proc<void> worker_thread(Task& t, Worker& w) {
    Pool& pool = *w.pool;
    for (;;) {
      leave_idle(w);                       // woke_up:
      for (;;) {                           // recheck:
        if (pool.worklist.empty()) break;  // !need_more_worker()
        if (pool.idle_list.empty() && !pool.manager_active) {
          // !may_start_working() -> manage_workers() -> maybe_create_worker()
          pool.manager_active = true;
          co_await k_->exec(k_->task_ctx(t, CpuClass::kKthread), p_.create_worker_ns);
          Worker& nw = create_worker(pool);
          enter_idle(nw);  // start_worker()
          k_->try_to_wake_up(*nw.task, t.cpu);
          pool.manager_active = false;
          continue;
        }
        do {
          Napi* n = pool.worklist.front();
          pool.worklist.pop_front();
          co_await process_one_work(t, w, *n);
          while (!w.scheduled.empty()) {  // process_scheduled_works()
            Napi* s = w.scheduled.front();
            w.scheduled.pop_front();
            co_await process_one_work(t, w, *s);
          }
        } while (!pool.worklist.empty());  // keep_working(): nr_running <= 1 always for unbound
        break;
      }
      enter_idle(w);  // sleep:
      co_await k_->sleep_on(t, w.wq);
    }
  }

  NapiWorkqueueParams p_;
  std::string path_;
  Kernel* k_ = nullptr;
  int max_active_ = 512;
  std::vector<std::unique_ptr<Pool>> pools_;
  std::vector<int> node_pool_;
  int dfl_pool_ = 0;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<WorkState> state_;
  std::uint64_t requeues_ = 0;
};

}  // namespace

void register_napi_workqueue(ModelRegistry& r) {
  register_model<NapiWorkqueueParams, NapiWorkqueue>(
      r, "napi_workqueue",
      "Workqueue NAPI (Fietkau 2020 RFC): polls as work items of one unbound highpri workqueue, kworkers on demand");
}

}  // namespace napisim
