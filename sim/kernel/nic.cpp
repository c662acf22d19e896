// napisim: the NIC driver and device (an mlx5e-like channel model).
//
//   mlx5e_completion_event()  hard IRQ -> napi_schedule(); the EQ/CQ stays disarmed
//   mlx5e_napi_poll()         TX completions first (MLX5E_TX_CQ_POLL_BUDGET 128), then up to
//                             `budget` RX descriptors; GRO merges each train (its last segment
//                             carries PSH, so tcp_gro_receive flushes it at once) and hands skbs
//                             up in gro_normal_batch lists; napi_complete_done() -> mlx5e_cq_arm()
//   arrivals                  a train is handed to the kernel when it is sent (nic_deliver) and
//                             enters the ring at its arrival time: through its own event while the
//                             arrival acts then (CQ armed: the interrupt logic; a busy poller
//                             spinning on the NAPI), otherwise when the next poll or re-arm reads
//                             the ring (rx_sync), as TX completions are reaped: no event per packet
//                             while the NAPI runs with its interrupt masked
//   RSS                       Toeplitz hash -> 128-entry indirection table (sim/hw/rss.*)
//   moderation                rx-usecs/rx-frames (static, or lib/dim when adaptive-rx is on)
//   XPS                       a CPU transmits on the queue whose interrupt it takes
//   NUMA                      rings/page pool on the NIC's node: a CPU of another node pays
//                             numa_remote_ns() per skb it builds (sim/hw/nic.hpp)
#include <algorithm>

#include "sim/kernel/kernel.hpp"

namespace napisim {

Nic& Kernel::add_nic(const NicParams& p, const std::string& path) {
  if (p.numa_node >= topo_.nr_nodes())
    throw ConfigError(path + "/numa_node", "expected a NUMA node < " + std::to_string(topo_.nr_nodes()) + ", got " +
                                               std::to_string(p.numa_node));
  auto nic = std::make_unique<Nic>();
  nic->params = p;
  nic->index = static_cast<int>(nics_.size());
  nic->rss = std::make_unique<Rss>(static_cast<int>(p.queues));
  nic->tx_port.ns_per_byte = 8.0 / p.speed_gbps;
  nic->rx_port.ns_per_byte = 8.0 / p.speed_gbps;
  std::vector<int> irq_cpus;
  if (p.irq_affinity.empty()) {
    irq_cpus = topo_.cpus_of_node(static_cast<int>(p.numa_node));
  } else {
    const CpuMask m = CpuMask::parse(p.irq_affinity, topo_.nr_cpus(), path + "/irq_affinity");
    for (int c = m.first(); c >= 0; c = m.next(c))
      irq_cpus.push_back(c);
  }
  if (irq_cpus.empty()) throw ConfigError(path + "/irq_affinity", "expected at least one CPU");
  for (std::int64_t q = 0; q < p.queues; ++q) {
    auto ch = std::make_unique<Channel>();
    ch->id = static_cast<int>(q);
    ch->nic = nic.get();
    ch->irq_cpu = irq_cpus[static_cast<std::size_t>(q) % irq_cpus.size()];
    ch->rx_usecs = static_cast<int>(p.rx_usecs);
    ch->rx_frames = static_cast<int>(p.rx_frames);
    ch->cq_mode = p.cq_period_mode == "cqe"   ? Channel::kCqe
                  : p.cq_period_mode == "eqe" ? Channel::kEqe
                                              : Channel::kArrival;
    if (p.adaptive_rx) {
      ch->dim = std::make_unique<NetDim>(ch->cq_mode == Channel::kCqe ? DimCqMode::kCqe : DimCqMode::kEqe, true);
      ch->rx_usecs = ch->dim->profile().usec;
      ch->rx_frames = ch->dim->profile().pkts;
    }
    if (ch->cq_mode != Channel::kArrival) {  // nic_moder.cpp
      ch->tx_usecs = static_cast<int>(p.tx_usecs);
      ch->tx_frames = static_cast<int>(p.tx_frames);
      if (p.adaptive_tx) {
        ch->tx_dim = std::make_unique<NetDim>(DimCqMode::kEqe, false);
        ch->tx_usecs = ch->tx_dim->profile().usec;
        ch->tx_frames = ch->tx_dim->profile().pkts;
      }
    } else if (p.adaptive_tx) {
      throw ConfigError(path + "/adaptive_tx",
                        "expected false with cq_period_mode \"arrival\" (use \"cqe\" or \"eqe\")");
    }
    Napi& n = ch->napi;
    n.id = static_cast<int>(napis_.size());
    n.ch = ch.get();
    n.weight = static_cast<int>(kp_.net.dev_weight);
    n.defer_hard_irqs = p.napi_defer_hard_irqs;
    n.gro_flush_timeout = p.gro_flush_timeout_ns;
    if (stamps_) n.stamps = std::make_unique<NapiStamps>();
    napis_.push_back(&n);
    nic->channels.push_back(std::move(ch));
  }
  nic->xps.assign(static_cast<std::size_t>(topo_.nr_cpus()), -1);
  for (int c = 0; c < topo_.nr_cpus(); ++c) {
    for (auto& ch : nic->channels)
      if (ch->irq_cpu == c && nic->xps[static_cast<std::size_t>(c)] < 0) nic->xps[static_cast<std::size_t>(c)] = ch->id;
    if (nic->xps[static_cast<std::size_t>(c)] < 0)
      nic->xps[static_cast<std::size_t>(c)] = c % static_cast<int>(p.queues);
  }
  nics_.push_back(std::move(nic));
  return *nics_.back();
}

int Kernel::txq_of_cpu(const Nic& nic, int c) const {
  return nic.xps[static_cast<std::size_t>(c)];
}

Nanos Kernel::nic_ingress(int nic, Nanos t, std::int64_t wire_bytes) {
  return nics_[static_cast<std::size_t>(nic)]->rx_port.transmit(t, wire_bytes);
}

void Kernel::switch_to_nic(int nic_idx, const RxEntry& in, Nanos at_switch) {
  Nic& nic = *nics_[static_cast<std::size_t>(nic_idx)];
  const std::int64_t buffer = nic.params.switch_buffer_bytes;
  if (buffer <= 0) {  // unbounded: no drops
    nic_deliver(nic_idx, in,
                nic.rx_port.transmit(at_switch, static_cast<std::int64_t>(in.bytes) +
                                                    static_cast<std::int64_t>(in.segs) * kWireOverheadBytes));
    return;
  }
  RxEntry e = in;
  const std::int64_t per_seg = e.segs ? (static_cast<std::int64_t>(e.bytes) + e.segs - 1) / e.segs : 0;
  {
    // The egress port's FIFO holds what it has not yet sent at `at_switch`; a segment that does not
    // fit behind it is dropped (tail drop), and so is the rest of its train.
    const Nanos backlog_ns = std::max<Nanos>(0, nic.rx_port.busy_until - at_switch);
    const auto queued = static_cast<std::int64_t>(static_cast<double>(backlog_ns) / nic.rx_port.ns_per_byte);
    const std::int64_t seg_wire = per_seg + kWireOverheadBytes;
    const std::int64_t fit = std::clamp<std::int64_t>((buffer - queued) / seg_wire, 0, e.segs);
    if (fit < e.segs) {
      const auto lost_segs = static_cast<std::uint32_t>(e.segs - fit);
      const std::uint32_t kept_bytes =
          e.ack_only ? 0
          : e.th.mss ? std::min<std::uint32_t>(e.bytes, static_cast<std::uint32_t>(fit) * e.th.mss)
                     : static_cast<std::uint32_t>(static_cast<std::uint64_t>(e.bytes) *
                                                  static_cast<std::uint64_t>(fit) / e.segs);
      nic.switch_drops += lost_segs;
      if (peer_) peer_->on_rx_drop(e.sock, e.bytes - kept_bytes, lost_segs);
      if (fit == 0) return;
      e.segs = static_cast<std::uint32_t>(fit);
      e.bytes = kept_bytes;
    }
  }
  const std::int64_t wire = static_cast<std::int64_t>(e.bytes) + static_cast<std::int64_t>(e.segs) * kWireOverheadBytes;
  nic_deliver(nic_idx, e, nic.rx_port.transmit(at_switch, wire));
}

std::uint64_t Kernel::channel_code(const Channel& ch) {
  return (static_cast<std::uint64_t>(ch.nic->index) << 20) | static_cast<std::uint64_t>(ch.id);
}

void Kernel::nic_deliver(int nic_idx, const RxEntry& e, Nanos at) {
  NAPISIM_ASSERT(at >= host_.now(), "nic_deliver(): a train arriving in the past");
  Channel& ch = rx_channel(nic_idx, e.sock);
  NAPISIM_ASSERT(ch.inbound.empty() || ch.inbound.back().at <= at, "nic_deliver(): arrivals out of order");
  Inbound in{at, host_.queue().reserve(Prio::kWire, kRxArrive), e, false};
  // The event is needed if the arrival acts at its time: the channel is watched, or the ring may be
  // full by then (a drop calls the peer's retransmission at once). The ring only empties between
  // now and `at`, so it cannot be full if everything pending fits now.
  if (!lazy_rx_ || rx_watched(ch) || ch.ring_pkts + ch.inbound_segs + e.segs > ch.nic->params.ring_size) {
    in.queued = true;
    host_.queue().push_reserved(at, in.order, this, channel_code(ch));
  } else {
    ++ch.inbound_idle;
  }
  ch.inbound_segs += e.segs;
  ch.inbound.push_back(in);
  if (stamps_) ch.napi.stamps->inbound_marks.push_back(ClassTimes{});  // napi_wait_observe() may fill it
}

void Kernel::rx_sync(Channel& ch) {
  while (!ch.inbound.empty() && host_.reached(ch.inbound.front().at, ch.inbound.front().order)) {
    const Inbound in = ch.inbound.front();
    ch.inbound.pop_front();
    ch.inbound_segs -= in.e.segs;
    if (!in.queued) --ch.inbound_idle;
    NAPISIM_ASSERT(in.queued || ch.ring_pkts + in.e.segs <= ch.nic->params.ring_size,
                   "rx_sync(): a train that went without its event would be dropped");
    if (stamps_) {
      Fifo<ClassTimes>& marks = ch.napi.stamps->inbound_marks;
      const ClassTimes observed = marks.front();
      marks.pop_front();
      rx_enter(ch, in.e, in.at, &observed);
      continue;
    }
    rx_enter(ch, in.e, in.at);
  }
}

void Kernel::rx_watch(Channel& ch) {
  if (ch.inbound_idle == 0) return;
  for (std::size_t i = 0; i < ch.inbound.size(); ++i) {
    Inbound& in = ch.inbound[i];
    if (in.queued) continue;
    NAPISIM_ASSERT(!host_.reached(in.at, in.order), "rx_watch(): the channel was not brought up to date");
    in.queued = true;
    host_.queue().push_reserved(in.at, in.order, this, channel_code(ch));
  }
  ch.inbound_idle = 0;
}

void Kernel::nic_rx(int nic_idx, const RxEntry& e) {
  Channel& ch = rx_channel(nic_idx, e.sock);
  rx_sync(ch);
  rx_enter(ch, e, host_.now());
}

void Kernel::rx_enter(Channel& ch, const RxEntry& e, Nanos at, const ClassTimes* observed) {
  const Nic& nic = *ch.nic;
  const std::int64_t space = nic.params.ring_size - ch.ring_pkts;
  const auto accept = static_cast<std::uint32_t>(std::clamp<std::int64_t>(space, 0, e.segs));
  if (accept < e.segs) {
    const std::uint32_t lost_segs = e.segs - accept;
    // A TCP train's segments are its gso_size but the last: the first `accept` are whole.
    const std::uint32_t lost_bytes =
        e.ack_only ? 0
        : e.th.mss ? e.bytes - accept * e.th.mss
                   : static_cast<std::uint32_t>(static_cast<std::uint64_t>(e.bytes) * lost_segs / e.segs);
    ch.drops += lost_segs;
    if (peer_) peer_->on_rx_drop(e.sock, lost_bytes, lost_segs);
    if (accept == 0) return;
    RxEntry part = e;
    part.segs = accept;
    part.bytes = e.bytes - lost_bytes;
    part.polled = 0;
    ch.ring.push_back(part);
  } else {
    RxEntry copy = e;
    copy.polled = 0;
    ch.ring.push_back(copy);
  }
  if (stamps_) {
    // The poll in progress at `at` counts from `at`: the train waits behind the rest of it. That
    // poll may have ended before the train enters (rx_sync() at the next poll's start): its rest
    // after `at` is then already in polled_ns.
    const Napi& n = ch.napi;
    RxEntry& in = ch.ring.back();
    in.at = at;
    in.ring_mark = n.polled_ns;
    if (n.poll_began >= 0) {
      if (at > n.poll_began) in.ring_mark += at - n.poll_began;
    } else if (at < n.last_poll_end) {
      in.ring_mark -= n.last_poll_end - std::max(at, n.last_poll_began);
    }
    n.stamps->ring_marks.push_back(napi_waited_at(n, at, observed));
  }
  ch.ring_pkts += accept;
  ch.rx_pkts += accept;
  ch.rx_bytes += e.bytes;
  if (ch.cq_mode == Channel::kCqe) ch.last_rx_cqe = std::max(ch.last_rx_cqe, at);
  if (ch.napi.spinner) spin_wake(*ch.napi.spinner);
  nic_completion(ch, accept, false);
}

std::int64_t Kernel::tx_collect(Channel& ch) {
  std::int64_t n = 0;
  while (!ch.tx_done.empty() && ch.tx_done.front().done <= host_.now()) {
    ch.tx_written.push_back(ch.tx_done.front());
    ch.tx_done.pop_front();
    ++n;
  }
  ch.tx_pending += n;
  return n;
}

void Kernel::tx_schedule_event(Channel& ch) {
  // A TX completion matters to the interrupt logic only while the CQ is armed; otherwise the
  // driver reaps it at its next poll, so no event per packet is needed.
  if (ch.tx_event || !ch.irq_armed || ch.tx_done.empty()) return;
  ch.tx_event = true;
  host_.queue().push(std::max(host_.now(), ch.tx_done.front().done), Prio::kWire, this, kTxDone, channel_code(ch));
}

void Kernel::nic_completion(Channel& ch, std::int64_t n, bool tx) {
  if (ch.cq_mode != Channel::kArrival) [[unlikely]] {  // mlx5's per-CQ moderation: nic_moder.cpp
    (tx ? ch.coal_tx : ch.coal_rx) += n;
    if (ch.irq_armed) nic_coal_check(ch);
    return;
  }
  ch.coal_frames += n;
  if (!ch.irq_armed) return;
  const NicParams& p = ch.nic->params;
  const std::int64_t usecs = tx ? p.tx_usecs : ch.rx_usecs;
  const std::int64_t frames = tx ? p.tx_frames : ch.rx_frames;
  if (usecs == 0 || ch.coal_frames >= frames) {
    nic_fire_irq(ch);
    return;
  }
  if (!ch.coal_timer.armed())
    ch.coal_timer.arm(host_.queue(), host_.now() + usecs * kNsPerUs, Prio::kWire, this, kCoalTimer, channel_code(ch));
}

void Kernel::nic_fire_irq(Channel& ch) {
  ch.irq_armed = false;
  ch.coal_timer.cancel();
  ++ch.irqs;
  if (ch.cq_mode != Channel::kArrival) [[unlikely]] {
    ch.coal_rx = ch.coal_tx = 0;
  } else if (ch.dim) {
    ++ch.dim_events;
    const DimSample sample{ch.irqs, ch.rx_pkts, ch.rx_bytes, host_.now()};
    if (ch.dim->on_interrupt(sample)) {
      ch.rx_usecs = ch.dim->profile().usec;
      ch.rx_frames = ch.dim->profile().pkts;
    }
  }
  raise_irq(ch.irq_cpu, irq_code(kIrqNic, channel_code(ch)), host_.now());
}

void Kernel::nic_arm_irq(Channel& ch) {
  if (ch.cq_mode != Channel::kArrival) [[unlikely]] {
    nic_arm_cqs(ch);
    return;
  }
  // mlx5e_cq_arm(): completions that arrived meanwhile raise an event right away.
  rx_sync(ch);
  ch.irq_armed = true;
  rx_watch(ch);
  ch.coal_frames = 0;
  tx_collect(ch);
  tx_schedule_event(ch);
  const std::int64_t pending = ch.ring_pkts + ch.tx_pending;
  if (pending > 0) {
    ch.coal_frames = pending - 1;
    nic_completion(ch, 1, false);
  }
}

// netif_receive_skb_list() (net/core/dev.c v6.6): each skb in turn. The next skb's socket (its
// first three lines, what a delivery touches) is prefetched while this one is delivered: the
// simulator's own memory, as the driver prefetches the next descriptor; sockets are far apart and
// each delivery runs long enough to hide the load.
void Kernel::netif_receive_skb_list(Ctx ctx, const Skb* skbs, int n, const TrainStamps* stamps) {
  for (int i = 0; i < n; ++i) {
    if (i + 1 < n) {
      const char* next = reinterpret_cast<const char*>(&socket(skbs[i + 1].sock));
      __builtin_prefetch(next);
      __builtin_prefetch(next + 64);
      __builtin_prefetch(next + 128);
    }
    netif_receive_skb(ctx, skbs[i], stamps ? &stamps[i] : nullptr);
  }
}

Proc<int> Kernel::driver_poll(Ctx ctx, Napi& n, int budget) {
  Channel& ch = *n.ch;
  const Nanos poll_start = host_.now();
  rx_sync(ch);  // trains that came during the NAPI's wait enter as waiting for it
  if (stamps_) {
    napi_wait_poll(n);
    n.poll_began = poll_start;
  }
  Nanos cost = costs_.napi_poll_ns;
  // mlx5e_poll_tx_cq(): reap TX completions first, at most MLX5E_TX_CQ_POLL_BUDGET (128); a
  // full reap means more are waiting ("busy"): mlx5e_napi_poll() then returns the whole budget,
  // so the NAPI stays scheduled instead of completing.
  tx_collect(ch);
  constexpr std::int64_t kTxCqPollBudget = 128;
  const std::int64_t ntx = std::min<std::int64_t>(ch.tx_pending, kTxCqPollBudget);
  const bool tx_busy = ntx == kTxCqPollBudget;
  ch.tx_pending -= ntx;
  cost += ntx * costs_.tx_completion_ns;
  bool xdp_busy = false;  // an XSK's TX ring, or its empty fill ring without need_wakeup, keeps it polled
  if (ch.xdp) [[unlikely]]
    cost += xsk_tx_poll(ctx, ch, &xdp_busy);
  // napi_consume_skb() -> tcp_wfree(): TCP Small Queues' release of the reaped skbs' sockets.
  for (std::int64_t i = 0; i < ntx && !ch.tx_written.empty(); ++i) {
    const TxDesc d = ch.tx_written.front();
    ch.tx_written.pop_front();
    if (d.truesize > 0) {
      cost += sk_touch(socket(d.sock), ctx_cpu(ctx));  // sk_wmem_alloc, tsq_flags
      tcp_wfree(ctx, d.sock, d.truesize);
    }
  }
  // Per skb: packet memory on the NIC's node read from this CPU's node (0 when local).
  const Nanos remote = numa_remote_ns(topo_, ctx_cpu(ctx), static_cast<int>(ch.nic->params.numa_node));
  constexpr int kMaxBatch = 64;
  SkbBatch<kMaxBatch> batch;
  static_assert(kMaxBatch == NapiStamps::kBatch);
  TrainStamps* stamps = stamps_ ? n.stamps->batch.data() : nullptr;  // beside the batch
  // gro_normal_one() (include/net/gro.h v6.6): napi->rx_count += segs (a GRO skb counts its
  // segments, 8dc1c444df19, v5.12), flushed at gro_normal_batch; the batch array bounds the skbs.
  const std::int64_t batch_limit = kp_.net.gro_normal_batch;
  int nb = 0;
  std::int64_t rx_count = 0;
  int work = 0;
  std::int64_t steered = 0;  // segments RPS sent to a backlog: counted there, by process_backlog()
  while (work < budget && !ch.ring.empty()) {
    RxEntry& e = ch.ring.front();
    const auto take = std::min<std::uint32_t>(e.segs - e.polled, static_cast<std::uint32_t>(budget - work));
    e.polled += take;
    work += static_cast<int>(take);
    cost += static_cast<Nanos>(take) * (costs_.rx_pkt_ns + costs_.gro_seg_ns);
    if (e.polled < e.segs) continue;  // GRO holds the partial train until its last segment
    if (ch.xdp) [[unlikely]] {        // the XDP program runs before an skb exists (xsk.cpp)
      bool stall = false;
      const XdpAction act = xdp_rx(ctx, ch, e, &cost, &stall);
      if (stall) {  // no fill-ring frame: the train stays in the ring
        e.polled -= take;
        work -= static_cast<int>(take);
        cost -= static_cast<Nanos>(take) * (costs_.rx_pkt_ns + costs_.gro_seg_ns);
        Xsk& xs = *ch.xdp->xsk;
        if (xs.need_wakeup) {
          xs.rx_need_wakeup = xs.fill_stalled = true;
        } else {
          xdp_busy = true;
        }
        break;
      }
      if (act != XdpAction::kPass) {
        ch.ring.pop_front();
        continue;
      }
    }
    Skb skb{e.sock, e.segs, e.bytes, e.ack_only, n.id, -1, e.th};
    if (stamps) {
      stamps[nb] = stamp_rx(n, e, poll_start);
      n.stamps->ring_marks.pop_front();
    }
    ch.ring.pop_front();
    skb.rps_cpu = rps_ ? get_rps_cpu(ctx_cpu(ctx), ch, skb) : -1;
    cost += (skb.rps_cpu >= 0 ? costs_.rps_enqueue_ns : skb_cost(skb, ctx_cpu(ctx))) + remote;
    if (skb.rps_cpu >= 0) steered += skb.segs;
    batch.put(static_cast<std::size_t>(nb++), skb);
    rx_count += skb.segs;
    if (rx_count >= batch_limit || nb == kMaxBatch) {  // gro_normal_list(): netif_receive_skb_list()
      co_await exec(ctx, cost);
      rx_sync(ch);
      netif_receive_skb_list(ctx, batch.data(), nb, stamps);
      cost = take_tcp_owed();  // TCP's transmits and retransmits for this batch's ACKs
      nb = 0;
      rx_count = 0;
    }
  }
  co_await exec(ctx, cost);
  rx_sync(ch);
  // mlx5e_napi_poll(): the reaped descriptors go back to the hardware only when the poll refills
  // the ring (rq->post_wqes() after mlx5e_poll_rx_cq()), so they hold ring space until then.
  ch.ring_pkts -= work;
  netif_receive_skb_list(ctx, batch.data(), nb, stamps);
  if (tcp_owed_) co_await exec(ctx, take_tcp_owed());
  n.packets += static_cast<std::uint64_t>(work);
  if (stamps_) {
    n.polled_ns += host_.now() - poll_start;
    n.poll_began = -1;
    n.last_poll_began = poll_start;
    n.last_poll_end = host_.now();
  }
  Cpu& c = cpu(ctx_cpu(ctx));
  // softnet_data.processed is counted in __netif_receive_skb_core(), i.e. after RPS: an skb
  // steered to a backlog counts on the CPU that runs process_backlog(), not here.
  c.sd.processed += static_cast<std::uint64_t>(work - steered);
  if (ch.xdp) [[unlikely]] {
    xdp_do_flush(ctx, ch);
    const bool done = work < budget && !tx_busy && !xdp_busy && napi_complete_done(c, n, work);
    if (done && !(ch.xdp->xsk && ch.xdp->xsk->fill_stalled)) nic_arm_irq(ch);  // no posted buffer: nothing completes
    co_return tx_busy || xdp_busy ? budget : work;
  }
  if (work < budget && !tx_busy && napi_complete_done(c, n, work)) nic_arm_irq(ch);
  if (stamps_) napi_wait_resume(n);  // still scheduled: it waits again
  co_return tx_busy ? budget : work;
}

TrainStamps Kernel::stamp_rx(const Napi& n, const RxEntry& e, Nanos poll_start) const {
  // A train that arrived during this very poll (taken after one of its exec steps) waited for no
  // earlier poll: its poll stage starts at its arrival.
  TrainStamps p;
  p.arrive = e.at;
  p.sched = n.sched_at;
  p.poll = std::max(poll_start, e.at);
  p.ring = std::max<Nanos>(0, n.polled_ns - e.ring_mark);
  p.ring_sched = std::max<Nanos>(0, n.polled_ns - std::max(e.ring_mark, n.sched_polled));
  p.net_rx_wait = n.stamps->waited - n.stamps->ring_marks.front();
  return p;
}

void Kernel::nic_transmit(Ctx ctx, Socket& s, std::int64_t bytes, bool ack_only) {
  if (s.lo_peer >= 0) {  // a connection over lo: loopback.cpp
    loopback_xmit(ctx, s, bytes, ack_only);
    return;
  }
  if (s.tcp) {  // the kernel's TCP (tcp_output.cpp) sends the data and its ACKs itself
    NAPISIM_ASSERT(!ack_only, "nic_transmit(): a TCP connection's ACKs are its own");
    tcp_sendmsg(ctx, s, bytes);
    return;
  }
  if (s.rcvbuf > 0) tcp_event_ack_sent(s);
  Nic& nic = *nics_[static_cast<std::size_t>(s.nic)];
  const int q = txq_of_cpu(nic, ctx_cpu(ctx));
  Channel& ch = *nic.channels[static_cast<std::size_t>(q)];
  const Nanos now = host_.now();
  if (stamps_ && !ack_only) s.stamp_tx = now;
  if (ack_only) {
    const Nanos done = nic.tx_port.transmit(now, kWireOverheadBytes);
    ++ch.tx_pkts;
    if (peer_) peer_->on_transmit(WireTrain{s.id, 0, 1, true, {}}, done);
    ch.tx_done.push_back(TxDesc{done, -1, 0});
    tx_schedule_event(ch);
    return;
  }
  while (bytes > 0) {
    const std::int64_t b = kp_.net.train_bytes(bytes);
    const std::int64_t segs = kp_.net.segs_of(b);
    const Nanos done = nic.tx_port.transmit(now, b + segs * kWireOverheadBytes);
    ch.tx_pkts += static_cast<std::uint64_t>(segs);
    ch.tx_bytes += static_cast<std::uint64_t>(b);
    if (peer_)
      peer_->on_transmit(WireTrain{s.id, static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(segs), false, {}},
                         done);
    ch.tx_done.push_back(TxDesc{done, -1, 0});
    tx_schedule_event(ch);
    bytes -= b;
  }
}

}  // namespace napisim
