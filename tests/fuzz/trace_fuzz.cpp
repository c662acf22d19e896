// libFuzzer target: the trace reader (workload "trace": CSV and neper --log-rtt files). The first
// byte picks the format (auto, csv, neper) and whether the trace repeats; the rest is the file.
// Bad files must end in ConfigError naming the line and column; anything else is a defect.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "sim/core/error.hpp"
#include "sim/workloads/trace.hpp"

#include <unistd.h>

namespace {
std::string temp_path() {
  static const std::string path = "/tmp/napisim_trace_fuzz." + std::to_string(::getpid());
  return path;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  napisim::TraceParams p;
  static const char* const kFormats[] = {"auto", "csv", "neper"};
  p.format = kFormats[data[0] % 3];
  p.repeat = (data[0] & 4) != 0;
  p.file = temp_path();
  if (std::FILE* f = std::fopen(p.file.c_str(), "wb")) {
    std::fwrite(data + 1, 1, size - 1, f);
    std::fclose(f);
  } else {
    return 0;
  }
  try {
    std::int64_t flows = 0;
    (void)napisim::load_trace(p, "/workload/params", &flows);
  } catch (const napisim::ConfigError&) {
  }
  return 0;
}
