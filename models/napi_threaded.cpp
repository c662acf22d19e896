// napi_threaded: mainline threaded NAPI, one kthread per NAPI instance.
//
// Mirrors commit 29863d41bb6e "net: implement threaded-able napi poll loop support" (Wei Wang,
// Linux v5.12) as it stands in net/core/dev.c of v6.13 (kernel-napi.md 4.1):
//   dev_set_threaded()        /sys/class/net/DEV/threaded = 1: creates the missing kthreads, then
//                             sets NAPI_STATE_THREADED; "takes effect in the next round of
//                             napi_schedule()" (a NAPI owned by softirq finishes its polls there)
//   napi_kthread_create()     kthread_run(napi_threaded_poll, n, "napi/%s-%d", dev->name, napi_id):
//                             SCHED_NORMAL nice 0, no affinity (kernel/kthread.c)
//   ____napi_schedule()       THREADED: set SCHED_THREADED and wake_up_process(n->thread) instead of
//                             adding to the poll_list and raising NET_RX
//   napi_threaded_poll()      napi_thread_wait() until SCHED_THREADED, then 64-packet __napi_poll()
//                             rounds under local_bh_disable(), pending softirqs run at
//                             local_bh_enable(), cond_resched() between rounds; no netdev_budget
//                             (Kernel::napi_threaded_poll in sim/kernel/napi.cpp)
// Poll time is task time of the kthread (class kthread), charged to its vruntime: BH-disabled code
// is not SOFTIRQ_OFFSET time (kernel-napi.md 2.8). The knobs are what an administrator applies to
// the threads after creation (chrt, renice, taskset), e.g. Wei Wang's 2020 setup restricting the
// kthreads to the 8 CPUs taking the RX IRQs, or napi.rst's advice to pin each thread to the CPU
// servicing its interrupt. Composes with napi_defer_irq: napi_watchdog()'s __napi_schedule() wakes
// the kthread of a THREADED NAPI.
#include "sim/kernel/kernel.hpp"
#include "sim/model/model.hpp"

namespace napisim {

namespace {

struct NapiThreadedParams {
  std::int64_t nice = 0;          // kthreads start at nice 0 (kernel/kthread.c)
  std::string policy = "normal";  // chrt: SCHED_NORMAL or SCHED_FIFO
  std::int64_t rt_priority = 50;  // chrt -f PRIO (sched_set_fifo() uses MAX_RT_PRIO / 2)
  std::string cpumask = "";       // taskset -c of every napi/<dev>-<id> thread ("" = all CPUs)
  bool pin_to_irq_cpu = false;    // napi.rst: pin each thread to the CPU that services its IRQ

  template <class V>
  static void fields(V& v) {
    v("nice", &NapiThreadedParams::nice, "", "Nice value of every napi/<dev>-<id> kthread (SCHED_NORMAL)",
      Range{-20, 19});
    v("policy", &NapiThreadedParams::policy, "", "Scheduling policy of the kthreads", Choices{"normal", "fifo"});
    v("rt_priority", &NapiThreadedParams::rt_priority, "", "SCHED_FIFO priority (policy fifo)", Range{1, 99});
    v("cpumask", &NapiThreadedParams::cpumask, "cpulist", "CPUs the kthreads may run on (\"\" = all)");
    v("pin_to_irq_cpu", &NapiThreadedParams::pin_to_irq_cpu, "",
      "Pin each kthread to its queue's IRQ CPU (overrides cpumask)");
  }
  bool operator==(const NapiThreadedParams&) const = default;
};

class NapiThreaded : public RxModel {
 public:
  NapiThreaded(const NapiThreadedParams& p, std::string path) : p_(p), path_(std::move(path)) {}

  void check(const Kernel& k) const override { (void)cpus_allowed(k); }

  void attach(Kernel& k, const std::vector<int>& nics) override {
    const int ncpu = k.nr_cpus();
    const CpuMask mask = cpus_allowed(k);
    const SchedPolicy policy = sched_policy_named(p_.policy);
    const int nice = policy == SchedPolicy::kFifo ? 0 : static_cast<int>(p_.nice);
    const int prio = policy == SchedPolicy::kFifo ? static_cast<int>(p_.rt_priority) : 0;
    for (int i : nics) {
      for (auto& ch : k.nics()[static_cast<std::size_t>(i)]->channels) {
        Napi& n = ch->napi;
        CpuMask allowed = mask;
        if (p_.pin_to_irq_cpu) {
          allowed = CpuMask(ncpu);
          allowed.set(ch->irq_cpu);
        }
        // A schedule hook of another strategy stops taking new schedules; NAPIs it already owns
        // finish there (the next napi_schedule() comes here).
        n.hook = nullptr;
        Task* t = n.thread;
        if (!t) {
          t = &k.napi_kthread_create(n, allowed, policy, nice, prio);
        } else {
          // Re-enabled after a switch away: the kthread survived (dev_set_threaded(dev, false)
          // keeps it); re-apply the administrator's settings.
          if (!t->se.on_rq && k.cpu(t->cpu).cfs->curr() != &t->se && k.cpu(t->cpu).curr != t)
            set_sched_attr(t->se, policy, nice, prio);
          else if (!is_rt_policy(policy))
            k.set_task_nice(*t, nice);
          k.set_cpus_allowed_ptr(*t, allowed);
        }
        Kernel::napi_set_threaded(n, true);
        threads_.push_back(t);
      }
    }
  }

  void report(Json& out) const override {
    Json threads = Json::array();
    for (const Task* t : threads_) {
      Json j;
      j["name"] = t->name;
      j["exec_ns"] = t->exec_ns;
      j["wakeups"] = t->wakeups;
      j["migrations"] = t->migrations;
      j["nvcsw"] = t->nvcsw;
      j["nivcsw"] = t->nivcsw;
      threads.push_back(j);
    }
    out["threads"] = threads;
  }

 private:
  CpuMask cpus_allowed(const Kernel& k) const {
    const CpuMask mask = CpuMask::parse(p_.cpumask, k.nr_cpus(), path_ + "/cpumask");
    if (mask.none()) throw ConfigError(path_ + "/cpumask", "expected at least one CPU");
    return mask;
  }
  NapiThreadedParams p_;
  std::string path_;
  std::vector<Task*> threads_;
};

}  // namespace

void register_napi_threaded(ModelRegistry& r) {
  register_model<NapiThreadedParams, NapiThreaded>(
      r, "napi_threaded", "Threaded NAPI (v5.12): one napi/<dev>-<id> kthread per NAPI, scheduled by CFS/EEVDF");
}

}  // namespace napisim
