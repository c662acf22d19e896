// napisim: a wait queue with one exclusive waiter (epoll's wq, a kthread's sleep).
#pragma once

namespace napisim {
struct Task;
struct WaitQueue {
  Task* waiter = nullptr;
};
}  // namespace napisim
