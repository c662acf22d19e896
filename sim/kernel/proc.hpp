// napisim: Proc, the coroutine type that kernel code and task bodies are written in.
//
// Kernel paths are sequential code with loops (net_rx_action, handle_softirqs, a neper server
// thread's epoll loop); writing them as C++20 coroutines keeps them shaped like the kernel's own
// pseudo-code. A Proc suspends only on the CPU engine's awaiters (execute N ns of work, sleep on a
// wait queue, change context level) and is resumed only from the host model's event loop, never
// synchronously from other kernel code, so there is no re-entrancy.
//
//  * Proc<T> is lazily started. `co_await child()` runs the child with symmetric transfer and
//    returns its value; the child's frame is destroyed when the awaiting Proc object goes away.
//  * A top-level Proc (a task body, an interrupt) is started with start(); when it finishes, its
//    on_done callback tells the engine.
//  * Frames come from a size-class free list (FramePool), so steady-state execution allocates
//    nothing: the pool keeps freed frames for reuse. The pool is an allocator, not simulation state.
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <new>
#include <utility>

namespace napisim {

/// Free lists of coroutine frames by 64-byte size class, threaded through the freed frames
/// themselves (the first word of a free frame points at the next one).
class FramePool {
 public:
  static void* allocate(std::size_t n) {
    const std::size_t cls = (n + 63) / 64;
    if (cls < kClasses) {
      void*& head = heads()[cls];
      if (void* p = head) {
        head = *static_cast<void**>(p);
        return p;
      }
    }
    return ::operator new(cls * 64);
  }
  static void deallocate(void* p, std::size_t n) {
    const std::size_t cls = (n + 63) / 64;
    if (cls >= kClasses) {
      ::operator delete(p);
      return;
    }
    void*& head = heads()[cls];
    *static_cast<void**>(p) = head;
    head = p;
  }

 private:
  static constexpr std::size_t kClasses = 64;  // frames up to 4 KiB are recycled
  static void** heads() {
    static thread_local void* lists[kClasses] = {};
    return lists;
  }
};

struct ProcPromiseBase {
  std::coroutine_handle<> continuation;  // the Proc awaiting this one, if any
  void (*on_done)(void*) = nullptr;      // top-level completion callback
  void* on_done_arg = nullptr;

  static void* operator new(std::size_t n) { return FramePool::allocate(n); }
  static void operator delete(void* p, std::size_t n) { FramePool::deallocate(p, n); }

  std::suspend_always initial_suspend() noexcept { return {}; }
  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      auto& p = h.promise();
      if (p.continuation) return p.continuation;
      if (p.on_done) p.on_done(p.on_done_arg);
      return std::noop_coroutine();
    }
    void await_resume() noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() { std::terminate(); }  // kernel code does not throw
};

template <class T = void>
class [[nodiscard]] Proc {
 public:
  struct promise_type : ProcPromiseBase {
    T value{};
    Proc get_return_object() { return Proc(std::coroutine_handle<promise_type>::from_promise(*this)); }
    void return_value(T v) { value = std::move(v); }
  };
  using Handle = std::coroutine_handle<promise_type>;

  Proc() = default;
  explicit Proc(Handle h) : h_(h) {}
  Proc(Proc&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Proc& operator=(Proc&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  ~Proc() { reset(); }

  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
    h_.promise().continuation = awaiting;
    return h_;
  }
  T await_resume() { return std::move(h_.promise().value); }

  void reset() {
    if (h_) h_.destroy();
    h_ = {};
  }
  Handle handle() const { return h_; }

 private:
  Handle h_{};
};

template <>
class [[nodiscard]] Proc<void> {
 public:
  struct promise_type : ProcPromiseBase {
    Proc get_return_object() { return Proc(std::coroutine_handle<promise_type>::from_promise(*this)); }
    void return_void() {}
  };
  using Handle = std::coroutine_handle<promise_type>;

  Proc() = default;
  explicit Proc(Handle h) : h_(h) {}
  Proc(Proc&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Proc& operator=(Proc&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  ~Proc() { reset(); }

  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
    h_.promise().continuation = awaiting;
    return h_;
  }
  void await_resume() noexcept {}

  /// Top-level start: runs until the first suspension; `done(arg)` is called when the body ends.
  void start(void (*on_done)(void*), void* arg) {
    h_.promise().on_done = on_done;
    h_.promise().on_done_arg = arg;
    h_.resume();
  }
  bool done() const { return !h_ || h_.done(); }
  void reset() {
    if (h_) h_.destroy();
    h_ = {};
  }
  Handle handle() const { return h_; }

 private:
  Handle h_{};
};

}  // namespace napisim
