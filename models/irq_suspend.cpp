// irq_suspend: IRQ suspension during application busy periods (Martin Karsten & Joe Damato,
// "Suspend IRQs during application busy periods", v9 applied 2024-11-12, v6.13).
//
// Mirrors napi_suspend_irqs()/napi_resume_irqs() (net/core/dev.c) and their callers in
// fs/eventpoll.c: when epoll_wait() returns events and the epoll has prefer_busy_poll, the NAPI's
// hrtimer is pushed out by irq_suspend_timeout (IRQs stay masked); when a busy-poll loop finds
// nothing, IRQs resume (the NAPI is scheduled once more). Recommended use (napi.rst):
// irq-suspend-timeout >> gro_flush_timeout, with napi_defer_hard_irqs and gro_flush_timeout set
// (compose with napi_defer_irq) and epoll prefer_busy_poll=1, busy_poll_usecs=0 (Karsten's
// "suspendX" rows: defer 100 / X us + irq_suspend_timeout 20 ms + busy_poll_usecs 0, budget 64).
#include "sim/kernel/kernel.hpp"
#include "sim/model/model.hpp"

namespace napisim {

namespace {

struct IrqSuspendParams {
  std::int64_t irq_suspend_timeout_ns = 20000000;
  std::int64_t busy_poll_usecs = 0;
  std::int64_t busy_poll_budget = 64;

  template <class V>
  static void fields(V& v) {
    v("irq_suspend_timeout_ns", &IrqSuspendParams::irq_suspend_timeout_ns, "ns",
      "Per-NAPI irq-suspend-timeout (netlink napi-set; no sysfs)", Range{0, 1e12});
    v("busy_poll_usecs", &IrqSuspendParams::busy_poll_usecs, "us", "EPIOCSPARAMS busy_poll_usecs",
      Range{0, 2147483647});
    v("busy_poll_budget", &IrqSuspendParams::busy_poll_budget, "pkts", "EPIOCSPARAMS busy_poll_budget",
      Range{0, 65535});
  }
  bool operator==(const IrqSuspendParams&) const = default;
};

class IrqSuspend : public RxModel {
 public:
  explicit IrqSuspend(const IrqSuspendParams& p) : p_(p) {}
  void attach(Kernel& k, const std::vector<int>& nics) override {
    for (int i : nics)
      for (auto& ch : k.nics()[static_cast<std::size_t>(i)]->channels)
        ch->napi.irq_suspend_timeout = p_.irq_suspend_timeout_ns;
    EpollParams& e = k.epoll_defaults();
    e.prefer_busy_poll = true;  // suspension only works with prefer_busy_poll
    e.busy_poll_usecs = p_.busy_poll_usecs;
    e.busy_poll_budget = p_.busy_poll_budget;
  }

 private:
  IrqSuspendParams p_;
};

}  // namespace

void register_irq_suspend(ModelRegistry& r) {
  register_model<IrqSuspendParams, IrqSuspend>(
      r, "irq_suspend", "IRQ suspension while epoll_wait returns events (irq_suspend_timeout, v6.13)");
}

}  // namespace napisim
