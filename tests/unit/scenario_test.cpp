// The scenario loader (sim/scenario/scenario.hpp): defaults round-trip, the embedded quickstart,
// every class of bad input as a ConfigError that starts with the JSON pointer and says what was
// expected, --set overrides, SHA-256 provenance, and a tiny scenario run standalone (no SimGrid).
#include "sim/scenario/scenario.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/core/sha256.hpp"
#include "sim/params/json_util.hpp"
#include "sim/scenario/simulation.hpp"

namespace napisim {
namespace {

// The ConfigError message of parse_scenario(doc), or "" when it parses.
std::string parse_error(const Json& doc, const std::string& base_dir = ".") {
  try {
    (void)parse_scenario(doc, base_dir);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string set_error(Json doc, const std::vector<std::string>& sets) {
  try {
    apply_overrides(doc, sets);
    (void)parse_scenario(doc);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

#define EXPECT_STARTS_WITH(s, prefix) EXPECT_TRUE(starts_with((s), (prefix))) << "message: " << (s)
#define EXPECT_CONTAINS(s, part) EXPECT_NE((s).find(part), std::string::npos) << "message: " << (s)

// ---- client hosts ----

// A client that says nothing is a Linux host like the server: its topology, NIC, kernel, costs
// and models are the server's, and each can be overridden key by key.
TEST(ClientHostTest, ClientInheritsTheServerHostKeyByKey) {
  const Json doc = Json::parse(R"({
    "topology": {"cores_per_llc": 6, "threads_per_core": 2},
    "nics": [{"queues": 3, "irq_affinity": "0-2", "rx_usecs": 16}, {"name": "eth1", "queues": 2}],
    "kernel": {"hz": 250, "ksoftirqd_mode": "4.9-6.4"},
    "costs": {"wakeup_ns": 1234},
    "models": [{"name": "napi_threaded", "nics": [0]}, {"name": "napi_irq", "nics": [1]}],
    "platform": {"clients": [{"name": "a"},
                             {"name": "b", "nic": 1, "topology": {"threads_per_core": 1},
                              "host_nic": {"rx_usecs": 0}, "kernel": {"hz": 1000}}]}
  })");
  const Scenario s = parse_scenario(doc);
  const ClientSpec& a = s.platform.clients.at(0);
  EXPECT_EQ(a.stack, "linux");  // tcp_rr has a Linux client: "auto" resolves to it
  EXPECT_EQ(a.topology, s.topology);
  EXPECT_EQ(a.host_nic, s.nics[0]);
  EXPECT_EQ(a.kernel, s.kernel);
  EXPECT_EQ(a.costs, s.costs);
  EXPECT_EQ(a.costs.wakeup_ns, 1234);
  ASSERT_EQ(a.models.size(), 1u);  // only the models of the NIC it reaches, on its own NIC
  EXPECT_EQ(a.models[0].name, "napi_threaded");
  EXPECT_TRUE(a.models[0].nics.empty());
  const ClientSpec& b = s.platform.clients.at(1);
  EXPECT_EQ(b.topology.cores_per_llc, 6);     // inherited
  EXPECT_EQ(b.topology.threads_per_core, 1);  // its own
  EXPECT_EQ(b.host_nic.name, "eth1");
  EXPECT_EQ(b.host_nic.queues, 2);
  EXPECT_EQ(b.host_nic.rx_usecs, 0);
  EXPECT_EQ(b.kernel.hz, 1000);
  EXPECT_EQ(b.kernel.ksoftirqd_mode, "4.9-6.4");
  ASSERT_EQ(b.models.size(), 1u);
  EXPECT_EQ(b.models[0].name, "napi_irq");
  // The resolved form spells the client host out and parses back to the same scenario.
  const Json r = resolve_scenario(s);
  EXPECT_EQ(r["platform"]["clients"][1]["host_nic"]["queues"], 2);
  EXPECT_EQ(parse_scenario(r), s);
}

TEST(ClientHostTest, LikeNoneAndIdealisedClients) {
  Json doc = Json::parse(R"({"topology": {"cores_per_llc": 6}, "kernel": {"hz": 250},
                             "platform": {"clients": [{"like": "none"}]}})");
  Scenario s = parse_scenario(doc);
  EXPECT_EQ(s.platform.clients[0].topology, TopologyParams{});
  EXPECT_EQ(s.platform.clients[0].kernel.hz, 1000);
  // Workloads without a Linux client resolve "auto" to the idealised generator and refuse "linux".
  doc = Json::parse(R"({"workload": {"type": "stream"}})");
  EXPECT_EQ(parse_scenario(doc).platform.clients[0].stack, "idealised");
  doc["platform"]["clients"] = Json::array({{{"stack", "linux"}}});
  EXPECT_STARTS_WITH(parse_error(doc), "/platform/clients/0/stack: workload \"stream\" has no Linux client");
  // app and trace run their load generator on a Linux client host by default.
  doc = Json::parse(R"({"workload": {"type": "app"}})");
  EXPECT_EQ(parse_scenario(doc).platform.clients[0].stack, "linux");
  doc = Json::parse(R"({"platform": {"clients": [{"stack": "idealised"}]}})");
  EXPECT_EQ(parse_scenario(doc).platform.clients[0].stack, "idealised");
}

TEST(ClientHostTest, ClientHostErrorsNameTheClientsPointer) {
  // The server's IRQ CPUs do not exist on a smaller client.
  Json doc = Json::parse(R"({"topology": {"cores_per_llc": 8}, "nics": [{"irq_affinity": "6-7"}],
                             "platform": {"clients": [{"topology": {"cores_per_llc": 4}}]}})");
  EXPECT_STARTS_WITH(parse_error(doc), "/platform/clients/0/host_nic/irq_affinity");
  EXPECT_CONTAINS(parse_error(doc), "takes every value it does not set from the server");
  doc = Json::parse(R"({"platform": {"clients": [{"kernel": {"hz": 200}}]}})");
  EXPECT_STARTS_WITH(parse_error(doc), "/platform/clients/0/kernel/hz");
  doc = Json::parse(R"({"platform": {"clients": [{"models": [{"name": "napi_irq", "nics": [1]}]}]}})");
  EXPECT_STARTS_WITH(parse_error(doc), "/platform/clients/0/models/0/nics/0");
  doc = Json::parse(R"({"platform": {"clients": [{"models": [{"name": "nope"}]}]}})");
  EXPECT_STARTS_WITH(parse_error(doc), "/platform/clients/0/models/0/name");
  doc = Json::parse(R"({"platform": {"clients": [{"like": "client"}]}})");
  EXPECT_STARTS_WITH(parse_error(doc), "/platform/clients/0/like");
}

// ---- defaults and round trips ----

TEST(ScenarioTest, EmptyDocumentTakesEveryDefault) {
  const Scenario s = parse_scenario(Json::object());
  const Scenario d;
  EXPECT_EQ(s.name, d.name);
  EXPECT_EQ(s.seed, d.seed);
  EXPECT_EQ(s.duration_s, d.duration_s);
  EXPECT_EQ(s.topology, d.topology);
  EXPECT_EQ(s.nics, d.nics);
  EXPECT_EQ(s.kernel, d.kernel);
  EXPECT_EQ(s.costs, d.costs);
  ASSERT_EQ(s.models.size(), 1u);
  EXPECT_EQ(s.models[0].name, d.models[0].name);
  // Model and workload parameters are resolved: every default spelled out.
  EXPECT_TRUE(s.models[0].params.is_object());
  EXPECT_FALSE(s.workload.params.empty());
  EXPECT_TRUE(s.workload.params.contains("num_flows"));
}

TEST(ScenarioTest, DefaultsRoundTrip) {
  const Scenario s = parse_scenario(Json::object());
  const Json resolved = resolve_scenario(s);
  EXPECT_EQ(parse_scenario(resolved), s);
  EXPECT_EQ(resolve_scenario(parse_scenario(resolved)), resolved);
}

TEST(ScenarioTest, ResolvedFormSpellsOutEverySection) {
  const Json r = resolve_scenario(parse_scenario(Json::object()));
  for (const char* key : {"name", "description", "seed", "run", "warmup_s", "duration_s", "platform", "topology",
                          "nics", "kernel", "costs", "models", "workload"})
    EXPECT_TRUE(r.contains(key)) << key;
  EXPECT_TRUE(r["nics"][0].contains("queues"));
  EXPECT_TRUE(r["kernel"]["net"].contains("dev_weight"));
}

TEST(ScenarioTest, QuickstartParsesAndRoundTrips) {
  const Json doc = default_scenario();
  const Scenario s = parse_scenario(doc);
  EXPECT_EQ(s.name, "quickstart");
  EXPECT_EQ(s.nics.at(0).queues, 4);
  EXPECT_EQ(s.models.at(0).name, "napi_irq");
  const Json resolved = resolve_scenario(s);
  EXPECT_EQ(parse_scenario(resolved), s);
  EXPECT_EQ(resolve_scenario(parse_scenario(resolved)), resolved);
  // load_scenario_doc("quickstart") / ("") is the embedded default.
  EXPECT_EQ(load_scenario_doc(""), doc);
}

TEST(ScenarioTest, ResolvedHashIsStable) {
  const Json a = resolve_scenario(parse_scenario(default_scenario()));
  const Json b = resolve_scenario(parse_scenario(default_scenario()));
  EXPECT_EQ(sha256_hex(a.dump()), sha256_hex(b.dump()));
  Json other = default_scenario();
  other["seed"] = 2;
  EXPECT_NE(sha256_hex(resolve_scenario(parse_scenario(other)).dump()), sha256_hex(a.dump()));
}

// ---- bad input: one test per class ----

TEST(ScenarioErrorTest, UnknownKeyNamesThePointerAndSuggests) {
  Json doc = default_scenario();
  doc["nics"][0]["queus"] = 3;
  const std::string m = parse_error(doc);
  EXPECT_STARTS_WITH(m, "/nics/0/queus: unknown key");
  EXPECT_CONTAINS(m, "did you mean \"queues\"?");

  doc = default_scenario();
  doc["nics"][0]["rx_queus"] = 3;
  const std::string m2 = parse_error(doc);
  EXPECT_STARTS_WITH(m2, "/nics/0/rx_queus: unknown key; expected one of: ");
  EXPECT_CONTAINS(m2, "queues");

  doc = default_scenario();
  doc["kernel"]["net"]["dev_wieght"] = 64;
  EXPECT_STARTS_WITH(parse_error(doc), "/kernel/net/dev_wieght: unknown key");
  EXPECT_CONTAINS(parse_error(doc), "did you mean \"dev_weight\"?");

  doc = default_scenario();
  doc["duraton_s"] = 1;
  EXPECT_STARTS_WITH(parse_error(doc), "/duraton_s: unknown key");
  EXPECT_CONTAINS(parse_error(doc), "did you mean \"duration_s\"?");
}

TEST(ScenarioErrorTest, WrongType) {
  Json doc = default_scenario();
  doc["nics"][0]["queues"] = "8";
  EXPECT_STARTS_WITH(parse_error(doc), "/nics/0/queues: expected integer");
  EXPECT_CONTAINS(parse_error(doc), "got string \"8\"");

  doc = default_scenario();
  doc["nics"] = Json::object();
  EXPECT_STARTS_WITH(parse_error(doc), "/nics: expected array");

  doc = default_scenario();
  doc["nics"][0]["adaptive_rx"] = 1;
  EXPECT_STARTS_WITH(parse_error(doc), "/nics/0/adaptive_rx: expected boolean");

  doc = default_scenario();
  doc["name"] = 5;
  EXPECT_STARTS_WITH(parse_error(doc), "/name: expected string");

  EXPECT_STARTS_WITH(parse_error(Json::array()), "/: expected a scenario object");
}

TEST(ScenarioErrorTest, OutOfRange) {
  Json doc = default_scenario();
  doc["nics"][0]["queues"] = 0;
  EXPECT_EQ(parse_error(doc), "/nics/0/queues: expected integer in [1, 1024], got 0");

  doc = default_scenario();
  doc["nics"][0]["queues"] = 1025;
  EXPECT_EQ(parse_error(doc), "/nics/0/queues: expected integer in [1, 1024], got 1025");

  doc = default_scenario();
  doc["duration_s"] = -1.5;
  EXPECT_STARTS_WITH(parse_error(doc), "/duration_s: expected number in [");
  EXPECT_CONTAINS(parse_error(doc), "got -1.5");

  doc = default_scenario();
  doc["kernel"]["hz"] = 500;  // in the declared range, not one of the kernel's values
  EXPECT_STARTS_WITH(parse_error(doc), "/kernel/hz: expected one of 100, 250, 300, 1000, got 500");

  doc = default_scenario();
  doc["nics"][0]["numa_node"] = 1;  // the quickstart machine has one node
  EXPECT_STARTS_WITH(parse_error(doc), "/nics/0/numa_node: expected a node < 1");

  doc = default_scenario();
  doc["platform"] = Json{{"clients", Json::array({Json{{"nic", 3}}})}};
  EXPECT_STARTS_WITH(parse_error(doc), "/platform/clients/0/nic: expected a NIC index < 1, got 3");
}

TEST(ScenarioErrorTest, InvalidNumbers) {
  Json doc = default_scenario();
  doc["nics"][0]["queues"] = 1.5;  // not integral
  EXPECT_STARTS_WITH(parse_error(doc), "/nics/0/queues: expected integer");
  EXPECT_CONTAINS(parse_error(doc), "got number 1.5");

  doc = default_scenario();
  doc["nics"][0]["speed_gbps"] = std::nan("");  // cannot come from JSON text, but can from Python
  EXPECT_STARTS_WITH(parse_error(doc), "/nics/0/speed_gbps: expected finite number");

  doc = default_scenario();
  doc["nics"][0]["speed_gbps"] = INFINITY;
  EXPECT_STARTS_WITH(parse_error(doc), "/nics/0/speed_gbps: expected finite number");

  doc = default_scenario();
  doc["seed"] = 1e300;  // integral but far beyond int64
  EXPECT_STARTS_WITH(parse_error(doc), "/seed: expected integer");

  // NaN and Infinity are not JSON: the text is rejected by the strict parser.
  for (const char* text : {R"({"duration_s": NaN})", R"({"duration_s": Infinity})", R"({"duration_s": 01})"}) {
    try {
      (void)parse_json_text(text, "t.json");
      ADD_FAILURE() << "parsed: " << text;
    } catch (const ConfigError& e) {
      EXPECT_STARTS_WITH(std::string(e.what()), "/: t.json: invalid JSON");
    }
  }
  // A number too large for a double is a user error too (nlohmann reports it as out_of_range), at
  // its pointer, line and column.
  try {
    (void)parse_json_text(R"({"duration_s": 1e400})", "t.json");
    ADD_FAILURE() << "parsed 1e400";
  } catch (const ConfigError& e) {
    EXPECT_STARTS_WITH(std::string(e.what()), "/duration_s: t.json: invalid JSON at line 1, column 16");
    EXPECT_CONTAINS(std::string(e.what()), "1e400");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "1e400 gave a non-ConfigError exception: " << e.what();
  }
}

TEST(ScenarioErrorTest, TruncatedJsonText) {
  const std::string text = default_scenario().dump(2);
  for (std::size_t cut : {std::size_t{0}, std::size_t{1}, text.size() / 2, text.size() - 1}) {
    try {
      (void)parse_json_text(text.substr(0, cut), "quick.json");
      ADD_FAILURE() << "parsed a text cut at " << cut;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.path(), "/");
      const std::string m = e.what();
      EXPECT_STARTS_WITH(m, "/: quick.json: invalid JSON at line ");
      EXPECT_CONTAINS(m, "column");
    }
  }
}

TEST(ScenarioErrorTest, DuplicateKeyIsAnError) {
  try {
    (void)parse_json_text(R"({"nics": [{"queues": 2, "queues": 4}]})", "d.json");
    ADD_FAILURE() << "duplicate key accepted";
  } catch (const ConfigError& e) {
    EXPECT_STARTS_WITH(std::string(e.what()), "/nics/0/queues: duplicate key");
  }
}

TEST(ScenarioErrorTest, MissingScenarioFile) {
  try {
    (void)load_json_file("/nonexistent/napisim/scenario.json");
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_STARTS_WITH(std::string(e.what()), "/: cannot read scenario file '/nonexistent/napisim/scenario.json'");
  }
}

TEST(ScenarioErrorTest, MissingPlatformXml) {
  Json doc = default_scenario();
  doc["platform"]["xml"] = "no_such_platform.xml";
  const std::string m = parse_error(doc, "/nonexistent_dir");
  EXPECT_STARTS_WITH(m, "/platform/xml: cannot read platform file '");
  EXPECT_CONTAINS(m, "/nonexistent_dir/no_such_platform.xml");
  EXPECT_CONTAINS(m, "no such file");
}

TEST(ScenarioErrorTest, UnknownModel) {
  Json doc = default_scenario();
  doc["models"][0]["name"] = "napi_nosuch";
  const std::string m = parse_error(doc);
  EXPECT_STARTS_WITH(m, "/models/0/name: unknown model \"napi_nosuch\"; expected one of ");
  EXPECT_CONTAINS(m, "\"napi_irq\"");

  doc = default_scenario();
  doc["models"] = Json::array();
  EXPECT_STARTS_WITH(parse_error(doc), "/models: expected at least one");
}

TEST(ScenarioErrorTest, BadModelParam) {
  Json doc = default_scenario();
  doc["models"][0]["params"]["no_such_knob"] = 1;
  EXPECT_STARTS_WITH(parse_error(doc), "/models/0/params/no_such_knob: unknown key");
}

TEST(ScenarioErrorTest, BadWorkloadParam) {
  Json doc = default_scenario();
  doc["workload"]["params"]["num_flowz"] = 8;
  EXPECT_STARTS_WITH(parse_error(doc), "/workload/params/num_flowz: unknown key");
  EXPECT_CONTAINS(parse_error(doc), "did you mean \"num_flows\"?");

  doc = default_scenario();
  doc["workload"]["params"]["num_flows"] = 0;
  EXPECT_STARTS_WITH(parse_error(doc), "/workload/params/num_flows: expected integer in [1, ");
  EXPECT_CONTAINS(parse_error(doc), "got 0");

  doc = default_scenario();
  doc["workload"]["type"] = "tcp_stream_nosuch";
  EXPECT_STARTS_WITH(parse_error(doc), "/workload/type: expected one of \"tcp_rr\"");
}

TEST(ScenarioErrorTest, SetOverridesGoThroughTheSameValidation) {
  const Json doc = default_scenario();
  EXPECT_EQ(set_error(doc, {"nics.0.queues=0"}), "/nics/0/queues: expected integer in [1, 1024], got 0");
  EXPECT_EQ(set_error(doc, {"/nics/0/queues=0"}), "/nics/0/queues: expected integer in [1, 1024], got 0");
  EXPECT_STARTS_WITH(set_error(doc, {"nics.0.rx_queus=3"}), "/nics/0/rx_queus: unknown key");
  EXPECT_STARTS_WITH(set_error(doc, {"nics.0.queus=3"}), "/nics/0/queus: unknown key");
  EXPECT_STARTS_WITH(set_error(doc, {"nics.0.queues=abc"}), "/nics/0/queues: expected integer, got string \"abc\"");
  EXPECT_STARTS_WITH(set_error(doc, {"nics.0.speed_gbps=NaN"}), "/nics/0/speed_gbps: expected number");
  EXPECT_STARTS_WITH(set_error(doc, {"workload.params.num_flowz=2"}), "/workload/params/num_flowz: unknown key");
  EXPECT_STARTS_WITH(set_error(doc, {"models.0.name=nosuch"}), "/models/0/name: unknown model");
  // Array indices must exist (or be "-").
  EXPECT_STARTS_WITH(set_error(doc, {"nics.5.queues=2"}), "/nics/5: --set 'nics.5.queues=2'");
  EXPECT_STARTS_WITH(set_error(doc, {"noequals"}), "/: --set expects path=value");
  // Valid overrides apply.
  EXPECT_EQ(set_error(doc, {"nics.0.queues=2", "duration_s=0.01", "kernel.net.dev_weight=16"}), "");
  Json d = doc;
  apply_overrides(d, {"nics.0.queues=2", "nics.0.irq_affinity=0-1", "workload.params.num_flows=3"});
  const Scenario s = parse_scenario(d);
  EXPECT_EQ(s.nics[0].queues, 2);
  EXPECT_EQ(s.nics[0].irq_affinity, "0-1");
  EXPECT_EQ(s.workload.params["num_flows"], 3);
}

// ---- SHA-256 (FIPS 180-4 examples) ----

TEST(Sha256Test, FipsVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, PaddingBoundaries) {
  // 55, 56 and 64 bytes straddle the one-block/two-block padding boundary; results must differ and be
  // 64 hex digits.
  const std::string a55(55, 'x'), a56(56, 'x'), a64(64, 'x');
  for (const std::string* s : {&a55, &a56, &a64})
    EXPECT_EQ(sha256_hex(*s).size(), 64u);
  EXPECT_NE(sha256_hex(a55), sha256_hex(a56));
  EXPECT_NE(sha256_hex(a56), sha256_hex(a64));
}

// ---- a tiny scenario on the host model alone (no SimGrid) ----

Json run_tiny(std::int64_t seed) {
  Json doc = default_scenario();
  apply_overrides(doc, {"warmup_s=0.002", "duration_s=0.005", "workload.params.num_flows=8"});
  doc["seed"] = seed;
  const Scenario s = parse_scenario(doc);
  const std::vector<ClientPath> paths = Simulation::standalone_paths(s);
  Simulation sim(s, paths);
  sim.run_standalone();
  EXPECT_EQ(sim.host().now(), sim.run_end());
  return sim.result(Json::object());
}

TEST(ScenarioRunTest, StandaloneRunIsDeterministicAndConserves) {
  const Json a = run_tiny(1);
  const Json b = run_tiny(1);
  EXPECT_EQ(a.dump(), b.dump());
  EXPECT_GT(a["events"].get<std::uint64_t>(), 0u);
  const Json& c = a["conservation"];
  EXPECT_GT(c["sent"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(c["sent"].get<std::uint64_t>(), c["answered"].get<std::uint64_t>() + c["in_flight"].get<std::uint64_t>());
  for (const Json& pc : a["per_cpu"]) {
    double sum = 0;
    for (const auto& [k, v] : pc["by_class_pct"].items())
      sum += v.get<double>();
    EXPECT_NEAR(sum, 100.0, 1e-6) << "cpu " << pc["cpu"];
  }
  EXPECT_NE(run_tiny(2)["fingerprint"], a["fingerprint"]);
}

}  // namespace
}  // namespace napisim
