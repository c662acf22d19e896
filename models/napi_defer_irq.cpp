// napi_defer_irq: software IRQ coalescing, napi_defer_hard_irqs + gro_flush_timeout per NAPI.
//
// Mirrors commit 6f8b12d661d0 "net: napi: add hard irqs deferral feature" (Eric Dumazet, v5.7)
// as it stands in net/core/dev.c of v6.13 (kernel-napi.md 2.5, 3.1, 3.2):
//   napi_complete_done()  a poll that found work reloads defer_hard_irqs_count from
//                         napi_defer_hard_irqs; while the count is > 0 it is decremented and, with
//                         gro_flush_timeout != 0, the driver is told not to unmask the IRQ (return
//                         false) and napi->timer is armed for gro_flush_timeout ns
//                         (HRTIMER_MODE_REL_PINNED: it fires on the arming CPU)
//   napi_watchdog()       the hrtimer: test_and_set SCHED (no MISSED), clear PREFER_BUSY_POLL,
//                         __napi_schedule_irqoff(): onto this CPU's poll_list + NET_RX, or the
//                         kthread of a THREADED NAPI, or a strategy's schedule hook
// So at steady load the queue stays IRQ-masked and is re-polled every gro_flush_timeout; after
// napi_defer_hard_irqs consecutive empty polls the IRQ is re-armed. The mechanism lives in
// sim/kernel/napi.cpp (every strategy shares it); this model sets the per-NAPI values (netlink
// napi-set defer-hard-irqs / gro-flush-timeout, v6.13), overriding the device sysfs defaults
// napi_defer_hard_irqs / gro_flush_timeout of NicParams. It composes with napi_threaded,
// napi_workqueue and napi_tapi in either order (Jakub Kicinski's 2020 comparison used ~100 us).
#include "sim/kernel/kernel.hpp"
#include "sim/model/model.hpp"

namespace napisim {

namespace {

struct NapiDeferIrqParams {
  std::int64_t defer_hard_irqs = 0;       // napi_defer_hard_irqs (default 0: off)
  std::int64_t gro_flush_timeout_ns = 0;  // gro_flush_timeout (default 0: off)

  template <class V>
  static void fields(V& v) {
    v("defer_hard_irqs", &NapiDeferIrqParams::defer_hard_irqs, "polls",
      "napi_defer_hard_irqs: consecutive empty polls before the IRQ is re-armed", Range{0, 2147483647});
    v("gro_flush_timeout_ns", &NapiDeferIrqParams::gro_flush_timeout_ns, "ns",
      "gro_flush_timeout: delay of the re-poll hrtimer while IRQs are deferred (0 = no deferral)", Range{0, 1e10});
  }
  bool operator==(const NapiDeferIrqParams&) const = default;
};

class NapiDeferIrq : public RxModel {
 public:
  explicit NapiDeferIrq(const NapiDeferIrqParams& p) : p_(p) {}
  void attach(Kernel& k, const std::vector<int>& nics) override {
    for (int i : nics)
      for (auto& ch : k.nics()[static_cast<std::size_t>(i)]->channels) {
        // napi_set_defer_hard_irqs() / napi_set_gro_flush_timeout(): the running count and an
        // armed timer are left alone, as the netlink setters do.
        ch->napi.defer_hard_irqs = p_.defer_hard_irqs;
        ch->napi.gro_flush_timeout = p_.gro_flush_timeout_ns;
        napis_.push_back(&ch->napi);
      }
  }
  void report(Json& out) const override {
    std::uint64_t fires = 0, completions = 0;
    for (const Napi* n : napis_) {
      fires += n->timer_fires;
      completions += n->completions;
    }
    out["timer_fires"] = fires;
    out["completions"] = completions;
  }

 private:
  NapiDeferIrqParams p_;
  std::vector<const Napi*> napis_;
};

}  // namespace

void register_napi_defer_irq(ModelRegistry& r) {
  register_model<NapiDeferIrqParams, NapiDeferIrq>(
      r, "napi_defer_irq", "IRQ deferral: napi_defer_hard_irqs + gro_flush_timeout re-poll timer per NAPI");
}

}  // namespace napisim
