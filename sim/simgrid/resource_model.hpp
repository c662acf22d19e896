// napisim: the SimGrid adapter. HostResourceModel is the simgrid::kernel::resource::Model the
// engine sees; it forwards the engine's solve() calls to HostModel::advance_to().
//
// SimGrid 3.32, src/kernel/EngineImpl.cpp: EngineImpl::solve() first asks every idempotent model
// (CPU, network: actors' sleeps and comms) for its next date, then calls next_occurring_event() of
// each non-idempotent model (the path the ns-3 binding uses) with that horizon as a *duration* from
// now (-1 when nothing else is pending). We run the host model's events up to now + horizon and
// return the horizon, so the engine advances the clock exactly there. With nothing else pending
// (-1: the run's control actor has ended) we return -1 and the engine stops. Events at exactly the horizon run before
// the actor that wakes there, so a control actor always sees host state at its wake-up time.
#pragma once

#include <simgrid/kernel/resource/Model.hpp>

#include "sim/core/host_model.hpp"

namespace napisim {

class HostResourceModel : public simgrid::kernel::resource::Model {
 public:
  explicit HostResourceModel(HostModel& host);
  bool next_occurring_event_is_idempotent() override { return false; }
  double next_occurring_event(double horizon) override;
  void update_actions_state(double now, double delta) override;
  std::uint64_t solve_calls() const { return calls_; }

 private:
  HostModel& host_;
  std::uint64_t calls_ = 0;
};

/// SimGrid double seconds -> napisim nanoseconds (rounded to nearest).
Nanos simgrid_to_nanos(double seconds);

}  // namespace napisim
