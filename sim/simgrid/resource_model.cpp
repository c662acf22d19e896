#include "sim/simgrid/resource_model.hpp"

#include <cmath>

#include <simgrid/s4u/Engine.hpp>

namespace napisim {

Nanos simgrid_to_nanos(double seconds) {
  return static_cast<Nanos>(std::llround(seconds * 1e9));
}

HostResourceModel::HostResourceModel(HostModel& host) : Model("napisim_host"), host_(host) {}

double HostResourceModel::next_occurring_event(double horizon) {
  ++calls_;
  const double now_s = simgrid::s4u::Engine::get_clock();
  if (horizon < 0) {
    // Nothing else is pending in SimGrid: no actor sleeps, no timer. The run's control actor sleeps
    // until the end of the measurement, so this only happens once it has ended: the run is over,
    // and the host model must not drag the engine on event by event.
    return -1.0;
  }
  Nanos target = simgrid_to_nanos(now_s + horizon);
  if (target < host_.now()) target = host_.now();
  host_.advance_to(target);
  return horizon;
}

void HostResourceModel::update_actions_state(double /*now*/, double /*delta*/) {
  // The host model already ran up to the new date inside next_occurring_event().
}

}  // namespace napisim
