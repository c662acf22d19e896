// napi_irq: classic NAPI, polled from the NET_RX softirq (the kernel's default receive path).
//
// Mirrors net/core/dev.c as of v6.13 (kernel-napi.md 2.2-2.5): the driver's hard IRQ masks the
// queue and calls napi_schedule(); ____napi_schedule() adds the NAPI to this CPU's poll_list and
// raises NET_RX; net_rx_action() polls with weight dev_weight (64) within netdev_budget (300) and
// netdev_budget_usecs (2 jiffies), round robin through the repoll list, counting time_squeeze;
// napi_complete_done() re-arms the IRQ. Softirqs run at irq_exit() or, past __do_softirq's
// limits, in ksoftirqd/N (kernel/softirq.c). These mechanisms live in sim/kernel/ because every
// strategy shares them; this model is the configuration in which nothing else takes over:
// no THREADED bit, no schedule hook. Its knob is the one Jakub Kicinski asked about in 2020
// ("Did you renice ksoftirqd in base?"): the nice value of ksoftirqd/N.
#include "sim/kernel/kernel.hpp"
#include "sim/model/model.hpp"

namespace napisim {

namespace {

struct NapiIrqParams {
  std::int64_t ksoftirqd_nice = 0;  // kthreads start at nice 0 (kernel/kthread.c)

  template <class V>
  static void fields(V& v) {
    v("ksoftirqd_nice", &NapiIrqParams::ksoftirqd_nice, "", "Nice value of every ksoftirqd/N thread", Range{-20, 19});
  }
  bool operator==(const NapiIrqParams&) const = default;
};

class NapiIrq : public RxModel {
 public:
  explicit NapiIrq(const NapiIrqParams& p) : p_(p) {}
  void attach(Kernel& k, const std::vector<int>& nics) override {
    for (int i : nics)
      for (auto& ch : k.nics()[static_cast<std::size_t>(i)]->channels) {
        // dev_set_threaded(dev, false): only THREADED is cleared; a kthread or worker that owns
        // the NAPI now (SCHED_THREADED, queued) finishes its polls, the next napi_schedule()
        // comes to the softirq.
        Kernel::napi_set_threaded(ch->napi, false);
        ch->napi.hook = nullptr;
      }
    for (int c = 0; c < k.nr_cpus(); ++c)
      k.set_task_nice(*k.cpu(c).ksoftirqd, static_cast<int>(p_.ksoftirqd_nice));
  }

 private:
  NapiIrqParams p_;
};

}  // namespace

void register_napi_irq(ModelRegistry& r) {
  register_model<NapiIrqParams, NapiIrq>(r, "napi_irq",
                                         "Classic NAPI: hard IRQ -> NET_RX softirq (net_rx_action) -> ksoftirqd");
}

}  // namespace napisim
