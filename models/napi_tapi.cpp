// napi_tapi: a pool of NAPI poller threads with work stealing ("TAPI", Jakub Kicinski, 2020).
//
// No TAPI code or design was ever posted (kernel-napi.md 5.2, [UNVERIFIED]). What is public, all
// from Jakub Kicinski on netdev, Sep-Oct 2020:
//   * "thread is this code, "work q" is Felix's code, TAPI is my hacks" and the comparison of
//     <20200929121902.7ee1c700@kicinski-fedora-pc1c0hjn.dhcp.thefacebook.com> (validation-targets.md 2),
//     run with defer_hard_irqs timer polling (~100 us) and without changing niceness;
//   * a "thr poll" variant (<20200929144847.05f3dcf7@kicinski-fedora-pc1c0hjn.dhcp.thefacebook.com>);
//   * "In my experiments the worker threads get stalled sooner or later. And unless there is some
//     work stealing going on latency spikes follow" and the wish to switch modes at runtime
//     (<20201002154926.49af25e3@kicinski-fedora-pc1c0hjn.dhcp.thefacebook.com>);
//   * TAPI is "wq-like" and "not a simple extension of this [kthread] model".
// Assumptions of this model ([INFER], stated so they can be challenged):
//   1. N poller kthreads "tapi/<i>", SCHED_NORMAL at `nice` (default 0: not reniced), allowed on
//      `cpumask`, not 1:1 bound to NAPIs; created at attach, never more.
//   2. ____napi_schedule() (a NapiScheduleHook) appends the NAPI to the run queue of its home poller
//      (initially NAPI index mod N, afterwards the poller that polled it last: cache affinity) and
//      wakes that poller if it sleeps; if the home poller is busy and another poller is idle, the
//      most recently idle one is woken too, so that it can steal.
//   3. A poller takes the head of its own queue, else steals the oldest NAPI of the longest other
//      queue; it sleeps only when every queue is empty.
//   4. One poll = the mainline kthread's round: local_bh_disable(); __napi_poll(weight 64);
//      local_bh_enable() (pending softirqs run there); a NAPI that used its full weight goes to the
//      tail of the poller's queue (round robin); cond_resched() after every poll. No netdev_budget.
//   5. thr_poll: the poller keeps a NAPI while polls find packets, with NAPI_STATE_IN_BUSY_POLL set
//      so napi_complete_done() neither completes nor re-arms; the first empty poll completes it via
//      napi_complete_done() (reloading the defer_hard_irqs counter if the session found packets, as
//      busy_poll_stop() does with prefer-busy-poll), then the IRQ or the deferral timer takes over.
// Poll time is task time of the pollers (class kthread). Combine with napi_defer_irq for the
// configuration Jakub measured.
#include <algorithm>
#include <deque>

#include "sim/kernel/kernel.hpp"
#include "sim/model/model.hpp"

namespace napisim {

namespace {

struct NapiTapiParams {
  std::int64_t threads = 4;  // pollers in the pool
  std::int64_t nice = 0;     // "I'm not modifying niceness"
  std::string cpumask = "";  // CPUs the pollers may run on ("" = all)
  bool thr_poll = false;     // keep polling a NAPI while polls find packets

  template <class V>
  static void fields(V& v) {
    v("threads", &NapiTapiParams::threads, "threads", "Poller threads in the pool", Range{1, 1024});
    v("nice", &NapiTapiParams::nice, "", "Nice value of the pollers", Range{-20, 19});
    v("cpumask", &NapiTapiParams::cpumask, "cpulist", "CPUs the pollers may run on (\"\" = all)");
    v("thr_poll", &NapiTapiParams::thr_poll, "",
      "\"thr poll\": keep polling a NAPI (IRQ masked) until a poll finds nothing");
  }
  bool operator==(const NapiTapiParams&) const = default;
};

class NapiTapi : public RxModel, public NapiScheduleHook {
 public:
  NapiTapi(const NapiTapiParams& p, std::string path) : p_(p), path_(std::move(path)) {}

  void check(const Kernel& k) const override { (void)cpus_allowed(k); }

  void attach(Kernel& k, const std::vector<int>& nics) override {
    k_ = &k;
    if (pollers_.empty()) {
      const CpuMask mask = cpus_allowed(k);
      for (std::int64_t i = 0; i < p_.threads; ++i) {
        auto po = std::make_unique<Poller>();
        Poller& p = *po;
        po->task = &k.kthread_create(
            "tapi/" + std::to_string(i), TaskKind::kKthread, mask, CpuClass::kKthread,
            [&](Task& t) { return poller(t, p); }, SchedPolicy::kNormal, static_cast<int>(p_.nice));
        po->index = static_cast<int>(i);
        po->idle = true;
        idle_.push_back(po.get());
        pollers_.push_back(std::move(po));
      }
    }
    if (home_.size() < k.napis().size()) {
      home_.resize(k.napis().size(), -1);
      session_work_.resize(k.napis().size(), 0);
    }
    for (int i : nics)
      for (auto& ch : k.nics()[static_cast<std::size_t>(i)]->channels) {
        Napi& n = ch->napi;
        Kernel::napi_set_threaded(n, false);
        n.hook = this;
        if (home_[static_cast<std::size_t>(n.id)] < 0)
          home_[static_cast<std::size_t>(n.id)] = n.id % static_cast<int>(pollers_.size());
      }
  }

  void schedule(Kernel& /*k*/, Napi& n, Cpu& this_cpu) override {
    Poller& home = *pollers_[static_cast<std::size_t>(home_[static_cast<std::size_t>(n.id)])];
    home.queue.push_back(&n);
    if (home.idle) {
      wake(home, this_cpu.id);
    } else if (!idle_.empty()) {
      wake(*idle_.back(), this_cpu.id);  // a thief
    }
  }

  void report(Json& out) const override {
    Json pollers = Json::array();
    for (const auto& p : pollers_) {
      Json j;
      j["name"] = p->task->name;
      j["polls"] = p->polls;
      j["steals"] = p->steals;
      j["exec_ns"] = p->task->exec_ns;
      j["wakeups"] = p->task->wakeups;
      j["migrations"] = p->task->migrations;
      pollers.push_back(j);
    }
    out["pollers"] = pollers;
  }

 private:
  CpuMask cpus_allowed(const Kernel& k) const {
    const CpuMask mask = CpuMask::parse(p_.cpumask, k.nr_cpus(), path_ + "/cpumask");
    if (mask.none()) throw ConfigError(path_ + "/cpumask", "expected at least one CPU");
    return mask;
  }
  struct Poller {
    Task* task = nullptr;
    int index = 0;
    std::deque<Napi*> queue;
    bool idle = false;
    WaitQueue wq;
    std::uint64_t polls = 0, steals = 0;
  };

  void wake(Poller& p, int this_cpu) {
    if (p.idle) {
      p.idle = false;
      idle_.erase(std::find(idle_.begin(), idle_.end(), &p));
    }
    k_->try_to_wake_up(*p.task, this_cpu);
  }

  Napi* take(Poller& p) {
    if (!p.queue.empty()) {
      Napi* n = p.queue.front();
      p.queue.pop_front();
      return n;
    }
    Poller* victim = nullptr;
    for (auto& o : pollers_)
      if (o.get() != &p && !o->queue.empty() && (!victim || o->queue.size() > victim->queue.size())) victim = o.get();
    if (!victim) return nullptr;
    Napi* n = victim->queue.front();
    victim->queue.pop_front();
    ++p.steals;
    return n;
  }

  Proc<void> poller(Task& t, Poller& p) {
    using namespace napi_state;
    for (;;) {
      Napi* n = take(p);
      if (!n) {
        if (!p.idle) {
          p.idle = true;
          idle_.push_back(&p);
        }
        co_await k_->sleep_on(t, p.wq);
        continue;
      }
      home_[static_cast<std::size_t>(n->id)] = p.index;
      auto& session = session_work_[static_cast<std::size_t>(n->id)];
      if (p_.thr_poll) n->state |= kInBusyPoll;
      bool repoll = false;
      k_->local_bh_disable(t);
      ++p.polls;
      const int work = co_await k_->napi_poll(k_->task_ctx(t, CpuClass::kKthread), *n, repoll);
      bool keep = repoll;
      if (p_.thr_poll) {
        session += work;
        if (work > 0) {
          keep = true;  // napi_complete_done() returned false: still SCHED and ours
        } else {
          n->state &= ~kInBusyPoll;
          Cpu& c = k_->cpu(t.cpu);
          if (k_->napi_complete_done(c, *n, session > 0 ? 1 : 0) && n->ch) k_->nic_arm_irq(*n->ch);
          session = 0;
        }
      }
      co_await k_->local_bh_enable(t);
      if (keep) p.queue.push_back(n);
      co_await k_->cond_resched(t);
    }
  }

  NapiTapiParams p_;
  std::string path_;
  Kernel* k_ = nullptr;
  std::vector<std::unique_ptr<Poller>> pollers_;
  std::vector<Poller*> idle_;  // back = most recently idle
  std::vector<int> home_;
  std::vector<std::int64_t> session_work_;
};

}  // namespace

void register_napi_tapi(ModelRegistry& r) {
  register_model<NapiTapiParams, NapiTapi>(
      r, "napi_tapi", "TAPI (Kicinski 2020, no public code): a pool of poller threads with work stealing");
}

}  // namespace napisim
