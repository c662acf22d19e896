// What results report of each host is declared once (sim/scenario/host_results.cpp): the result
// of a run, the results schema and docs/results.md must all follow that declaration.
#include "sim/scenario/host_results.hpp"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "sim/params/json_util.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/simulation.hpp"

namespace napisim {
namespace {

Json quickstart_result() {
  Json doc = default_scenario();
  apply_overrides(doc, {"warmup_s=0.001", "duration_s=0.002"});
  const Scenario s = parse_scenario(doc);
  Simulation sim(s, Simulation::standalone_paths(s));
  sim.run_standalone();
  return sim.result(Json::object());
}

bool has_type(const Json& v, const std::string& type) {
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "object") return v.is_object();
  return false;
}

// Every declared figure is in the result with its declared type, for the server and the client
// host; each CPU's object holds exactly the declared figures, in their order.
void expect_follows(const Json& host, const Json& per_cpu, const Json& schema, const std::string& where) {
  for (const auto& [key, prop] : schema.at("host").at("properties").items()) {
    ASSERT_TRUE(host.contains(key)) << where << " lacks " << key;
    if (prop.contains("properties")) {
      for (const auto& [sub, p] : prop.at("properties").items())
        EXPECT_TRUE(has_type(host.at(key).at(sub), p.at("type"))) << where << " " << key << "." << sub;
    } else {
      EXPECT_TRUE(has_type(host.at(key), prop.at("type"))) << where << " " << key;
    }
  }
  ASSERT_FALSE(per_cpu.empty());
  std::vector<std::string> declared;
  for (const auto& [key, prop] : schema.at("per_cpu").at("properties").items())
    declared.push_back(key);
  for (const Json& pc : per_cpu) {
    std::vector<std::string> got;
    for (const auto& [key, v] : pc.items())
      got.push_back(key);
    EXPECT_EQ(got, declared) << where;
  }
}

TEST(HostResultsTest, EveryResultFollowsTheDeclaration) {
  const Json r = quickstart_result();
  const Json schema = host_results_schema();
  expect_follows(r.at("summary"), r.at("per_cpu"), schema, "server");
  ASSERT_EQ(r.at("clients").size(), 1u);
  for (const auto& [name, c] : r.at("clients").items())
    expect_follows(c, c.at("per_cpu"), schema, name);
  // The host-wide counts are the sums of the per-CPU ones they total.
  std::uint64_t irqs = 0, switches = 0;
  for (const Json& pc : r.at("per_cpu")) {
    irqs += pc.at("irqs").get<std::uint64_t>();
    switches += pc.at("context_switches").get<std::uint64_t>();
  }
  EXPECT_EQ(r.at("summary").at("irqs_all").get<std::uint64_t>(), irqs);
  EXPECT_EQ(r.at("summary").at("context_switches").get<std::uint64_t>(), switches);
  EXPECT_GT(r.at("summary").at("irqs").get<std::uint64_t>(), 0u);
}

TEST(HostResultsTest, EveryFigureHasAUnitOrIsACountAndADescription) {
  const Json schema = host_results_schema();
  for (const char* part : {"host", "per_cpu"}) {
    for (const auto& [key, prop] : schema.at(part).at("properties").items()) {
      const Json& leaf = prop.contains("properties") ? prop.at("properties") : Json{{key, prop}};
      for (const auto& [name, p] : leaf.items()) {
        EXPECT_FALSE(p.value("description", "").empty()) << part << " " << name;
        if (name != "cpu") {
          EXPECT_FALSE(p.value("x-unit", "").empty()) << part << " " << name;
        }
      }
    }
  }
}

TEST(HostResultsTest, DocsResultsMdIsTheGeneratedTable) {
  std::ifstream f(std::string(NAPISIM_SOURCE_DIR) + "/docs/results.md");
  ASSERT_TRUE(f) << "docs/results.md missing";
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(ss.str(), host_results_markdown())
      << "docs/results.md is out of date: regenerate it with `napisim describe results > docs/results.md`";
}

// Each host's `events` is the share of the run's events its kernel model handled. Measured from
// t = 0, the quickstart's two Linux hosts handle every event of the run between them (tcp_rr's
// own sink has none with a Linux client); with the idealised client, the workload handles the
// client's side and the server's kernel only part of the run's events.
TEST(HostResultsTest, EachHostsEventsAreItsShareOfTheRun) {
  for (const bool linux_client : {true, false}) {
    Json doc = default_scenario();
    apply_overrides(doc, {"warmup_s=0", "duration_s=0.002"});
    if (!linux_client) apply_overrides(doc, {"platform.clients[-].stack=idealised"});
    const Scenario s = parse_scenario(doc);
    Simulation sim(s, Simulation::standalone_paths(s));
    sim.run_standalone();
    const Json r = sim.result(Json::object());
    const auto total = r.at("events").get<std::uint64_t>();
    const auto server = r.at("summary").at("events").get<std::uint64_t>();
    EXPECT_GT(server, 0u);
    if (linux_client) {
      ASSERT_EQ(r.at("clients").size(), 1u);
      const auto client = r.at("clients").begin()->at("events").get<std::uint64_t>();
      EXPECT_GT(client, 0u);
      EXPECT_EQ(server + client, total);
    } else {
      EXPECT_FALSE(r.contains("clients"));
      EXPECT_LT(server, total);
    }
  }
}

}  // namespace
}  // namespace napisim
