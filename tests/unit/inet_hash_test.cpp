// The SO_REUSEPORT connection hash (sim/kernel/inet_hash.hpp) and the server thread it picks.
// Expected values come from a separate transcription of include/linux/jhash.h's __jhash_final()
// (Python, 32-bit arithmetic) and of __inet_ehashfn()'s argument order and byte order.
#include "sim/kernel/inet_hash.hpp"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/host_model.hpp"
#include "sim/hw/topology.hpp"
#include "sim/kernel/kernel.hpp"
#include "sim/workloads/workload.hpp"

namespace napisim {
namespace {

TEST(InetHashTest, Jhash3WordsMatchesTheKernelMacro) {
  EXPECT_EQ(jhash_3words(0, 0, 0, 0), 0x1b68e557u);
  EXPECT_EQ(jhash_3words(1, 2, 3, 4), 0x8103143fu);
  EXPECT_EQ(jhash_3words(0xdeadbeef, 0x12345678, 0x9abcdef0, 0x5a5a5a5a), 0xcca9941bu);
}

TEST(InetHashTest, InetEhashfnHashesLocalAddressPeerAddressAndPortsInKernelByteOrder) {
  // 10.0.0.2:40000 -> 10.0.0.1:12867 (tcp_rr's first flow) as the server sees it.
  const FlowTuple in{0x0a000002u, 0x0a000001u, 40000, 12867};
  EXPECT_EQ(inet_ehashfn(in, 0), 0x75da7b4du);
  EXPECT_EQ(inet_ehashfn(FlowTuple{0x0a000002u, 0x0a000001u, 40001, 12867}, 0x12345678u), 0x6409e254u);
  // The peer's and the local side are not interchangeable.
  EXPECT_NE(inet_ehashfn(FlowTuple{0x0a000001u, 0x0a000002u, 12867, 40000}, 0), 0x75da7b4du);
}

TEST(InetHashTest, ReciprocalScale) {
  EXPECT_EQ(reciprocal_scale(0, 56), 0u);
  EXPECT_EQ(reciprocal_scale(0xffffffffu, 56), 55u);
  EXPECT_EQ(reciprocal_scale(0x80000000u, 56), 28u);
}

TEST(InetHashTest, ReuseportSpreadsConsecutivePortsLikeRandomDraws) {
  // 1000 flows from consecutive client ports over 56 threads with the secret 0x12345678: jhash gives
  // 9 to 26 flows per thread (the Python transcription's counts); every thread gets some.
  std::vector<int> per_thread(56, 0);
  for (int f = 0; f < 1000; ++f) {
    const FlowTuple in{0x0a000002u, 0x0a000001u, static_cast<std::uint16_t>(40000 + f), 12867};
    ++per_thread[reciprocal_scale(inet_ehashfn(in, 0x12345678u), 56)];
  }
  EXPECT_EQ(*std::min_element(per_thread.begin(), per_thread.end()), 9);
  EXPECT_EQ(*std::max_element(per_thread.begin(), per_thread.end()), 26);
  const std::vector<int> first{32, 21, 16, 24, 32, 25, 40, 42};
  for (int f = 0; f < 8; ++f) {
    const FlowTuple in{0x0a000002u, 0x0a000001u, static_cast<std::uint16_t>(40000 + f), 12867};
    EXPECT_EQ(static_cast<int>(reciprocal_scale(inet_ehashfn(in, 0x12345678u), 56)),
              first[static_cast<std::size_t>(f)]);
  }
}

TEST(InetHashTest, KernelKeysTheHashWithASecretFromTheSeed) {
  // The secret is drawn per host from the run's seed: the same seed gives the same listener
  // choice, another seed (almost always) another one.
  TopologyParams tp;
  tp.cores_per_llc = 2;
  const Topology topo(tp);
  const FlowTuple in{0x0a000002u, 0x0a000001u, 40000, 12867};
  auto hash_with_seed = [&](std::uint64_t seed) {
    HostModel host;
    const RngRoot root(seed, 0);
    Kernel k(host, topo, KernelParams{}, CostParams{}, &root, "server/");
    return k.inet_ehashfn(in);
  };
  EXPECT_EQ(hash_with_seed(1), hash_with_seed(1));
  EXPECT_NE(hash_with_seed(1), hash_with_seed(2));
  // reuseport_thread(): the hash decides unless flows are steered by RX queue.
  Socket s;
  s.rx_queue = 5;
  EXPECT_EQ(reuseport_thread(s, 0x80000000u, 56, false), 28);
  EXPECT_EQ(reuseport_thread(s, 0x80000000u, 4, true), 1);
}

}  // namespace
}  // namespace napisim
