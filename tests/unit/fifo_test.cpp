// Fifo<T> (sim/core/fifo.hpp), the ring buffer behind ready lists, NIC arrival queues and TX
// completions: FIFO order across wrap-around and across growth while wrapped, indexing from the
// head, and a capacity rounded up to a power of two.
#include "sim/core/fifo.hpp"

#include <cstdint>
#include <deque>

#include <gtest/gtest.h>

namespace napisim {
namespace {

// A 40-byte element (the size of a NIC's pending arrival): not a power of two.
struct Item {
  std::int64_t a = 0;
  std::int64_t pad[4] = {};
};

TEST(FifoTest, KeepsOrderAcrossWrapAroundAndGrowthWhileWrapped) {
  Fifo<Item> f(3);  // rounded up to 4 slots
  std::deque<std::int64_t> ref;
  std::int64_t next = 0;
  auto push = [&](int n) {
    for (int i = 0; i < n; ++i) {
      f.push_back(Item{next});
      ref.push_back(next++);
    }
  };
  auto check = [&] {
    ASSERT_EQ(f.size(), ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i)
      ASSERT_EQ(f[i].a, ref[i]) << "index " << i;
    if (!ref.empty()) {
      EXPECT_EQ(f.front().a, ref.front());
      EXPECT_EQ(f.back().a, ref.back());
    }
  };
  auto pop = [&](int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(f.front().a, ref.front());
      f.pop_front();
      ref.pop_front();
    }
  };
  push(3);
  ASSERT_NO_FATAL_FAILURE(pop(2));  // head at slot 2
  push(3);                          // wraps: slots 2, 3, 0, 1 hold 2..5 (full)
  ASSERT_NO_FATAL_FAILURE(check());
  push(1);  // grows to 8 while wrapped
  ASSERT_NO_FATAL_FAILURE(check());
  ASSERT_NO_FATAL_FAILURE(pop(3));
  push(9);  // wraps in 8 slots, then grows to 16 while wrapped
  ASSERT_NO_FATAL_FAILURE(check());
  // Many rounds through the grown ring: the index mask must be the grown one.
  for (int round = 0; round < 50; ++round) {
    push(7);
    ASSERT_NO_FATAL_FAILURE(pop(6));
    ASSERT_NO_FATAL_FAILURE(check());
  }
  pop(static_cast<int>(ref.size()));
  EXPECT_TRUE(f.empty());
  f.push_back(Item{42});
  EXPECT_EQ(f.front().a, 42);
  f.clear();
  EXPECT_TRUE(f.empty());
}

}  // namespace
}  // namespace napisim
