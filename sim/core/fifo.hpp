// napisim: Fifo<T>, a growable ring buffer. Unlike std::deque it never frees or allocates once it
// has reached the run's high-water mark (docs/design.md: no heap allocation per event in steady state).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"

namespace napisim {

template <class T>
class Fifo {
 public:
  explicit Fifo(std::size_t capacity = 16) {
    std::size_t c = 1;
    while (c < capacity)
      c <<= 1;
    buf_.resize(c);
    mask_ = c - 1;
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  T& back() { return buf_[(head_ + size_ - 1) & mask_]; }
  T& operator[](std::size_t i) { return buf_[(head_ + i) & mask_]; }
  const T& operator[](std::size_t i) const { return buf_[(head_ + i) & mask_]; }
  void push_back(const T& v) {
    if (size_ > mask_) grow();
    buf_[(head_ + size_) & mask_] = v;
    ++size_;
  }
  void pop_front() {
    NAPISIM_ASSERT(size_ > 0, "pop_front on empty Fifo");
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  void clear() { head_ = size_ = 0; }

 private:
  void grow() {
    std::vector<T> n(buf_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i)
      n[i] = std::move((*this)[i]);
    buf_ = std::move(n);
    mask_ = buf_.size() - 1;
    head_ = 0;
  }
  std::vector<T> buf_;
  std::size_t mask_ = 0;  // buf_.size() - 1 (a power of two minus one), kept: Inbound's size is not a power of two
  std::size_t head_ = 0, size_ = 0;
};

}  // namespace napisim
