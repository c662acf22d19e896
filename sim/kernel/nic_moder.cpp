// napisim: mlx5's per-CQ interrupt moderation, NicParams::cq_period_mode "cqe" or "eqe"
// (drivers/net/ethernet/mellanox/mlx5/core/en_main.c, en_txrx.c mlx5e_napi_poll(), en/dim.c,
// v5.8-v6.6; 9908aa292971 "net/mlx5e: CQE based moderation"; semantics in sim/kernel/netdev.hpp).
#include <algorithm>

#include "sim/kernel/kernel.hpp"

namespace napisim {

// An armed channel raises its interrupt once either CQ generates an event: cq_max_count
// completions since its last event, or its period deadline passed with a completion pending. The
// CQs' periods restart independently (a CQ whose completions the other's event let the driver
// reap generated no event). A CQE-mode deadline moves later with every completion; rather than
// re-queue the timer per packet, an early expiry calls this again and waits for the moved one.
void Kernel::nic_coal_check(Channel& ch) {
  const Nanos now = host_.now();
  Nanos rx_deadline = kNever, tx_deadline = kNever;
  if (ch.coal_rx > 0) {
    const Nanos start = ch.cq_mode == Channel::kCqe ? ch.last_rx_cqe : ch.last_rx_event;
    rx_deadline = ch.rx_usecs == 0 || ch.coal_rx >= ch.rx_frames ? now : start + ch.rx_usecs * kNsPerUs;
  }
  if (ch.coal_tx > 0)
    tx_deadline = ch.tx_usecs == 0 || ch.coal_tx >= ch.tx_frames ? now : ch.last_tx_event + ch.tx_usecs * kNsPerUs;
  const bool rx_event = rx_deadline <= now, tx_event = tx_deadline <= now;
  if (rx_event || tx_event) {
    if (rx_event) {
      ch.last_rx_event = now;
      ++ch.rx_events;
    }
    if (tx_event) {
      ch.last_tx_event = now;
      ++ch.tx_events;
    }
    nic_fire_irq(ch);
    return;
  }
  const Nanos deadline = std::min(rx_deadline, tx_deadline);
  if (deadline == kNever) return;
  if (!ch.coal_timer.armed() || ch.coal_timer.expires() > deadline)
    ch.coal_timer.arm(host_.queue(), deadline, Prio::kWire, this, kCoalTimer, channel_code(ch));
}

void Kernel::nic_arm_cqs(Channel& ch) {
  // mlx5e_napi_poll() after napi_complete_done(): mlx5e_handle_{rx,tx}_dim() feed each CQ's event
  // counter, packets and bytes to its net_dim (a new profile applies at once: sim/hw/dim.hpp), then
  // mlx5e_cq_arm() on both CQs: completions not yet polled count towards the moderation and may
  // raise an event right away.
  if (ch.dim && ch.dim->on_interrupt(DimSample{ch.rx_events, ch.rx_pkts, ch.rx_bytes, host_.now()})) {
    ch.rx_usecs = ch.dim->profile().usec;
    ch.rx_frames = ch.dim->profile().pkts;
  }
  if (ch.tx_dim && ch.tx_dim->on_interrupt(DimSample{ch.tx_events, ch.tx_pkts, ch.tx_bytes, host_.now()})) {
    ch.tx_usecs = ch.tx_dim->profile().usec;
    ch.tx_frames = ch.tx_dim->profile().pkts;
  }
  rx_sync(ch);
  ch.irq_armed = true;
  rx_watch(ch);
  ch.coal_rx = ch.ring_pkts;
  tx_collect(ch);
  ch.coal_tx = ch.tx_pending;
  tx_schedule_event(ch);
  nic_coal_check(ch);
}

}  // namespace napisim
