// RX arrivals without an event (Kernel::nic_deliver / rx_sync): while a channel's interrupt is
// masked and no busy poller spins on its NAPI, a train enters the ring when the next reader looks,
// at the place its event would have had. Published scenarios that exercise every way a channel is
// read or watched (saturated softirq and kthread NAPI, IRQ deferral, suspension and busy polling,
// a full-kernel client, RPS/RFS, a NIC stream whose small rings drop) must give the same result as
// with every arrival event kept (Simulation::set_lazy_rx(false)); only the event count may differ.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/params/json_util.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/simulation.hpp"

namespace napisim {
namespace {

struct Outcome {
  Json result;  // without the trajectory (events, each host's events, fingerprint)
  std::uint64_t events = 0;
};

Outcome run(const Json& scenario, const std::string& base_dir, bool lazy) {
  Json doc = scenario;
  apply_overrides(doc, {"warmup_s=0.003", "duration_s=0.006"});
  const Scenario s = parse_scenario(doc, base_dir);
  Simulation sim(s, Simulation::standalone_paths(s));
  sim.set_lazy_rx(lazy);
  sim.run_standalone();
  Outcome r{sim.result(Json::object()), 0};
  r.events = r.result["events"].get<std::uint64_t>();
  r.result.erase("events");
  r.result.erase("fingerprint");
  r.result["summary"].erase("events");
  if (r.result.contains("clients"))
    for (auto& [name, c] : r.result["clients"].items())
      c.erase("events");
  return r;
}

void expect_same_with_and_without_events(const Json& doc, const std::string& base_dir, bool fewer_events) {
  const Outcome lazy = run(doc, base_dir, true);
  const Outcome eager = run(doc, base_dir, false);
  EXPECT_EQ(lazy.result.dump(), eager.result.dump());
  if (fewer_events) {
    EXPECT_LT(lazy.events, eager.events);
  } else {
    EXPECT_LE(lazy.events, eager.events);
  }
  EXPECT_GT(lazy.result["summary"]["rx_packets"].get<std::uint64_t>(), 0u);
}

class PublishedScenario : public ::testing::TestWithParam<std::pair<const char*, bool>> {};

TEST_P(PublishedScenario, GivesTheSameResultWithEveryArrivalEventKept) {
  const std::filesystem::path path = std::filesystem::path(NAPISIM_SOURCE_DIR) / "scenarios" / GetParam().first;
  expect_same_with_and_without_events(load_scenario_doc(path.string()), path.parent_path().string(), GetParam().second);
}

// (scenario, whether the run must save events: saturated IRQ CPUs poll with the interrupt masked)
INSTANTIATE_TEST_SUITE_P(
    LazyRx, PublishedScenario,
    ::testing::Values(std::pair{"wei2020/tcp_rr_1B.json", true}, std::pair{"wei2020/tcp_rr_5KB_kthread.json", true},
                      std::pair{"kicinski2020/tapi.json", true}, std::pair{"karsten2024/defer200.json", true},
                      std::pair{"karsten2024/suspend20.json", true}, std::pair{"karsten2024/napibusy.json", false},
                      std::pair{"karsten2024/fullbusy.json", false},
                      std::pair{"examples/full_kernel_client.json", true},
                      std::pair{"tkhai2018/rr400_10g_rfs.json", false}),
    [](const ::testing::TestParamInfo<std::pair<const char*, bool>>& p) {
      std::string name = p.param.first;
      name = name.substr(0, name.size() - 5);  // .json
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

TEST(LazyRxTest, NicStreamWithDroppingRingsGivesTheSameResult) {
  // 100 Gb/s into 64-slot rings: trains that may not fit keep their events and drop at their time.
  const Json doc = Json::parse(R"({"name": "lazy_rx/stream_nic",
    "topology": {"numa_nodes": 1, "llcs_per_node": 1, "cores_per_llc": 4, "threads_per_core": 2},
    "nics": [{"queues": 2, "irq_affinity": "0-1", "speed_gbps": 100, "ring_size": 64}],
    "platform": {"clients": [{"link_gbps": 100}]},
    "models": [{"name": "napi_irq"}],
    "workload": {"type": "stream", "params": {}}})");
  const Outcome lazy = run(doc, ".", true);
  EXPECT_GT(lazy.result["summary"]["ring_drops"].get<std::uint64_t>(), 0u);
  expect_same_with_and_without_events(doc, ".", true);
}

}  // namespace
}  // namespace napisim
