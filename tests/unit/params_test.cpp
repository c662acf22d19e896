// Declare-once parameter structs (sim/params/fields.hpp) and the JSON helpers (sim/params/json_util.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/params/distribution.hpp"
#include "sim/params/fields.hpp"
#include "sim/params/json_util.hpp"

namespace napisim {
namespace {

struct Coalesce {
  std::int64_t rx_usecs = 8;
  double scale = 1.5;
  template <class V>
  static void fields(V& v) {
    v("rx_usecs", &Coalesce::rx_usecs, "us", "Interrupt coalescing delay", Range{0, 1000});
    v("scale", &Coalesce::scale, "", "Scale factor", Range::at_least(0));
  }
  bool operator==(const Coalesce&) const = default;
};

struct Client {
  std::string name = "client";
  double latency_us = 10.0;
  template <class V>
  static void fields(V& v) {
    v("name", &Client::name, "", "Client name");
    v("latency_us", &Client::latency_us, "us", "Target latency", Range{0, 1e6});
  }
  bool operator==(const Client&) const = default;
};

struct NicParams {
  std::int64_t rx_queues = 8;
  double speed_gbps = 100.0;
  bool adaptive_rx = false;
  std::string mode = "softirq";
  std::string irq_affinity = "";
  int burst = 4;
  std::uint64_t seed = 1;
  std::optional<std::int64_t> limit;
  std::optional<std::string> label;
  Coalesce coalesce{.rx_usecs = 50, .scale = 1.5};  // the parent's initializer overrides Coalesce's default
  std::vector<Client> clients;
  std::vector<std::int64_t> cpus = {0, 1};
  std::vector<double> weights = {1.0, 2.5};
  std::vector<std::string> modes;
  Json extra;

  template <class V>
  static void fields(V& v) {
    v("rx_queues", &NicParams::rx_queues, "queues", "RX queues of the NIC", Range{1, 1024});
    v("speed_gbps", &NicParams::speed_gbps, "Gb/s", "Port line rate", Range{0.001, 1e4});
    v("adaptive_rx", &NicParams::adaptive_rx, "", "ethtool adaptive-rx (DIM)");
    v("mode", &NicParams::mode, "", "Receive path", Choices{"softirq", "threaded"});
    v("irq_affinity", &NicParams::irq_affinity, "cpulist", "CPUs that take the IRQs");
    v("burst", &NicParams::burst, "pkts", "Burst size");
    v("seed", &NicParams::seed, "", "RNG seed");
    v("limit", &NicParams::limit, "pkts", "Optional cap", Range::at_least(1));
    v("label", &NicParams::label, "", "Optional label", Choices{"a", "b"});
    v("coalesce", &NicParams::coalesce, "", "Interrupt coalescing");
    v("clients", &NicParams::clients, "", "Traffic clients");
    v("cpus", &NicParams::cpus, "", "CPU ids", Range{0, 255});
    v("weights", &NicParams::weights, "", "Queue weights", Range::at_least(0));
    v("modes", &NicParams::modes, "", "Per-queue modes", Choices{"softirq", "threaded"});
    v("extra", &NicParams::extra, "", "Passed through unvalidated");
  }
  bool operator==(const NicParams&) const = default;
};

// Reuses a base struct's declaration and adds one field.
struct DerivedParams : Coalesce {
  bool enabled = true;
  template <class V>
  static void fields(V& v) {
    Coalesce::fields(v);
    v("enabled", &DerivedParams::enabled, "", "Enable");
  }
};

// Enumerated integers (CONFIG_HZ's values), plain, optional and per element.
struct Tick {
  std::int64_t hz = 1000;
  std::optional<std::uint32_t> alt;
  std::vector<int> each = {100};
  template <class V>
  static void fields(V& v) {
    v("hz", &Tick::hz, "Hz", "Tick rate", IntChoices{100, 250, 300, 1000});
    v("alt", &Tick::alt, "Hz", "Another", IntChoices{100, 250});
    v("each", &Tick::each, "Hz", "Per CPU", IntChoices{100, 250});
  }
};

struct Empty {
  template <class V>
  static void fields(V&) {}
};

// Json fields another component reads: a distribution, and one that may be null.
struct Service {
  Json service_ns = Json{{"type", "exponential"}, {"mean", 10000}};
  Json block_ns = nullptr;
  template <class V>
  static void fields(V& v) {
    v("service_ns", &Service::service_ns, "ns", "CPU per request", kDistribution);
    v("block_ns", &Service::block_ns, "ns", "Off-CPU time (null: none)", kOptionalDistribution);
  }
  bool operator==(const Service&) const = default;
};

// The message of the ConfigError `f` throws, or "" if it does not throw one.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// The message of parsing `j` as P at `path`.
template <class P>
std::string error_parsing(const Json& j, const std::string& path = "") {
  return error_of([&] { parse_params<P>(j, path); });
}

std::string parse_error(const char* text) {
  return error_parsing<NicParams>(Json::parse(text), "/nics/0");
}

// ---- parsing ----

TEST(ParamsTest, DefaultsRoundTripThroughJson) {
  const NicParams defaults;
  const Json j = params_to_json(defaults);
  EXPECT_EQ(parse_params<NicParams>(j, ""), defaults);
  // And a non-default value of every kind survives the trip too.
  NicParams p;
  p.rx_queues = 16;
  p.speed_gbps = 25.5;
  p.adaptive_rx = true;
  p.mode = "threaded";
  p.seed = 18446744073709551615ULL;
  p.limit = 7;
  p.label = "b";
  p.coalesce.rx_usecs = 3;
  p.clients = {Client{"x", 1.0}, Client{"y", 2.0}};
  p.modes = {"threaded"};
  p.extra = Json{{"anything", {1, 2, 3}}};
  EXPECT_EQ(parse_params<NicParams>(params_to_json(p), ""), p);
}

TEST(ParamsTest, ToJsonListsEveryFieldInDeclarationOrder) {
  const Json j = params_to_json(NicParams{});
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it)
    keys.push_back(it.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"rx_queues", "speed_gbps", "adaptive_rx", "mode", "irq_affinity", "burst", "seed",
                                      "limit", "label", "coalesce", "clients", "cpus", "weights", "modes", "extra"}));
  EXPECT_TRUE(j["limit"].is_null());
  EXPECT_EQ(j["coalesce"], (Json{{"rx_usecs", 50}, {"scale", 1.5}}));
}

TEST(ParamsTest, MissingKeysKeepDefaults) {
  const NicParams p = parse_params<NicParams>(Json{{"rx_queues", 4}, {"coalesce", {{"scale", 2}}}}, "");
  EXPECT_EQ(p.rx_queues, 4);
  EXPECT_EQ(p.speed_gbps, 100.0);
  EXPECT_EQ(p.mode, "softirq");
  EXPECT_EQ(p.coalesce.rx_usecs, 50);  // parent's initializer, not Coalesce's
  EXPECT_EQ(p.coalesce.scale, 2.0);
  EXPECT_EQ(p.cpus, (std::vector<std::int64_t>{0, 1}));
}

TEST(ParamsTest, NullDocumentMeansDefaults) {
  EXPECT_EQ(parse_params<NicParams>(Json(nullptr), "/models/0/params"), NicParams{});
}

TEST(ParamsTest, ParseIntoLayersOverCurrentValues) {
  NicParams p;
  parse_into(p, Json{{"rx_queues", 2}}, "");
  parse_into(p, Json{{"mode", "threaded"}}, "");
  EXPECT_EQ(p.rx_queues, 2);
  EXPECT_EQ(p.mode, "threaded");
}

TEST(ParamsTest, ParseIntoLeavesTargetUnchangedOnError) {
  NicParams p;
  EXPECT_THROW(parse_into(p, Json{{"rx_queues", 2}, {"mode", "bogus"}}, ""), ConfigError);
  EXPECT_EQ(p, NicParams{});
}

TEST(ParamsTest, IntegralFloatIsAcceptedForIntegerField) {
  EXPECT_EQ(parse_params<NicParams>(Json::parse(R"({"rx_queues": 1e3})"), "").rx_queues, 1000);
}

TEST(ParamsTest, IntegerIsAcceptedForDoubleField) {
  EXPECT_EQ(parse_params<NicParams>(Json::parse(R"({"speed_gbps": 25})"), "").speed_gbps, 25.0);
}

TEST(ParamsTest, BaseStructFieldsAreReused) {
  const auto p = parse_params<DerivedParams>(Json{{"rx_usecs", 3}, {"enabled", false}}, "");
  EXPECT_EQ(p.rx_usecs, 3);
  EXPECT_FALSE(p.enabled);
}

// ---- error messages ----

TEST(ParamsTest, JsonKindChecksTheFieldWhereItIsParsed) {
  EXPECT_EQ(error_parsing<Service>(Json{{"service_ns", Json{{"type", "gamma"}}}}, "/workload/params"),
            "/workload/params/service_ns/type: expected one of \"constant\", \"uniform\", \"exponential\", "
            "\"normal\", \"lognormal\", \"pareto\", \"empirical\", got \"gamma\"");
  EXPECT_EQ(error_parsing<Service>(Json{{"service_ns", -1}}, "/p"),
            "/p/service_ns: expected finite number >= 0, got -1.0");
  EXPECT_NE(error_parsing<Service>(Json{{"service_ns", nullptr}}, "/p"), "");  // not nullable
  const Service s = parse_params<Service>(Json{{"service_ns", 500}, {"block_ns", nullptr}}, "/p");
  EXPECT_EQ(s.service_ns, Json(500));
  EXPECT_TRUE(s.block_ns.is_null());
  EXPECT_EQ(parse_params<Service>(Json{{"block_ns", Json{{"type", "constant"}, {"value", 3}}}}, "/p").block_ns,
            (Json{{"type", "constant"}, {"value", 3}}));
}

TEST(ParamsTest, JsonKindGivesTheSchemaAndTheDescribeType) {
  const Json props = params_schema<Service>().at("properties");
  EXPECT_EQ(props.at("service_ns").at("oneOf"), Distribution::schema().at("oneOf"));
  EXPECT_EQ(props.at("block_ns").at("anyOf").at(0), (Json{{"type", "null"}}));
  EXPECT_EQ(props.at("block_ns").at("anyOf").at(1), Distribution::schema());
  const std::vector<FieldInfo> rows = describe_params<Service>();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].type, "distribution");
  EXPECT_EQ(rows[1].type, "optional<distribution>");
}

TEST(ParamsTest, UnknownKeyNamesPointerAndSuggestion) {
  EXPECT_EQ(parse_error(R"({"rx_queus": 8})"),
            "/nics/0/rx_queus: unknown key; expected one of: rx_queues, speed_gbps, adaptive_rx, mode, irq_affinity, "
            "burst, seed, limit, label, coalesce, clients, cpus, weights, modes, extra (did you mean \"rx_queues\"?)");
}

TEST(ParamsTest, UnknownKeyWithSwappedLettersGetsSuggestion) {
  EXPECT_EQ(error_parsing<Coalesce>(Json{{"rx_uescs", 1}}),
            "/rx_uescs: unknown key; expected one of: rx_usecs, scale (did you mean \"rx_usecs\"?)");
}

TEST(ParamsTest, UnknownKeyFarFromEveryNameHasNoSuggestion) {
  EXPECT_EQ(error_parsing<Coalesce>(Json{{"bogus_field", 1}}),
            "/bogus_field: unknown key; expected one of: rx_usecs, scale");
}

TEST(ParamsTest, UnknownKeyIsEscapedInPointer) {
  EXPECT_EQ(error_parsing<Coalesce>(Json{{"a/b~c", 1}}, "/x"),
            "/x/a~1b~0c: unknown key; expected one of: rx_usecs, scale");
  EXPECT_EQ(error_parsing<Empty>(Json{{"k", 1}}), "/k: unknown key; this object takes no keys");
}

TEST(ParamsTest, WrongTypeNamesExpectationAndValue) {
  EXPECT_EQ(parse_error(R"({"rx_queues": "8"})"), "/nics/0/rx_queues: expected integer, got string \"8\"");
  EXPECT_EQ(parse_error(R"({"adaptive_rx": 1})"), "/nics/0/adaptive_rx: expected boolean, got number 1");
  EXPECT_EQ(parse_error(R"({"coalesce": []})"), "/nics/0/coalesce: expected object, got array");
  EXPECT_EQ(parse_error(R"({"speed_gbps": true})"), "/nics/0/speed_gbps: expected number, got boolean true");
  EXPECT_EQ(parse_error(R"({"mode": null})"), "/nics/0/mode: expected string, got null");
  EXPECT_EQ(parse_error(R"({"cpus": {}})"), "/nics/0/cpus: expected array, got object");
  EXPECT_EQ(error_parsing<NicParams>(Json::array(), "/nics/0"), "/nics/0: expected object, got array");
}

TEST(ParamsTest, NonIntegralNumberIsRejectedForIntegerField) {
  EXPECT_EQ(parse_error(R"({"rx_queues": 8.5})"), "/nics/0/rx_queues: expected integer, got number 8.5");
}

TEST(ParamsTest, IntegerBeyondTypeLimitsIsRejected) {
  EXPECT_EQ(parse_error(R"({"burst": 3000000000})"),
            "/nics/0/burst: expected integer in [-2147483648, 2147483647], got 3000000000");
  EXPECT_EQ(parse_error(R"({"seed": -1})"), "/nics/0/seed: expected integer >= 0, got -1");
  EXPECT_EQ(parse_error(R"({"seed": 1e20})"), "/nics/0/seed: expected integer in [0, 18446744073709551615], got 1e+20");
  EXPECT_EQ(parse_error(R"({"rx_queues": 99999999999999999999})"),
            "/nics/0/rx_queues: expected integer in [1, 1024], got 1e+20");
  EXPECT_EQ(error_parsing<Client>(Json{{"latency_us", 1}}), "");
  EXPECT_EQ(error_parsing<Coalesce>(Json::parse(R"({"rx_usecs": -1e19})")),
            "/rx_usecs: expected integer in [0, 1000], got -1e+19");
}

TEST(ParamsTest, OutOfRangeNamesBoundsAndValue) {
  EXPECT_EQ(parse_error(R"({"rx_queues": 0})"), "/nics/0/rx_queues: expected integer in [1, 1024], got 0");
  EXPECT_EQ(parse_error(R"({"speed_gbps": 0})"), "/nics/0/speed_gbps: expected number in [0.001, 10000], got 0");
  EXPECT_EQ(parse_error(R"({"coalesce": {"scale": -0.5}})"), "/nics/0/coalesce/scale: expected number >= 0, got -0.5");
}

TEST(ParamsTest, NonFiniteDoubleIsRejected) {
  Json j = Json::object();
  j["speed_gbps"] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_parsing<NicParams>(j), "/speed_gbps: expected finite number, got number inf");
}

TEST(ParamsTest, ChoiceOutsideListNamesAlternatives) {
  EXPECT_EQ(parse_error(R"({"mode": "thread"})"),
            "/nics/0/mode: expected one of \"softirq\", \"threaded\", got \"thread\"");
}

TEST(ParamsTest, IntChoiceOutsideListNamesAlternatives) {
  EXPECT_EQ(parse_params<Tick>(Json{{"hz", 250}, {"alt", nullptr}, {"each", {250, 100}}}, "/kernel").hz, 250);
  EXPECT_EQ(error_parsing<Tick>(Json{{"hz", 500}}, "/kernel"),
            "/kernel/hz: expected one of 100, 250, 300, 1000, got 500");
  EXPECT_EQ(error_parsing<Tick>(Json{{"alt", 300}}, "/kernel"), "/kernel/alt: expected one of 100, 250, got 300");
  EXPECT_EQ(error_parsing<Tick>(Json{{"each", {100, 99}}}, "/kernel"),
            "/kernel/each/1: expected one of 100, 250, got 99");
  EXPECT_EQ(error_parsing<Tick>(Json{{"hz", "fast"}}, "/kernel").rfind("/kernel/hz: expected integer", 0), 0u);
}

TEST(ParamsTest, IntChoicesAreTheSchemasEnumAndDescribesConstraint) {
  const Json props = params_schema<Tick>()["properties"];
  EXPECT_EQ(
      props["hz"],
      (Json{
          {"type", "integer"}, {"description", "Tick rate [Hz]"}, {"default", 1000}, {"enum", {100, 250, 300, 1000}}}));
  EXPECT_EQ(props["alt"]["enum"], (Json{100, 250, nullptr}));
  EXPECT_EQ(props["each"]["items"]["enum"], (Json{100, 250}));
  const std::vector<FieldInfo> rows = describe_params<Tick>();
  EXPECT_EQ(rows[0].constraint, "one of 100, 250, 300, 1000");
  EXPECT_EQ(rows[2].constraint, "at most 4096 items");
}

TEST(ParamsTest, ArrayElementErrorsCarryIndex) {
  EXPECT_EQ(parse_error(R"({"clients": [{}, {}, {"latency_us": -1}]})"),
            "/nics/0/clients/2/latency_us: expected number in [0, 1000000], got -1");
  EXPECT_EQ(parse_error(R"({"clients": [{}, {"nmae": "x"}]})"),
            "/nics/0/clients/1/nmae: unknown key; expected one of: name, latency_us (did you mean \"name\"?)");
  EXPECT_EQ(parse_error(R"({"cpus": [0, 256]})"), "/nics/0/cpus/1: expected integer in [0, 255], got 256");
  EXPECT_EQ(parse_error(R"({"modes": ["softirq", "poll"]})"),
            "/nics/0/modes/1: expected one of \"softirq\", \"threaded\", got \"poll\"");
  EXPECT_EQ(parse_error(R"({"weights": [1, "2"]})"), "/nics/0/weights/1: expected number, got string \"2\"");
}

TEST(ParamsTest, ArrayOfStructsStartsEachElementFromDefaults) {
  const auto p = parse_params<NicParams>(Json::parse(R"({"clients": [{"name": "a"}, {"latency_us": 3}]})"), "");
  ASSERT_EQ(p.clients.size(), 2u);
  EXPECT_EQ(p.clients[0], (Client{"a", 10.0}));
  EXPECT_EQ(p.clients[1], (Client{"client", 3.0}));
}

TEST(ParamsTest, OptionalAcceptsNullAndValidatesValue) {
  auto p = parse_params<NicParams>(Json::parse(R"({"limit": 5, "label": "a"})"), "");
  EXPECT_EQ(p.limit, 5);
  EXPECT_EQ(p.label, "a");
  parse_into(p, Json::parse(R"({"limit": null})"), "");
  EXPECT_FALSE(p.limit.has_value());
  EXPECT_EQ(p.label, "a");
  EXPECT_EQ(parse_error(R"({"limit": "5"})"), "/nics/0/limit: expected integer or null, got string \"5\"");
  EXPECT_EQ(parse_error(R"({"limit": 0})"), "/nics/0/limit: expected integer >= 1, got 0");
  EXPECT_EQ(parse_error(R"({"label": "c"})"), "/nics/0/label: expected one of \"a\", \"b\", got \"c\"");
}

TEST(ParamsTest, JsonFieldPassesThroughUnchanged) {
  const Json extra = Json::parse(R"({"z": [1, {"y": null}], "a": "s"})");
  const auto p = parse_params<NicParams>(Json{{"extra", extra}}, "");
  EXPECT_EQ(p.extra, extra);
  EXPECT_EQ(params_to_json(p)["extra"].dump(), extra.dump());  // key order kept
}

// ---- schema ----

TEST(ParamsTest, SchemaDescribesEveryFieldStrictly) {
  const Json s = params_schema<NicParams>();
  EXPECT_EQ(s["type"], "object");
  EXPECT_EQ(s["additionalProperties"], false);
  const Json& props = s["properties"];
  EXPECT_EQ(props.size(), 15u);
  EXPECT_EQ(props["rx_queues"], (Json{{"type", "integer"},
                                      {"description", "RX queues of the NIC [queues]"},
                                      {"default", 8},
                                      {"minimum", 1},
                                      {"maximum", 1024}}));
  EXPECT_EQ(props["speed_gbps"]["minimum"], 0.001);
  EXPECT_EQ(props["speed_gbps"]["maximum"], 1e4);
  EXPECT_EQ(props["adaptive_rx"]["type"], "boolean");
  EXPECT_EQ(props["adaptive_rx"]["description"], "ethtool adaptive-rx (DIM)");
  EXPECT_EQ(props["mode"]["enum"], (Json{"softirq", "threaded"}));
  EXPECT_EQ(props["mode"]["default"], "softirq");
  EXPECT_EQ(props["burst"]["minimum"], -2147483648LL);
  EXPECT_EQ(props["seed"]["minimum"], 0);
  EXPECT_FALSE(props["seed"].contains("maximum"));
  EXPECT_EQ(props["limit"]["type"], (Json{"integer", "null"}));
  EXPECT_EQ(props["label"]["enum"], (Json{"a", "b", nullptr}));
  EXPECT_EQ(props["coalesce"]["type"], "object");
  EXPECT_EQ(props["coalesce"]["additionalProperties"], false);
  EXPECT_EQ(props["coalesce"]["default"], (Json{{"rx_usecs", 50}, {"scale", 1.5}}));
  EXPECT_EQ(props["coalesce"]["properties"]["rx_usecs"]["default"], 50);
  EXPECT_EQ(props["clients"]["type"], "array");
  EXPECT_EQ(props["clients"]["items"]["properties"]["latency_us"]["maximum"], 1e6);
  EXPECT_EQ(props["clients"]["items"]["additionalProperties"], false);
  EXPECT_EQ(props["cpus"]["items"], (Json{{"type", "integer"}, {"minimum", 0}, {"maximum", 255}}));
  EXPECT_EQ(props["cpus"]["default"], (Json{0, 1}));
  EXPECT_EQ(props["modes"]["items"]["enum"], (Json{"softirq", "threaded"}));
  EXPECT_FALSE(props["extra"].contains("type"));
  for (auto it = props.begin(); it != props.end(); ++it) {
    EXPECT_TRUE(it.value().contains("default")) << it.key();
    EXPECT_TRUE(it.value().contains("description")) << it.key();
  }
}

// ---- describe ----

TEST(ParamsTest, DescribeListsFieldsWithNestedRowsFlattened) {
  const std::vector<FieldInfo> rows = describe_params<NicParams>();
  std::vector<std::string> names;
  names.reserve(rows.size());
  for (const auto& r : rows)
    names.push_back(r.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"rx_queues", "speed_gbps", "adaptive_rx", "mode", "irq_affinity", "burst", "seed",
                                      "limit", "label", "coalesce", "coalesce.rx_usecs", "coalesce.scale", "clients",
                                      "clients[].name", "clients[].latency_us", "cpus", "weights", "modes", "extra"}));
  EXPECT_EQ(rows[0].type, "int64");
  EXPECT_EQ(rows[0].unit, "queues");
  EXPECT_EQ(rows[0].doc, "RX queues of the NIC");
  EXPECT_EQ(rows[0].default_value, 8);
  EXPECT_EQ(rows[0].constraint, "[1, 1024]");
  EXPECT_EQ(rows[3].constraint, "one of softirq, threaded");
  EXPECT_EQ(rows[5].type, "int32");
  EXPECT_EQ(rows[6].type, "uint64");
  EXPECT_EQ(rows[7].type, "optional<int64>");
  EXPECT_EQ(rows[7].constraint, ">= 1");
  EXPECT_EQ(rows[9].type, "object");
  EXPECT_EQ(rows[10].default_value, 50);
  EXPECT_EQ(rows[12].type, "array<object>");
  EXPECT_EQ(rows[15].type, "array<int64>");
  EXPECT_EQ(rows[18].type, "json");
}

TEST(ParamsTest, FormatDescriptionAlignsColumns) {
  const std::string text = format_description(describe_params<Coalesce>());
  EXPECT_EQ(text,
            "NAME      TYPE    DEFAULT  UNIT  ALLOWED    DESCRIPTION\n"
            "rx_usecs  int64   8        us    [0, 1000]  Interrupt coalescing delay\n"
            "scale     double  1.5            >= 0       Scale factor\n");
  const std::string nic = format_description(describe_params<NicParams>());
  EXPECT_NE(nic.find("\nmode "), std::string::npos);
  EXPECT_NE(nic.find("\"softirq\""), std::string::npos);
  EXPECT_NE(nic.find("{...}"), std::string::npos);
}

// ---- json_util ----

TEST(JsonUtilTest, PointerAppendEscapes) {
  EXPECT_EQ(json_pointer_append("", "a"), "/a");
  EXPECT_EQ(json_pointer_append("/", "a"), "/a");
  EXPECT_EQ(json_pointer_append("/x", "a/b~c"), "/x/a~1b~0c");
  EXPECT_EQ(json_pointer_append("/x", std::size_t{3}), "/x/3");
}

TEST(JsonUtilTest, DescribeValueNamesTypeAndValue) {
  EXPECT_EQ(describe_json_value(Json("8")), "string \"8\"");
  EXPECT_EQ(describe_json_value(Json(0)), "number 0");
  EXPECT_EQ(describe_json_value(Json(2.5)), "number 2.5");
  EXPECT_EQ(describe_json_value(Json(100.0)), "number 100");
  EXPECT_EQ(describe_json_value(Json(true)), "boolean true");
  EXPECT_EQ(describe_json_value(Json(nullptr)), "null");
  EXPECT_EQ(describe_json_value(Json::array()), "array");
  EXPECT_EQ(describe_json_value(Json::object()), "object");
  EXPECT_EQ(describe_json_value(Json(std::string(50, 'x'))), "string \"" + std::string(40, 'x') + "\"...");
}

TEST(JsonUtilTest, FormatNumberPrefersPlainIntegers) {
  EXPECT_EQ(format_number(10000.0), "10000");
  EXPECT_EQ(format_number(1e6), "1000000");
  EXPECT_EQ(format_number(0.001), "0.001");
  EXPECT_EQ(format_number(-0.5), "-0.5");
  EXPECT_EQ(format_number(1e20), "1e+20");
}

TEST(JsonUtilTest, ParseTextAcceptsValidJson) {
  EXPECT_EQ(parse_json_text(R"({"b": 1, "a": [true]})", "s.json").dump(), R"({"b":1,"a":[true]})");
}

TEST(JsonUtilTest, TruncatedJsonNamesSourceLineAndColumn) {
  EXPECT_EQ(error_of([] { parse_json_text("{\n  \"a\": 1,\n", "scenario.json"); }),
            "/: scenario.json: invalid JSON at line 3, column 1: syntax error while parsing object key - unexpected "
            "end of input; expected string literal");
}

TEST(JsonUtilTest, DuplicateKeyIsReportedWithPointer) {
  EXPECT_EQ(error_of([] { parse_json_text(R"({"a": {"b": 1, "c": 2, "b": 3}})", "s.json"); }),
            "/a/b: duplicate key in s.json");
  EXPECT_EQ(error_of([] { parse_json_text(R"({"n": [{"x": 1}, 5, {"y": 1, "y": 2}]})", "s.json"); }),
            "/n/2/y: duplicate key in s.json");
  EXPECT_EQ(error_of([] { parse_json_text(R"([[1], {"k": 1}, {"k": 2, "k~/": 0, "k~/": 1}])", "s.json"); }),
            "/2/k~0~1: duplicate key in s.json");
  // The same key in sibling objects is fine.
  EXPECT_NO_THROW(parse_json_text(R"([{"k": 1}, {"k": 2}])", "s.json"));
}

TEST(JsonUtilTest, MissingFileIsConfigError) {
  EXPECT_EQ(error_of([] { load_json_file("/nonexistent/napisim.json"); }),
            "/: cannot read scenario file '/nonexistent/napisim.json': No such file or directory");
  EXPECT_EQ(error_of([] { load_json_file("/"); }), "/: cannot read scenario file '/': Is a directory");
}

TEST(JsonUtilTest, SetAcceptsPointerAndDottedPaths) {
  Json doc = Json::parse(R"({"nics": [{"rx_queues": 8}]})");
  apply_set(doc, "/nics/0/rx_queues=16");
  EXPECT_EQ(doc["nics"][0]["rx_queues"], 16);
  apply_set(doc, "nics.0.rx_queues=4");
  EXPECT_EQ(doc["nics"][0]["rx_queues"], 4);
  apply_set(doc, "/a~1b/c~0d=1");
  EXPECT_EQ(doc["a/b"]["c~d"], 1);
  // Bracketed indices, as jq and most config tools write them.
  apply_set(doc, "nics[0].rx_queues=2");
  EXPECT_EQ(doc["nics"][0]["rx_queues"], 2);
  apply_set(doc, "m.grid=[[1,2],[3,4]]");
  apply_set(doc, "m.grid[1][0]=7");
  apply_set(doc, "m.grid[0][-]=9");
  EXPECT_EQ(doc["m"]["grid"], Json::parse("[[1, 2, 9], [7, 4]]"));
}

TEST(JsonUtilTest, SetRejectsMalformedBracketIndices) {
  Json doc = Json::parse(R"({"nics": [{"rx_queues": 8}]})");
  for (const char* bad : {"nics[0.rx_queues=1", "nics[].rx_queues=1", "nics[0]x.rx_queues=1", "nics]0[=1"}) {
    const std::string what = std::string(bad).substr(0, std::string(bad).find('='));
    const std::string component = what.substr(0, what.find('.'));
    EXPECT_EQ(error_of([&] { apply_set(doc, bad); }),
              "/: --set '" + std::string(bad) + "': malformed index in '" + component + "' (expected key[N] or key[-])")
        << bad;
  }
  EXPECT_EQ(error_of([&] { apply_set(doc, "[0].x=1"); }),
            "/: --set '[0].x=1': empty path component (use a JSON pointer such as /a/b for unusual keys)");
  EXPECT_EQ(error_of([&] { apply_set(doc, "nics[5].rx_queues=1"); }),
            "/nics/5: --set 'nics[5].rx_queues=1': array index out of range (the array has 1 elements; use - to "
            "append)");
  EXPECT_EQ(doc, Json::parse(R"({"nics": [{"rx_queues": 8}]})"));  // nothing was changed
}

TEST(JsonUtilTest, SetParsesJsonValuesElseTakesString) {
  Json doc = Json::object();
  apply_set(doc, "i=8");
  apply_set(doc, "b=true");
  apply_set(doc, "q=\"x\"");
  apply_set(doc, "arr=[1,2]");
  apply_set(doc, "obj={\"a\":1}");
  apply_set(doc, "s=threaded");
  apply_set(doc, "cpus=0-3");
  apply_set(doc, "eq=a=b");
  apply_set(doc, "empty=");
  EXPECT_EQ(doc, Json::parse(R"({"i": 8, "b": true, "q": "x", "arr": [1, 2], "obj": {"a": 1}, "s": "threaded",
                                 "cpus": "0-3", "eq": "a=b", "empty": ""})"));
}

TEST(JsonUtilTest, SetCreatesMissingObjectsAndAppends) {
  Json doc;  // null
  apply_set(doc, "nics.0.coalesce.rx_usecs=3");
  EXPECT_EQ(doc, Json::parse(R"({"nics": {"0": {"coalesce": {"rx_usecs": 3}}}})"));
  Json d2 = Json::parse(R"({"clients": [{"name": "a"}]})");
  apply_set(d2, "clients.-={\"name\":\"b\"}");
  apply_set(d2, "/clients/-/name=c");
  EXPECT_EQ(d2, Json::parse(R"({"clients": [{"name": "a"}, {"name": "b"}, {"name": "c"}]})"));
}

TEST(JsonUtilTest, SetErrorsNameTheProblem) {
  Json doc = Json::parse(R"({"nics": [{"rx_queues": 8}], "n": 5})");
  EXPECT_EQ(error_of([&] { apply_set(doc, "nics.0.rx_queues"); }),
            "/: --set expects path=value, got 'nics.0.rx_queues'");
  EXPECT_EQ(error_of([&] { apply_set(doc, "nics.3.rx_queues=1"); }),
            "/nics/3: --set 'nics.3.rx_queues=1': array index out of range (the array has 1 elements; use - to "
            "append)");
  EXPECT_EQ(error_of([&] { apply_set(doc, "nics.x=1"); }),
            "/nics: --set 'nics.x=1': 'x' is not an array index (use 0, 1, ... or - to append)");
  EXPECT_EQ(error_of([&] { apply_set(doc, "n.k=1"); }), "/n: --set 'n.k=1': cannot set 'k' inside number 5");
  EXPECT_EQ(error_of([&] { apply_set(doc, "=1"); }), "/: --set '=1': empty path");
  EXPECT_EQ(error_of([&] { apply_set(doc, "a..b=1"); }),
            "/: --set 'a..b=1': empty path component (use a JSON pointer such as /a/b for unusual keys)");
  EXPECT_EQ(error_of([&] { apply_set(doc, "/a~2=1"); }),
            "/: --set '/a~2=1': invalid escape in JSON pointer (use ~0 for '~' and ~1 for '/')");
}

TEST(JsonUtilTest, SetThenStrictParseRejectsTypo) {
  Json doc = Json::parse(R"({"coalesce": {}})");
  apply_set(doc, "coalesce.rx_usec=3");
  EXPECT_EQ(error_parsing<NicParams>(doc),
            "/coalesce/rx_usec: unknown key; expected one of: rx_usecs, scale (did you mean \"rx_usecs\"?)");
}

}  // namespace
}  // namespace napisim
