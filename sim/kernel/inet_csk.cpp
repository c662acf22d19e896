// napisim: listening sockets, the accept queue, listen-fd wakeups and futexes (Linux v6.6:
// net/ipv4/inet_connection_sock.c, tcp_input.c tcp_conn_request(), tcp_minisocks.c
// tcp_check_req(), fs/eventpoll.c ep_poll_callback(), kernel/futex/waitwake.c). See inet_csk.hpp.
//
// Simplifications: a connection of a listener keeps its server Socket (and its RSS queue) from one
// connection to the next, as if the client reused its source port (TIME_WAIT is not modelled);
// the client's handshake-completing ACK carries the request's first bytes (a client that writes as
// soon as connect() returns sends them back to back); close() sends the FIN (a packet, tx_ack_ns)
// and the rest of the teardown is not modelled.
#include "sim/kernel/inet_csk.hpp"

#include "sim/kernel/kernel.hpp"

namespace napisim {

Listener& Kernel::listen(std::int64_t backlog) {
  auto l = std::make_unique<Listener>();
  l->id = static_cast<int>(listeners_.size());
  // __sys_listen(): "if ((unsigned int)backlog > somaxconn) backlog = somaxconn;"
  l->max_ack_backlog = std::min(backlog, kp_.net.somaxconn);
  listeners_.push_back(std::move(l));
  return *listeners_.back();
}

void Kernel::listen_child(Listener& l, Socket& s) {
  s.listener = l.id;
  s.tcp_state = TcpState::kClose;
}

Socket& Kernel::listen_epoll_add(Listener& l, Epoll& ep, bool exclusive) {
  Socket& item = sockets_.add();
  item.nic = -1;
  item.listener = l.id;
  item.ep = &ep;
  item.ep_events = kEpollIn;
  item.rx_avail = static_cast<std::int64_t>(l.accept_queue.size());
  // ep_ptable_queue_proc(): add_wait_queue_exclusive() (tail) or add_wait_queue() (head).
  if (exclusive) {
    l.items.push_back(Listener::Item{&ep, item.id, true});
  } else {
    l.items.insert(l.items.begin(), Listener::Item{&ep, item.id, false});
  }
  ep_link_if_ready(ep, item);  // ep_insert()
  return item;
}

bool Kernel::acceptq_is_full(const Listener& l) {
  // sk_acceptq_is_full(): "READ_ONCE(sk->sk_ack_backlog) > READ_ONCE(sk->sk_max_ack_backlog)"
  return static_cast<std::int64_t>(l.accept_queue.size()) > l.max_ack_backlog;
}

int Kernel::listen_wakeups(const Listener& l) const {
  // What sock_def_readable() would wake now: every plain item's waiting epoll, and the first
  // exclusive entry with a waiter (an EPOLLEXCLUSIVE item's epoll, else a blocked accept()).
  int n = 0;
  for (const Listener::Item& it : l.items) {
    if (!it.ep->wq.waiter) continue;
    ++n;
    if (it.exclusive) return n;
  }
  for (std::size_t i = 0; i < l.accept_waiters.size(); ++i)
    if (l.accept_waiters[i]->waiter) return n + 1;
  return n;
}

Nanos Kernel::listen_rcv_cost(const Socket& s, const Skb& skb) const {
  if (s.tcp_state == TcpState::kClose) return costs_.tcp_syn_ns;  // tcp_conn_request() + SYN-ACK
  const Listener& l = *listeners_[static_cast<std::size_t>(s.listener)];
  Nanos c = costs_.tcp_child_ns + costs_.sk_data_ready_ns + listen_wakeups(l) * costs_.wakeup_ns;
  if (!skb.ack_only && skb.bytes > 0) c += costs_.rx_skb_ns;
  return c;
}

void Kernel::tcp_listen_rcv(Ctx ctx, Socket& s, const Skb& skb, const TrainStamps* st) {
  Listener& l = *listeners_[static_cast<std::size_t>(s.listener)];
  s.napi_id = skb.napi_id;
  if (s.tcp_state == TcpState::kClose) {  // a SYN: tcp_conn_request()
    ++l.syns;
    if (acceptq_is_full(l)) {
      ++l.overflows;  // LINUX_MIB_LISTENOVERFLOWS, "goto drop": the client retransmits its SYN
      if (peer_) peer_->on_rx_drop(s.id, skb.bytes, skb.segs);
      return;
    }
    s.tcp_state = TcpState::kSynRecv;
    nic_transmit(ctx, s, 0, true);  // the SYN-ACK
    return;
  }
  // The handshake-completing ACK: tcp_check_req() -> inet_csk_complete_hashdance().
  if (acceptq_is_full(l)) {
    ++l.overflows;  // tcp_v4_syn_recv_sock() -> listen_overflow: the ACK is dropped
    if (peer_) peer_->on_rx_drop(s.id, skb.bytes, skb.segs);
    return;
  }
  s.tcp_state = TcpState::kEstablished;
  l.accept_queue.push_back(s.id);                                       // inet_csk_reqsk_queue_add()
  if (!skb.ack_only && skb.bytes > 0) netif_receive_skb(ctx, skb, st);  // tcp_child_process(): the data
  listen_data_ready(ctx, l);
}

// The listen fd's readiness (tcp_poll(): the accept queue is not empty) as its items' re-poll
// reads it. An item stays on a ready list when the queue empties, as in the kernel: the next
// ep_send_events() or ep_events_available() re-polls and drops it.
void Kernel::listen_sync_items(Listener& l) {
  const auto n = static_cast<std::int64_t>(l.accept_queue.size());
  for (const Listener::Item& it : l.items)
    socket(it.sock).rx_avail = n;
}

void Kernel::listen_data_ready(Ctx ctx, Listener& l) {
  listen_sync_items(l);
  const int cpu = ctx_cpu(ctx);
  // __wake_up_common(nr_exclusive = 1) over the listener's wait queue.
  for (const Listener::Item& it : l.items) {
    Epoll& ep = *it.ep;
    Socket& item = socket(it.sock);
    // ep_poll_callback()
    if (!item.on_ready_list) {
      ep.ready.push_back(item.id);
      item.on_ready_list = true;
    }
    if (ep.spinner) spin_wake(*ep.spinner);
    const bool woke = ep.wq.waiter && wake_up(ep.wq, cpu);
    if (woke) ++l.wakeups;
    if (it.exclusive && woke) return;  // an EPOLLEXCLUSIVE item reports the wakeup: stop
  }
  while (!l.accept_waiters.empty()) {
    WaitQueue* wq = l.accept_waiters.front();
    l.accept_waiters.pop_front();  // autoremove_wake_function()
    if (wq->waiter && wake_up(*wq, cpu, /*sync=*/true)) {
      ++l.wakeups;
      return;
    }
  }
}

int Kernel::accept_take(Listener& l) {
  if (l.accept_queue.empty()) return -1;
  const int child = l.accept_queue.front();
  l.accept_queue.pop_front();  // reqsk_queue_remove(), sk_acceptq_removed()
  ++l.accepted;
  listen_sync_items(l);
  return child;
}

Proc<int> Kernel::sys_accept(Task& t, Listener& l, WaitQueue* block) {
  co_await exec(task_ctx(t, CpuClass::kSystem), costs_.syscall_ns);
  int child = accept_take(l);
  while (child < 0 && block) {  // inet_csk_wait_for_connect(): prepare_to_wait_exclusive(), schedule()
    l.accept_waiters.push_back(block);
    co_await sleep_on(t, *block);
    child = accept_take(l);
  }
  if (child >= 0) co_await exec(task_ctx(t, CpuClass::kSystem), costs_.accept_ns);  // the new file and fd
  co_return child;
}

void Kernel::tcp_close(Ctx ctx, Socket& s) {
  if (s.ep) {  // eventpoll_release(): the closed file leaves its epoll
    if (s.on_ready_list) {
      Fifo<int>& q = s.ep->ready;
      for (std::size_t i = q.size(); i > 0; --i) {
        const int id = q.front();
        q.pop_front();
        if (id != s.id) q.push_back(id);
      }
      s.on_ready_list = false;
    }
    s.ep = nullptr;
  }
  s.rx_avail = 0;
  s.rx_stamps.clear();
  s.tcp_state = TcpState::kClose;
  nic_transmit(ctx, s, 0, true);  // the FIN
}

int Kernel::futex_wake(FutexQueue& q, int nr, int this_cpu) {
  int woken = 0;
  while (woken < nr && !q.waiters.empty()) {
    WaitQueue* wq = q.waiters.front();
    q.waiters.pop_front();
    if (wq->waiter && wake_up(*wq, this_cpu)) ++woken;
  }
  return woken;
}

}  // namespace napisim
