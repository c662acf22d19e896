// napisim: TCP socket glue and epoll (net/ipv4/tcp_input.c, tcp.c, fs/eventpoll.c as of v6.6).
//
//   tcp_v4_rcv -> tcp_data_queue   payload to the receive queue; __tcp_ack_snd_check sends an ACK
//                                  at once for skbs of two or more full segments
//   sock_def_readable              sk_data_ready -> ep_poll_callback: queue on the ready list,
//                                  wake the exclusive waiter; sk_mark_napi_id / ep->napi_id; an
//                                  item whose mask lacks EPOLLIN is left alone ("pollflags &
//                                  epi->event.events")
//   ep_insert / ep_modify          epoll_ctl ADD / MOD: set the mask, ep_item_poll(), queue a
//                                  ready item at the tail and wake ep->wq (an item already linked
//                                  stays where it is)
//   ep_send_events                 ep_start_scan() .. ep_done_scan(): each item of the ready list
//                                  re-polled, the ready ones reported (up to maxevents), the others
//                                  dropped; a level-triggered item goes back on the tail of the
//                                  list at once, so an event that arrives while its handler runs
//                                  finds it linked, and the next epoll_wait() re-polls it; an
//                                  EPOLLONESHOT item is disarmed instead. The items left after
//                                  maxevents stay ahead of the re-queued ones (list_splice()).
//                                  With one waiter per epoll (WaitQueue), ep_done_scan()'s wakeup
//                                  of another waiter has no one to wake. The re-poll of an item no
//                                  longer ready (tcp_poll(), tens of ns) is not charged
//   ep_poll                        return ready events or sleep on ep->wq until there are some;
//                                  the common call (EpollWaitAwait) runs without a coroutine of
//                                  its own: its wait loop re-checks the ready list at each
//                                  resumption (ep_poll_wait_again), ep_poll_proc() runs the rest
//   tcp_recvmsg / tcp_sendmsg      syscall + fixed + per-byte copy costs; sock_rps_record_flow
//   sockets with flow control (rcvbuf > 0: stream over a NIC, loopback): rcv_wup,
//   tcp_measure_rcv_mss + __tcp_ack_snd_check (ACK once more than one full frame is unacked),
//   sk_sleep() wait queue for blocking recv()/send() without epoll;
//     tcp_event_ack_sent() / tcp_select_window() (net/ipv4/tcp_output.c): every segment carries
//     the ACK (rcv_wup = rcv_nxt) and the window (free receive buffer);
//     tcp_ack() + tcp_check_space() -> sk_stream_write_space() (net/ipv4/tcp_input.c): snd_una
//     advances, and a writer blocked in sk_stream_wait_memory() is woken once the free space is
//     at least half of what is queued (sk_stream_wspace >= sk_stream_min_wspace)
//   connections between two simulated Linux hosts run the kernel's TCP instead (tcp.hpp)
#include <algorithm>

#include "sim/kernel/kernel.hpp"

namespace napisim {

Socket& Kernel::add_socket(int nic, std::uint32_t hash) {
  Socket& s = sockets_.add();
  s.nic = nic;
  s.hash = hash;
  s.rx_queue = nics_[static_cast<std::size_t>(nic)]->rss->queue_of(hash);
  s.ll_usec = kp_.net.busy_read;  // sock_init_data(): sk_ll_usec = sysctl_net_busy_read
  return s;
}

Epoll& Kernel::add_epoll() {
  auto e = std::make_unique<Epoll>();
  e->id = static_cast<int>(epolls_.size());
  e->busy_poll_usecs = epoll_defaults_.busy_poll_usecs;
  e->busy_poll_budget = epoll_defaults_.busy_poll_budget;
  e->prefer_busy_poll = epoll_defaults_.prefer_busy_poll;
  e->event_poll_only = epoll_defaults_.event_poll_only;
  epolls_.push_back(std::move(e));
  return *epolls_.back();
}

void Kernel::epoll_ctl_add(Epoll& ep, Socket& s, std::uint8_t events) {
  s.ep = &ep;
  s.ep_events = events;
  ep_link_if_ready(ep, s);  // ep_insert()
}

void Kernel::ep_modify(Epoll& ep, Socket& s, std::uint8_t events, int cpu) {
  // epi->event.events = event->events; smp_mb(); if (ep_item_poll(epi, &pt, 1)) { if
  // (!ep_is_linked(epi)) { list_add_tail(&epi->rdllink, &ep->rdllist); if
  // (waitqueue_active(&ep->wq)) wake_up(&ep->wq); } }
  s.ep_events = events;
  if (!ep_link_if_ready(ep, s)) return;
  if (ep.spinner) spin_wake(*ep.spinner);
  if (ep.wq.waiter) wake_up(ep.wq, cpu);
}

Proc<void> Kernel::epoll_ctl_mod(Task& t, Epoll& ep, Socket& s, std::uint8_t events) {
  co_await exec(task_ctx(t, CpuClass::kSystem), epoll_ctl_ns());
  ep_modify(ep, s, events, t.cpu);
}

Nanos Kernel::skb_cost(const Skb& skb, int cpu) {
  Socket& s = sockets_[skb.sock];
  if (s.tcp_state != TcpState::kEstablished) [[unlikely]]
    return listen_rcv_cost(s, skb);
  // tcp_v4_rcv(): bh_lock_sock() and tcp_rcv_established() write the socket's fast-path lines.
  const Nanos bounce = sk_touch(s, cpu);
  if (skb.ack_only) return costs_.rx_ack_ns + bounce;
  Nanos c = costs_.rx_skb_ns + costs_.sk_data_ready_ns + bounce;
  // The ACK of an skb of two or more segments; the kernel's TCP charges its ACKs where it sends
  // them (Kernel::take_tcp_owed()).
  if (skb.segs >= 2 && !s.tcp) c += costs_.tx_ack_ns;
  if ((s.ep && (s.ep_events & kEpollIn) && s.ep->wq.waiter) || s.wq.waiter) c += costs_.wakeup_ns;
  return c;
}

void Kernel::netif_receive_skb(Ctx ctx, const Skb& skb, const TrainStamps* st) {
  if (skb.rps_cpu >= 0) {  // netif_receive_skb_list_internal(): RPS steers it to a backlog
    enqueue_to_backlog(ctx_cpu(ctx), skb, skb.rps_cpu, st);
    return;
  }
  Socket& s = socket(skb.sock);
  if (s.tcp_state != TcpState::kEstablished) [[unlikely]] {  // a listener's handshake: inet_csk.cpp
    tcp_listen_rcv(ctx, s, skb, st);
    return;
  }
  s.napi_id = skb.napi_id;  // sk_mark_napi_id
  if (s.tcp) {              // the kernel's TCP (tcp_input.cpp)
    tcp_rcv_established(ctx, s, skb, st);
    return;
  }
  if (skb.ack_only) {
    if (s.rcvbuf > 0) tcp_ack(ctx, s, skb.bytes);
    return;
  }
  s.rx_avail += skb.bytes;
  s.rcv_nxt += skb.bytes;
  if (stamps_) stamp_delivery(s, st);
  if (s.rx_timestamps) s.rx_stamps.push_back(Socket::RxStamp{s.rcv_nxt, now()});
  ++s.rx_skbs;
  if (s.spinner) spin_wake(*s.spinner);  // sk_busy_loop_end() sees the data
  if (skb.segs >= 2) {
    nic_transmit(ctx, s, 0, true);
  } else if (s.rcvbuf > 0) {
    // tcp_measure_rcv_mss(), then __tcp_ack_snd_check(): more than one full frame unacked.
    const std::int64_t len = skb.bytes;
    if (len >= s.rcv_mss) s.rcv_mss = std::min<std::int64_t>(len, 65483);  // advmss of lo's 64 KiB MTU
    if (s.rcv_nxt - s.rcv_wup > s.rcv_mss) {
      ++delayed_acks_;
      nic_transmit(ctx, s, 0, true);
    }
  }
  sk_data_ready(ctx, s);
}

void Kernel::set_stamps(bool on) {
  stamps_ = on;
  observed_ = trace_ || stamps_;
  backlog_stamps_.assign(on ? static_cast<std::size_t>(nr_cpus()) : 0, Fifo<TrainStamps>(64));
  wait_viewers_.assign(on ? static_cast<std::size_t>(nr_cpus()) : 0, {});
  for (Napi* n : napis_)
    n->stamps = on ? std::make_unique<NapiStamps>() : nullptr;
  for (int c = 0; c < nr_cpus(); ++c)
    cpu(c).sd.backlog.stamps = on ? std::make_unique<NapiStamps>() : nullptr;
  for (auto& t : tasks_) {
    t->view_acc = t->own = ClassTimes{};
    t->view_base = on && t->cpu >= 0 ? cpu_times_at(cpu(t->cpu), host_.now()) : ClassTimes{};
  }
}

void Kernel::stamp_delivery(Socket& s, const TrainStamps* st) {
  SocketStamps& ss = socket_stamps(s.id);
  RxPath& p = ss.last;
  static_cast<TrainStamps&>(p) = st ? *st : TrainStamps::at(now());
  p.deliver = now();
  p.reader = s.reader ? task_view(*s.reader) : ClassTimes{};
  if (ss.log) ss.log->push_back(PathLogEntry{s.rcv_nxt, p});
}

const RxPath& Kernel::last_rx(int sock) {
  return socket_stamps(sock).last;
}

void Kernel::keep_path_log(int sock) {
  socket_stamps(sock).log = std::make_unique<Fifo<PathLogEntry>>(4);
}

RxPath Kernel::path_through(int sock, std::int64_t end) {
  SocketStamps& ss = socket_stamps(sock);
  if (!ss.log) return ss.last;
  while (!ss.log->empty() && ss.log->front().end < end)
    ss.log->pop_front();
  return ss.log->empty() ? ss.last : ss.log->front().path;
}

void Kernel::sk_data_ready(Ctx ctx, Socket& s) {
  Epoll* ep = s.ep;
  if (!ep) {
    // sock_def_readable(): wake_up_interruptible_sync_poll(), WF_SYNC even from softirq.
    if (s.wq.waiter) wake_up(s.wq, ctx_cpu(ctx), /*sync=*/true);
    return;
  }
  ep->napi_id = s.napi_id;                // ep_set_busy_poll_napi_id(), before the mask check
  if (!(s.ep_events & kEpollIn)) return;  // ep_poll_callback(): !(pollflags & epi->event.events)
  if (!s.on_ready_list) {
    ep->ready.push_back(s.id);
    s.on_ready_list = true;
  }
  if (ep->spinner) spin_wake(*ep->spinner);
  // ep_poll_callback() gets sock_def_readable()'s WF_SYNC but wakes ep->wq with plain wake_up()
  // (until 900bbaae67e9, v6.10, which every modelled setup predates).
  wake_up(ep->wq, ctx_cpu(ctx));
}

Nanos Kernel::ep_send_events(Task& t, Epoll& ep, int maxevents, std::vector<int>& out) {
  out.clear();
  // ep_start_scan(): the items queued now form the scan (txlist); what the loop re-queues goes
  // behind them and is not scanned again.
  for (std::size_t n = ep.ready.size(); n > 0 && static_cast<int>(out.size()) < maxevents; --n) {
    const int id = ep.ready.front();
    ep.ready.pop_front();
    Socket& s = socket(id);
    if (!ep_item_poll(s)) {  // no longer ready: dropped from the list
      s.on_ready_list = false;
      continue;
    }
    out.push_back(id);
    if (s.ep_events & kEpollOneshot) {
      s.ep_events = kEpollOneshot;  // epi->event.events &= EP_PRIVATE_BITS
      s.on_ready_list = false;
    } else {
      ep.ready.push_back(id);  // level-triggered: list_add_tail(&epi->rdllink, &ep->rdllist)
    }
  }
  // ep_try_send_events() -> ep_suspend_napi_irqs() (v6.13 IRQ suspension)
  if (ep.prefer_busy_poll && ep.napi_id >= 0) napi_suspend_irqs(cpu(t.cpu), ep.napi_id);
  return static_cast<Nanos>(out.size()) * costs_.epoll_event_ns;
}

bool Kernel::ep_events_available(Epoll& ep) {
  // fs/eventpoll.c v6.6: ep_events_available() only tests !list_empty(&ep->rdllist); ep_poll()
  // then runs ep_send_events(), and when every item it finds is stale (dropped, 0 events) it loops
  // back and sleeps. This folds the two as far as they decide anything: the items at the head no
  // longer ready leave the list until a ready one is found; the empty transfer is not charged.
  while (!ep.ready.empty()) {
    Socket& s = socket(ep.ready.front());
    if (ep_item_poll(s)) return true;
    ep.ready.pop_front();
    s.on_ready_list = false;
  }
  return false;
}

bool Kernel::EpollWaitAwait::await_ready() {
  // The common call: the caller takes the CPU time as owed, it blocks, and busy polling is off for
  // the epoll (its EPIOCSPARAMS and net.core.busy_poll are fixed at setup, so ep_busy_loop_on()
  // stays false whatever NAPI it learns). Anything else runs ep_poll_proc().
  if (!owed || timeout == 0 || k.ep_busy_poll_on(ep)) {
    proc = k.ep_poll_proc(t, ep, maxevents, out, timeout, owed);
    return false;
  }
  if (!k.ep_events_available(ep)) return false;
  // Events already queued: found as the call starts, the entry is owed with the transfer.
  entry = k.ep_poll_entry_ns();
  return true;
}

std::coroutine_handle<> Kernel::EpollWaitAwait::await_suspend(std::coroutine_handle<> h) {
  if (proc.handle()) return proc.await_suspend(h);
  // ep_poll() with nothing queued: the syscall entry runs, then the task waits on ep->wq until
  // the ready list fills (ep_poll_wait_again() makes each resumption re-check it, as ep_poll()'s
  // loop does), and the caller resumes only then.
  t.ep_poll = &ep;
  const Nanos cost = k.ep_poll_entry_ns();
  if (cost > 0) {
    k.begin_segment(k.task_ctx(t, CpuClass::kSystem), h, cost);
  } else {
    k.sleep_task(t, ep.wq, h);
  }
  return std::noop_coroutine();
}

int Kernel::EpollWaitAwait::await_resume() {
  if (proc.handle()) return proc.await_resume();
  *owed = entry + k.ep_send_events(t, ep, maxevents, out);
  return static_cast<int>(out.size());
}

bool Kernel::ep_poll_wait_again(Task& t) {
  Epoll& ep = *t.ep_poll;
  if (ep_events_available(ep)) {
    t.ep_poll = nullptr;
    return false;
  }
  // ep_poll(): no events yet (the entry just ended, or the wakeup found the list emptied or only
  // items no longer ready on it): sleep.
  sleep_task(t, ep.wq, t.slot.h);
  return true;
}

Proc<int> Kernel::epoll_wait_busy_loop(Task& t, Epoll& ep, int maxevents, std::vector<int>& out, Nanos* owed,
                                       Nanos until) {
  // ep_poll() with timeout 0 (fs/eventpoll.c v6.6): timed_out = 1, ep_events_available() false,
  // return 0. The empty calls change nothing, so their run is one spin. Each call reads the ready
  // list halfway through (the syscall entry and do_epoll_wait()'s lookup before, the return after:
  // half each [INFER]); the first read after the list fills takes the events (ep_send_events())
  // and the call returns.
  const Nanos call = ep_poll_entry_ns();
  const Nanos before = call / 2;
  bool due = false;
  ep_events_available(ep);  // re-queued items no longer ready end no spin
  for (;;) {
    const Nanos from = now();
    co_await spin_until(t, nullptr, &ep, until, CpuClass::kBusySpin);
    if (!ep.ready.empty()) {
      const Nanos into = call > 0 ? (now() - from) % call : 0;
      const Nanos to_read = into <= before ? before - into : call - into + before;
      if (to_read > 0) co_await exec(task_ctx(t, CpuClass::kSystem), to_read);
      break;
    }
    if (now() >= until) {  // the application's next timed task is due: it stops calling
      due = true;
      break;
    }
    co_await cond_resched(t);
  }
  if (due) {
    out.clear();
    if (owed) *owed = 0;
    co_return 0;
  }
  const Nanos cost = ep_send_events(t, ep, maxevents, out) + (call - before);
  if (owed) {
    *owed = cost;
  } else {
    co_await exec(task_ctx(t, CpuClass::kSystem), cost);
  }
  co_return static_cast<int>(out.size());
}

Nanos Kernel::select_estimate_accuracy(const Task& t, Nanos timeout_ns) {
  // rt tasks get no slack; others 0.1% of the wait (0.5% at a positive nice), at most MAX_SLACK
  // (100 ms), at least the task's timer_slack_ns.
  if (is_rt_policy(t.se.policy)) return 0;
  constexpr Nanos kMaxSlack = 100000000;
  const Nanos divfactor = t.se.nice > 0 ? 200 : 1000;
  const Nanos slack = std::min(kMaxSlack, std::max<Nanos>(0, timeout_ns) / divfactor);
  return std::max(slack, t.timer_slack_ns);
}

Proc<int> Kernel::ep_poll_proc(Task& t, Epoll& ep, int maxevents, std::vector<int>& out, int timeout, Nanos* owed,
                               Nanos expiry) {
  // The syscall entry and ep_poll(); when events are already queued it finds them at once and the
  // entry and the transfer are one stretch of system time (the ready list read as the call starts).
  // A prefer_busy_poll epoll keeps the separate entry: ep_send_events() arms its IRQ-suspension
  // timer after the entry, as the karsten2024 results were calibrated with.
  Nanos cost = ep_poll_entry_ns();
  if (!ep_events_available(ep) || ep.prefer_busy_poll) {
    co_await exec(task_ctx(t, CpuClass::kSystem), cost);
    cost = 0;
    while (!ep_events_available(ep)) {
      if (owed) *owed = 0;
      if (timeout == 0 || now() >= expiry) co_return 0;  // timed_out, and nothing came
      if (ep_busy_loop_on(ep) && co_await ep_busy_loop(t, ep)) continue;
      // schedule_hrtimeout_range(): the sleeper's hrtimer, on this CPU, ends the wait at `expiry`
      // (the end of the slack range: no other timer of this CPU is assumed to expire within it).
      if (expiry != kNever)
        t.sleep_timer.arm(host_.queue(), expiry, Prio::kTimer, this, kSleepTimer, static_cast<std::uint64_t>(t.id));
      co_await sleep_on(t, ep.wq);
      t.sleep_timer.cancel();  // woken by an event first: hrtimer_cancel()
    }
  }
  cost += ep_send_events(t, ep, maxevents, out);
  if (owed) {
    *owed = cost;
  } else {
    co_await exec(task_ctx(t, CpuClass::kSystem), cost);
  }
  co_return static_cast<int>(out.size());
}

std::int64_t Kernel::recv_take(Task& t, Socket& s, std::int64_t max_bytes, Nanos* cost) {
  const std::int64_t n = std::min(s.rx_avail, max_bytes);
  s.rx_avail -= n;
  s.rfs_cpu = t.cpu;  // sock_rps_record_flow()
  // Copying payload that a NIC DMA'd into another node's memory (numa_remote_ns, sim/hw/nic.hpp).
  const Nanos remote =
      n > 0 && s.nic >= 0
          ? numa_remote_ns(topo_, t.cpu, static_cast<int>(nics_[static_cast<std::size_t>(s.nic)]->params.numa_node))
          : 0;
  // lock_sock() and tcp_recvmsg_locked() (copied_seq, the receive queue) write its lines.
  *cost = costs_.syscall_ns + costs_.recv_ns + n * costs_.copy_ns_per_kb / 1024 + remote + sk_touch(s, t.cpu);
  if (s.tcp && n > 0) tcp_rcv_space_adjust(s, *s.tcp);  // tcp_recvmsg_locked(), after the copy
  if (s.tcp && tcp_cleanup_rbuf_wanted(s, *s.tcp, n)) {
    // tcp_recvmsg() -> tcp_cleanup_rbuf(): here as the data is taken; an ACK it sends adds its CPU
    // time to the call's.
    tcp_cpu_now_ = t.cpu;
    tcp_cleanup_rbuf(task_ctx(t, CpuClass::kSystem), s, n);
    *cost += take_tcp_owed();
  }
  return n;
}

Proc<void> Kernel::recv_done(Task& t, Socket& s, std::int64_t n) {
  // tcp_cleanup_rbuf(): a window update once reading has at least doubled the advertised window.
  if (s.rcvbuf > 0 && n > 0 && s.rcv_wnd < s.rcvbuf / 2 && s.rcvbuf - s.rx_avail >= 2 * s.rcv_wnd) {
    local_bh_disable(t);
    nic_transmit(task_ctx(t, CpuClass::kSystem), s, 0, true);
    co_await local_bh_enable(t);
  }
}

Proc<std::int64_t> Kernel::sys_recv(Task& t, Socket& s, std::int64_t max_bytes) {
  Nanos cost;
  const std::int64_t n = recv_take(t, s, max_bytes, &cost);
  co_await exec(task_ctx(t, CpuClass::kSystem), cost);
  if (s.rcvbuf > 0) co_await recv_done(t, s, n);
  co_return n;
}

Proc<std::int64_t> Kernel::sys_recv_wait(Task& t, Socket& s, std::int64_t max_bytes) {
  // tcp_recvmsg_locked(): "if (sk_can_busy_loop(sk) && skb_queue_empty_lockless(...))
  // sk_busy_loop(sk, nonblock)" before sk_wait_data() puts the task to sleep.
  if (s.rx_avail == 0) co_await sk_busy_loop(t, s);
  while (s.rx_avail == 0)
    co_await sleep_on(t, s.wq);  // sk_wait_data()
  co_return co_await sys_recv(t, s, max_bytes);
}

Nanos Kernel::send_cost(Task& t, Socket& s, std::int64_t bytes) {
  // One tx_tso_ns per super-packet the device is handed: lo's 64 KiB skbs, or the NIC's trains.
  const std::int64_t tso = s.lo_peer >= 0 ? lo_xmit_skbs(bytes) : kp_.net.tso_count(bytes);
  s.rfs_cpu = t.cpu;
  const Nanos lo = s.lo_peer >= 0 ? tso * costs_.rps_enqueue_ns : 0;  // __netif_rx per skb
  return costs_.syscall_ns + costs_.send_ns + tso * costs_.tx_tso_ns + bytes * costs_.copy_ns_per_kb / 1024 + lo +
         sk_touch(s, t.cpu);  // lock_sock(), tcp_sendmsg_locked(): write_seq, the write queue
}

Proc<void> Kernel::sys_send(Task& t, Socket& s, std::int64_t bytes) {
  co_await exec(task_ctx(t, CpuClass::kSystem), send_cost(t, s, bytes));
  if (s.lo_peer < 0) {
    nic_transmit(task_ctx(t, CpuClass::kSystem), s, bytes, false);
    co_return;
  }
  // __dev_queue_xmit() runs under rcu_read_lock_bh(): loopback_xmit() raises NET_RX, and the
  // rcu_read_unlock_bh() -> local_bh_enable() runs it right here, on the sender's CPU.
  local_bh_disable(t);
  nic_transmit(task_ctx(t, CpuClass::kSystem), s, bytes, false);
  co_await local_bh_enable(t);
}

// ---- flow-control sockets' ACKs ----------------------------------------------------------------

std::int64_t Kernel::tcp_event_ack_sent(Socket& s) {
  const std::int64_t acked = s.rcv_nxt - s.rcv_wup;
  s.rcv_wup = s.rcv_nxt;
  s.rcv_wnd = s.rcvbuf - s.rx_avail;
  return acked;
}

void Kernel::tcp_ack(Ctx ctx, Socket& s, std::int64_t ack_seq) {
  // after(ack, snd_una) in 32-bit sequence space.
  const auto delta =
      static_cast<std::int32_t>(static_cast<std::uint32_t>(ack_seq) - static_cast<std::uint32_t>(s.snd_una));
  if (delta > 0) s.snd_una += delta;
  if (s.lo_peer >= 0) s.snd_wnd = socket(s.lo_peer).rcv_wnd;
  // sk_stream_write_space() -> ep_poll_callback(EPOLLOUT): an epoll item waiting to write is
  // queued once the socket is writable (ep_modify() with its mask unchanged does exactly that).
  if (s.ep && (s.ep_events & kEpollOut) && !s.on_ready_list) ep_modify(*s.ep, s, s.ep_events, ctx_cpu(ctx));
  if (!s.wq.waiter) return;
  const std::int64_t queued = s.snd_nxt - s.snd_una;
  const std::int64_t limit = std::min(s.sndbuf, s.snd_wnd);
  if (limit - queued >= queued / 2) wake_up(s.wq, ctx_cpu(ctx));  // sk_stream_write_space()
}

}  // namespace napisim
