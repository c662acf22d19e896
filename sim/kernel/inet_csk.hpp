// napisim: listening sockets, the accept queue and the wakeups they share (Linux v6.6).
//
//   listen(fd, backlog)        __sys_listen(): backlog capped at net.core.somaxconn (4096 since
//                              v5.4, 19f92a030ca6); sk_max_ack_backlog = that
//   tcp_conn_request()         a SYN on a listener whose accept queue is full is dropped
//                              (sk_acceptq_is_full(): sk_ack_backlog > sk_max_ack_backlog, so a
//                              backlog of B holds B + 1; LINUX_MIB_LISTENOVERFLOWS); otherwise a
//                              request sock is made and a SYN-ACK sent (net/ipv4/tcp_input.c)
//   tcp_check_req()            the handshake-completing ACK: tcp_v4_syn_recv_sock() fails on a
//                              full accept queue (listen_overflow: the ACK is dropped, the request
//                              sock stays, the client retransmits); otherwise the child joins the
//                              accept queue (inet_csk_reqsk_queue_add(), tail) and the listener's
//                              sk_data_ready() runs (net/ipv4/tcp_minisocks.c, inet_connection_sock.c)
//   sock_def_readable()        wakes the listener's wait queue (include/linux/wait.h
//                              __wake_up_common(), nr_exclusive 1): every non-exclusive entry, then
//                              exclusive entries in order until one reports a wakeup. Non-exclusive
//                              entries are epoll items added with add_wait_queue() (at the head);
//                              exclusive ones are EPOLLEXCLUSIVE items (add_wait_queue_exclusive(),
//                              at the tail, fs/eventpoll.c ep_ptable_queue_proc()) and tasks
//                              blocked in accept() (inet_csk_wait_for_connect():
//                              prepare_to_wait_exclusive(), tail)
//   ep_poll_callback()         links the listen fd's item on its epoll's ready list and wakes
//                              ep->wq if a task waits there; an EPOLLEXCLUSIVE item reports a
//                              wakeup only then, a plain item always (so every epoll is woken: the
//                              thundering herd)
//   inet_csk_accept()          the head of the accept queue, or -EAGAIN (O_NONBLOCK), or sleep
//                              until sk_data_ready() (exclusive, FIFO)
//
// ep_send_events() re-polls each item before reporting it (ep_item_poll()); the only items napisim
// has that can stop being ready while linked are listen fds, whose readiness another thread's
// accept() takes away. Their items stay linked, as in the kernel, until the next scan drops them:
// a woken thread whose ready list holds only stale items goes back to sleep in ep_poll()
// (ep_events_available() re-polls the head).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/fifo.hpp"
#include "sim/kernel/waitqueue.hpp"

namespace napisim {

struct Epoll;

/// A connection's TCP state as the listener sees it (include/net/tcp_states.h, the states a
/// server-side connection of a listener passes through here).
enum class TcpState : std::uint8_t {
  kEstablished,  // data flows (every connection that has no listener)
  kClose,        // no connection: its next packet from the client is a SYN
  kSynRecv,      // a request sock: its next packet completes the handshake
};

struct Listener {
  int id = 0;
  std::int64_t max_ack_backlog = 0;  // sk_max_ack_backlog
  Fifo<int> accept_queue{16};        // icsk_accept_queue: established children (socket ids), FIFO
  /// The listen fd's item in one epoll: a Socket that stands for the epitem (its rx_avail mirrors
  /// the accept queue's length, so ep_item_poll() says EPOLLIN while a connection waits).
  struct Item {
    Epoll* ep = nullptr;
    int sock = -1;
    bool exclusive = false;  // EPOLLEXCLUSIVE
  };
  std::vector<Item> items;             // sk_wq order: plain items (newest first), then exclusive ones
  Fifo<WaitQueue*> accept_waiters{4};  // tasks blocked in accept(), each on its own WaitQueue
  // statistics (nstat TcpExtListenOverflows / TcpExtListenDrops)
  std::uint64_t overflows = 0, accepted = 0, syns = 0, wakeups = 0;
};

/// A futex word's waiters (kernel/futex/waitwake.c v6.6): futex_wait() queues the caller at the
/// tail of its hash bucket's plist (FIFO among tasks of one priority), futex_wake(nr) wakes the
/// first nr. Each waiter sleeps on its own WaitQueue.
struct FutexQueue {
  Fifo<WaitQueue*> waiters{4};
};

}  // namespace napisim
