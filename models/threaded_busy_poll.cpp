// threaded_busy_poll: a kthread per NAPI that busy-polls it (Samiullah Khawaja, "Extend NAPI
// threaded polling to allow kthread based busy polling", v10 2025-10-28,
// <20251028203007.575686-2-skhawaja@google.com>; netlink napi-set threaded=busy-poll).
//
// Mirrors napi_threaded_poll() with THREADED_BUSY_POLL: once scheduled, the kthread sets
// IN_BUSY_POLL so napi_complete_done() returns false, the IRQ is never re-armed and
// SCHED_THREADED stays set; napi_threaded_poll_loop() then polls forever with cond_resched()
// every iteration. Documented use: 1 CPU : 1 thread : 1 NAPI, the CPU 100% busy. Each kthread is
// pinned to one CPU of `cpus` (wrapping). An empty iteration is modelled as spinning until a
// packet arrives (see sim/kernel/busy_poll.cpp).
#include "sim/kernel/kernel.hpp"
#include "sim/model/model.hpp"

namespace napisim {

namespace {

struct ThreadedBusyPollParams {
  std::string cpus = "";  // cpulist; "" = each NAPI's IRQ CPU

  template <class V>
  static void fields(V& v) {
    v("cpus", &ThreadedBusyPollParams::cpus, "cpulist",
      "CPU for each NAPI's busy-poll kthread, in queue order (wrapping); empty = the queue's IRQ CPU");
  }
  bool operator==(const ThreadedBusyPollParams&) const = default;
};

class ThreadedBusyPoll : public RxModel {
 public:
  ThreadedBusyPoll(const ThreadedBusyPollParams& p, std::string path) : p_(p), path_(std::move(path)) {}
  void check(const Kernel& k) const override { (void)poll_cpus(k); }

  void attach(Kernel& k, const std::vector<int>& nics) override {
    const std::vector<int> cpus = poll_cpus(k);
    std::size_t i = 0;
    for (int ni : nics) {
      for (auto& ch : k.nics()[static_cast<std::size_t>(ni)]->channels) {
        Napi& n = ch->napi;
        const int cpu = cpus.empty() ? ch->irq_cpu : cpus[i++ % cpus.size()];
        CpuMask m(k.nr_cpus());
        m.set(cpu);
        // napi-set threaded=busy-poll: the NAPI's kthread, pinned here, busy-polls it.
        n.thread = &k.kthread_create("napi/" + ch->nic->params.name + "-" + std::to_string(n.id), TaskKind::kKthread, m,
                                     CpuClass::kKthread, [&](Task& t) { return loop(k, t, n); });
        n.hook = nullptr;
        Kernel::napi_set_threaded(n, true);
        n.state |= napi_state::kThreadedBusyPoll;
      }
    }
  }

 private:
  static Proc<void> loop(Kernel& k, Task& t, Napi& n) {
    while (!(n.state & napi_state::kSchedThreaded))
      co_await k.sleep_on(t, n.thread_wq);
    n.state |= napi_state::kInBusyPoll;  // napi_complete_done() now returns false: IRQ stays masked
    for (;;) {
      k.local_bh_disable(t);
      bool repoll = false;
      const int work = co_await k.napi_poll(Ctx{t.cpu, &t, 0, CpuClass::kBusyPoll}, n, repoll);
      co_await k.local_bh_enable(t);
      co_await k.cond_resched(t);
      if (work == 0) co_await k.spin_until(t, &n, nullptr, kNever, CpuClass::kBusySpin);
    }
  }

  /// The CPUs of `cpus` in order (empty: each NAPI's IRQ CPU).
  std::vector<int> poll_cpus(const Kernel& k) const {
    std::vector<int> cpus;
    if (p_.cpus.empty()) return cpus;
    const CpuMask m = CpuMask::parse(p_.cpus, k.nr_cpus(), path_ + "/cpus");
    for (int c = m.first(); c >= 0; c = m.next(c))
      cpus.push_back(c);
    return cpus;
  }
  ThreadedBusyPollParams p_;
  std::string path_;  // JSON pointer of the params, for errors
};

}  // namespace

void register_threaded_busy_poll(ModelRegistry& r) {
  register_model<ThreadedBusyPollParams, ThreadedBusyPoll>(
      r, "threaded_busy_poll", "A pinned kthread per NAPI spinning on it (threaded=busy-poll, 2025)");
}

}  // namespace napisim
