// napisim: the owner of a working set in the per-CPU cache-state model (sim/kernel/cache.cpp).
#pragma once

#include "sim/core/time.hpp"

namespace napisim {

/// What a CPU's private caches (L1, L2, shared by SMT siblings) hold of one owner's working set:
/// a task, a NAPI instance's rings and skbs, or a CPU's other softirq work.
struct CacheOwner {
  int cpu = -1;    // the CPU it last ran on (-1: never ran, its lines are in no private cache)
  Nanos mark = 0;  // busy ns of that CPU's core (both SMT siblings) when it last left it
};

}  // namespace napisim
