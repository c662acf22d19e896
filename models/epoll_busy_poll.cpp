// epoll_busy_poll: per-epoll NAPI busy polling set with EPIOCSPARAMS (fs/eventpoll.c, v6.9+):
// busy_poll_usecs, busy_poll_budget and prefer_busy_poll.
//
// Mirrors ep_poll() -> ep_busy_loop() -> napi_busy_loop() (net/core/dev.c) and busy_poll_stop();
// see sim/kernel/busy_poll.cpp. With prefer_busy_poll the application "pledges" to poll: softirq
// yields a full poll to it (__napi_poll with PREFER_BUSY_POLL), and together with
// napi_defer_hard_irqs + gro_flush_timeout (compose with the napi_defer_irq model) the device IRQ
// stays masked while the pledge holds — Karsten's "napibusy" configuration (kernel-napi.md 3.3).
// The sysctl net.core.busy_poll (kernel.net.busy_poll) enables the same loop for every epoll.
#include "sim/kernel/kernel.hpp"
#include "sim/model/model.hpp"

namespace napisim {

namespace {

struct EpollBusyPollParams {
  std::int64_t busy_poll_usecs = 64;
  std::int64_t busy_poll_budget = 64;
  bool prefer_busy_poll = true;

  template <class V>
  static void fields(V& v) {
    v("busy_poll_usecs", &EpollBusyPollParams::busy_poll_usecs, "us", "EPIOCSPARAMS busy_poll_usecs",
      Range{0, 2147483647});
    v("busy_poll_budget", &EpollBusyPollParams::busy_poll_budget, "pkts",
      "EPIOCSPARAMS busy_poll_budget (0 = BUSY_POLL_BUDGET 8)", Range{0, 65535});
    v("prefer_busy_poll", &EpollBusyPollParams::prefer_busy_poll, "", "EPIOCSPARAMS prefer_busy_poll");
  }
  bool operator==(const EpollBusyPollParams&) const = default;
};

class EpollBusyPoll : public RxModel {
 public:
  explicit EpollBusyPoll(const EpollBusyPollParams& p) : p_(p) {}
  void attach(Kernel& k, const std::vector<int>& /*nics*/) override {
    EpollParams& e = k.epoll_defaults();
    e.busy_poll_usecs = p_.busy_poll_usecs;
    e.busy_poll_budget = p_.busy_poll_budget;
    e.prefer_busy_poll = p_.prefer_busy_poll;
  }

 private:
  EpollBusyPollParams p_;
};

}  // namespace

void register_epoll_busy_poll(ModelRegistry& r) {
  register_model<EpollBusyPollParams, EpollBusyPoll>(
      r, "epoll_busy_poll", "epoll NAPI busy polling (EPIOCSPARAMS busy_poll_usecs/budget, prefer_busy_poll)");
}

}  // namespace napisim
