// libFuzzer target: the scenario loader as `napisim validate` drives it. The input is a scenario
// document, optionally followed by NUL-separated --set assignments; "include" paths resolve
// against the repository's scenarios/ directory. Bad input must end in ConfigError (exit 2 in
// the CLI, ValueError in Python); any other exception, crash, sanitizer report, hang or memory
// blow-up is a defect.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/params/json_util.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/simulation.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = in.find('\0');
  std::vector<std::string> sets;
  for (std::size_t at = nul; at != std::string_view::npos && sets.size() < 4;) {
    const std::size_t next = in.find('\0', at + 1);
    sets.emplace_back(in.substr(at + 1, next == std::string_view::npos ? std::string_view::npos : next - at - 1));
    at = next;
  }
  try {
    napisim::Json doc = napisim::parse_json_text(in.substr(0, nul), "fuzz input");
    napisim::apply_overrides(doc, sets);
    const napisim::Scenario s = napisim::parse_scenario(doc, NAPISIM_FUZZ_BASE_DIR);
    // What validate adds: the host is built (cpulists against its CPUs, NIC and client checks).
    if (s.platform.xml.empty()) {
      const napisim::Simulation check(s, napisim::Simulation::standalone_paths(s));
    }
    (void)napisim::resolve_scenario(s);
  } catch (const napisim::ConfigError&) {
  }
  return 0;
}
