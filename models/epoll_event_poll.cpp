// epoll_event_poll: busy-loop in ep_poll() for events only, without napi_poll (Naman Gulati,
// "[PATCH] Add provision to busyloop for events in ep_poll.", 2024-08-28,
// <20240828181011.1591242-1-namangulati@google.com>; not merged).
//
// The proposed epoll_params.event_poll_only bit makes ep_busy_loop() spin
// `while (!ep_busy_loop_end(ep, start)) cond_resched();` — watching the ready list that IRQ and
// softirq on other CPUs fill — for busy_poll_usecs before sleeping. Published as "epoll
// busyloop" in kernel-napi.md 7.4.
#include "sim/kernel/kernel.hpp"
#include "sim/model/model.hpp"

namespace napisim {

namespace {

struct EpollEventPollParams {
  std::int64_t busy_poll_usecs = 1000;

  template <class V>
  static void fields(V& v) {
    v("busy_poll_usecs", &EpollEventPollParams::busy_poll_usecs, "us",
      "How long ep_poll spins on the ready list before sleeping", Range{1, 2147483647});
  }
  bool operator==(const EpollEventPollParams&) const = default;
};

class EpollEventPoll : public RxModel {
 public:
  explicit EpollEventPoll(const EpollEventPollParams& p) : p_(p) {}
  void attach(Kernel& k, const std::vector<int>& /*nics*/) override {
    EpollParams& e = k.epoll_defaults();
    e.event_poll_only = true;
    e.busy_poll_usecs = p_.busy_poll_usecs;
  }

 private:
  EpollEventPollParams p_;
};

}  // namespace

void register_epoll_event_poll(ModelRegistry& r) {
  register_model<EpollEventPollParams, EpollEventPoll>(
      r, "epoll_event_poll", "Busy-loop in epoll_wait for events only, no napi poll (Gulati 2024 proposal)");
}

}  // namespace napisim
