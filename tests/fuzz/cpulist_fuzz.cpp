// libFuzzer target: the cpulist parser (irq_affinity, server_cpus, taskset-like masks, in the
// kernel's bitmap_parselist() syntax). The first two bytes give the host's CPU count (1-4096).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/core/error.hpp"
#include "sim/hw/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const int nr_cpus = 1 + ((data[0] | (data[1] << 8)) % 4096);
  const std::string_view list(reinterpret_cast<const char*>(data + 2), size - 2);
  try {
    const napisim::CpuMask m = napisim::CpuMask::parse(list, nr_cpus, "/cpulist");
    for (int c = m.first(); c >= 0; c = m.next(c)) {
      if (c >= nr_cpus) __builtin_trap();  // a mask never names a CPU the host lacks
    }
  } catch (const napisim::ConfigError&) {
  }
  return 0;
}
