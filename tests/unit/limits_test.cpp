// Input hardening (issue 34): every input has a size or count limit checked before work that grows
// with it, long arrays are checked in linear time, files are read with a bounded read, bad input is
// a ConfigError naming the pointer, and files a scenario names enter its fingerprint by content.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/params/json_util.hpp"
#include "sim/scenario/scenario.hpp"

namespace napisim {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The ConfigError message of `f()`, or "" when it succeeds.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// The time bound of the "quickly" checks: a quadratic or unbounded check misses it by far (the old
// parser took ~53 s for 300K changes in a Release build), with room for a slow machine. Debug and
// sanitizer builds (CI's ASan run) are about ten times slower, and get ten times the bound.
#if defined(__SANITIZE_ADDRESS__) || !defined(NDEBUG)
constexpr double kQuickSeconds = 50.0;
#else
constexpr double kQuickSeconds = 5.0;
#endif

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A JSON array of `n` copies of `element`, as text (the parser's input, as from a file).
std::string array_text(const std::string& element, std::size_t n) {
  std::string out = "[";
  for (std::size_t i = 0; i < n; ++i) {
    if (i) out += ',';
    out += element;
  }
  return out + "]";
}

// A JSON array of `n` clients named c0, c1, ...
std::string clients_text(std::size_t n) {
  std::string out = "[";
  for (std::size_t i = 0; i < n; ++i) {
    if (i) out += ',';
    out += R"({"name": "c)";
    out += std::to_string(i);
    out += "\"}";
  }
  return out + "]";
}

#define EXPECT_CONTAINS(s, part) EXPECT_NE((s).find(part), std::string::npos) << "message: " << (s)

class LimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("napisim-limits-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const fs::path& rel, const std::string& text) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel, std::ios::binary) << text;
    return dir_ / rel;
  }
  fs::path dir_;
};

// ---- long arrays: linear, and bounded before their elements are checked ----

// 300,000 changes: the old parser (nlohmann's callback parser) was quadratic in a long array of
// objects, 0.9 s for 30,000 and so about 90 s for these; now parse and rejection take milliseconds.
TEST_F(LimitsTest, LongChangesArrayIsRejectedQuickly) {
  const std::string text =
      R"({"changes": )" + array_text(R"({"at_s": 0.01, "model": {"name": "napi_irq"}})", 300000) + "}";
  const auto t0 = Clock::now();
  const std::string m = error_of([&] { (void)parse_scenario(parse_json_text(text, "changes.json")); });
  EXPECT_LT(seconds_since(t0), kQuickSeconds);
  EXPECT_EQ(m, "/changes: expected an array of at most " + std::to_string(kMaxChanges) + " elements, got 300000");
}

// 300,000 clients: the duplicate-name check scanned every earlier client (3.4 s for 30,000, so
// about 340 s for these).
TEST_F(LimitsTest, LongClientsArrayIsRejectedQuickly) {
  const std::string text = R"({"platform": {"clients": )" + clients_text(300000) + "}}";
  const auto t0 = Clock::now();
  const std::string m = error_of([&] { (void)parse_scenario(parse_json_text(text, "clients.json")); });
  EXPECT_LT(seconds_since(t0), kQuickSeconds);
  EXPECT_EQ(m,
            "/platform/clients: expected an array of at most " + std::to_string(kMaxClients) + " elements, got 300000");
}

// At the limits the scenario is accepted, and quickly.
TEST_F(LimitsTest, ArraysAtTheirLimitsValidateQuickly) {
  const std::string text = R"({"changes": )" +
                           array_text(R"({"at_s": 0.01, "model": {"name": "napi_threaded"}})", kMaxChanges) +
                           R"(, "platform": {"clients": )" + clients_text(kMaxClients) + "}}";
  const auto t0 = Clock::now();
  const Scenario s = parse_scenario(parse_json_text(text, "limits.json"));
  EXPECT_LT(seconds_since(t0), kQuickSeconds);
  EXPECT_EQ(s.changes.size(), kMaxChanges);
  EXPECT_EQ(s.platform.clients.size(), kMaxClients);
  // A duplicate name among them is still found, and names the first one.
  Json doc = parse_json_text(text, "limits.json");
  doc["platform"]["clients"][kMaxClients - 1]["name"] = "c7";
  EXPECT_EQ(error_of([&] { (void)parse_scenario(doc); }), "/platform/clients/" + std::to_string(kMaxClients - 1) +
                                                              "/name: duplicate client name \"c7\" (also "
                                                              "/platform/clients/7)");
}

TEST_F(LimitsTest, EveryArrayIsBounded) {
  Json doc = Json::object();
  doc["nics"] = Json::array();
  for (std::size_t i = 0; i <= kMaxNics; ++i)
    doc["nics"].push_back({{"name", "eth" + std::to_string(i)}});
  EXPECT_EQ(error_of([&] { (void)parse_scenario(doc); }), "/nics: expected an array of at most " +
                                                              std::to_string(kMaxNics) + " elements, got " +
                                                              std::to_string(kMaxNics + 1));
  doc = Json{{"models", Json::array()}};
  for (std::size_t i = 0; i <= kMaxModels; ++i)
    doc["models"].push_back({{"name", "napi_irq"}});
  EXPECT_CONTAINS(error_of([&] { (void)parse_scenario(doc); }), "/models: expected an array of at most");
  // An array without a limit of its own takes kMaxArrayItems (here the NUMA distance table).
  doc = Json{{"topology", {{"numa_distance", Json(std::vector<int>(kMaxArrayItems + 1, 10))}}}};
  EXPECT_CONTAINS(error_of([&] { (void)parse_scenario(doc); }),
                  "/topology/numa_distance: expected an array of at most " + std::to_string(kMaxArrayItems));
}

TEST_F(LimitsTest, SchemaStatesTheLimits) {
  const Json s = scenario_schema();
  const Json& p = s["properties"];
  EXPECT_EQ(p["changes"]["maxItems"], kMaxChanges);
  EXPECT_EQ(p["nics"]["maxItems"], kMaxNics);
  EXPECT_EQ(p["models"]["maxItems"], kMaxModels);
  EXPECT_EQ(p["platform"]["properties"]["clients"]["maxItems"], kMaxClients);
  EXPECT_EQ(p["platform"]["properties"]["clients"]["items"]["properties"]["models"]["maxItems"], kMaxModels);
  EXPECT_EQ(p["topology"]["properties"]["numa_distance"]["maxItems"], kMaxArrayItems);
  EXPECT_EQ(p["include"]["maxItems"], 64);
  EXPECT_EQ(p["seed"]["maximum"], kMaxSeed);
  EXPECT_CONTAINS(s["description"].get<std::string>(), "8 MiB");
  EXPECT_CONTAINS(s["$defs"]["workload_params"]["trace"]["properties"]["file"]["description"].get<std::string>(),
                  std::to_string(kMaxTraceRequests) + " requests");
}

// ---- bounded reads ----

TEST_F(LimitsTest, EndlessScenarioFileFailsAtTheLimit) {
  const auto t0 = Clock::now();
  const std::string m = error_of([] { (void)load_json_file("/dev/zero"); });
  EXPECT_LT(seconds_since(t0), kQuickSeconds);
  EXPECT_EQ(m, "/: scenario file '/dev/zero' is larger than the limit of 8 MiB (8388608 bytes)");
  const std::string inc = error_of([&] { (void)parse_scenario(Json{{"include", {"/dev/zero"}}}, dir_.string()); });
  EXPECT_EQ(inc.rfind("/include/0: in '/dev/zero': ", 0), 0u) << inc;
  EXPECT_CONTAINS(inc, "larger than the limit of 8 MiB");
}

TEST_F(LimitsTest, ScenarioFileAtTheLimitIsRead) {
  const fs::path at = write("at.json", "{}" + std::string(kMaxJsonFileBytes - 2, ' '));
  EXPECT_EQ(load_json_file(at.string()), Json::object());
  const fs::path over = write("over.json", "{}" + std::string(kMaxJsonFileBytes - 1, ' '));
  EXPECT_CONTAINS(error_of([&] { (void)load_json_file(over.string()); }), "over.json' is larger than the limit");
  EXPECT_CONTAINS(error_of([&] { (void)load_json_file(dir_.string()); }), "Is a directory");
}

// ---- bad input that was accepted or badly reported ----

TEST_F(LimitsTest, DocumentMustBeAnObjectWithOrWithoutSet) {
  for (const Json& doc : {Json(nullptr), Json::array(), Json(3)}) {
    Json d = doc;
    EXPECT_EQ(error_of([&] { apply_overrides(d, {"seed=3"}); }).rfind("/: expected a scenario object, got ", 0), 0u);
    EXPECT_EQ(error_of([&] { (void)parse_scenario(doc); }).rfind("/: expected a scenario object, got ", 0), 0u);
  }
  const fs::path null_file = write("null.json", "null\n");
  Json d = load_json_file(null_file.string());
  EXPECT_EQ(error_of([&] { apply_overrides(d, {"seed=3"}); }), "/: expected a scenario object, got null");
}

TEST_F(LimitsTest, NumberOverflowNamesLineColumnAndPointer) {
  EXPECT_EQ(error_of([] { (void)parse_json_text("{\n  \"duration_s\": 1e999\n}", "o.json"); }),
            "/duration_s: o.json: invalid JSON at line 2, column 17: number overflow parsing '1e999' (beyond the "
            "range of a double)");
  EXPECT_EQ(error_of([] {
              (void)parse_json_text(R"({"changes": [{"at_s": 0}, {"at_s": -1e999}]})", "o.json");
            }).rfind("/changes/1/at_s: o.json: invalid JSON at line 1, column 36: number overflow", 0),
            0u);
  EXPECT_EQ(error_of([] {
              (void)parse_json_text("[1, 2, 1e999]", "o.json");
            }).rfind("/2: o.json: invalid JSON at line 1, column 8", 0),
            0u);
}

TEST_F(LimitsTest, TraceFileThatIsNotAFile) {
  auto trace_error = [&](const std::string& file) {
    return error_of([&] {
      (void)parse_scenario(Json{{"workload", {{"type", "trace"}, {"params", {{"file", file}}}}}}, dir_.string());
    });
  };
  fs::create_directories(dir_ / "traces");
  EXPECT_EQ(trace_error("traces"), "/workload/params/file: cannot read trace file '" + (dir_ / "traces").string() +
                                       "': is a directory, "
                                       "expected a file");
  EXPECT_CONTAINS(trace_error("nope.csv"), "nope.csv': no such file");
  const auto t0 = Clock::now();
  EXPECT_EQ(trace_error("/dev/zero"), "/workload/params/file: cannot read trace file '/dev/zero': not a regular file");
  EXPECT_LT(seconds_since(t0), kQuickSeconds);
}

TEST_F(LimitsTest, TraceWithTooManyRequests) {
  std::string text = "timestamp\n# comments and blank lines are not requests\n\n";
  text.reserve(text.size() + 2 * (kMaxTraceRequests + 1));
  for (std::size_t i = 0; i < kMaxTraceRequests + 1; ++i)
    text += "0\n";
  write("big.csv", text);
  const auto t0 = Clock::now();
  const std::string m = error_of([&] {
    (void)parse_scenario(Json{{"workload", {{"type", "trace"}, {"params", {{"file", "big.csv"}}}}}}, dir_.string());
  });
  EXPECT_LT(seconds_since(t0), kQuickSeconds);
  EXPECT_CONTAINS(m, "/workload/params/file: trace file '");
  EXPECT_CONTAINS(m, "has " + std::to_string(kMaxTraceRequests + 1) + " requests, more than the limit");
}

// ---- fingerprints by content, not location ----

TEST_F(LimitsTest, FingerprintIsTheSameForACopyElsewhere) {
  const std::string trace = "timestamp,flow\n0,1\n0.0001,2\n";
  const Json doc = {{"workload", {{"type", "trace"}, {"params", {{"file", "t.csv"}}}}},
                    {"platform", {{"xml", "p.xml"}}}};
  for (const char* d : {"a/x", "b"}) {
    write(fs::path(d) / "t.csv", trace);
    write(fs::path(d) / "p.xml", "<platform/>\n");
  }
  const Scenario a = parse_scenario(doc, (dir_ / "a/x").string());
  const Scenario b = parse_scenario(doc, (dir_ / "b").string());
  EXPECT_EQ(scenario_sha256(a), scenario_sha256(b));
  EXPECT_EQ(resolve_scenario(a), resolve_scenario(b));
  EXPECT_EQ(resolve_scenario(a)["workload"]["params"]["file"], "t.csv");  // as written, not where it was found
  EXPECT_EQ(resolve_scenario(a)["platform"]["xml"], "p.xml");
  EXPECT_EQ(resolve_scenario(a).dump().find(dir_.string()), std::string::npos);
  // The run itself reads the files where they are.
  EXPECT_EQ(a.workload.params["file"], (dir_ / "a/x/t.csv").string());
  // The resolved form parses back to the same scenario from the same place.
  EXPECT_EQ(parse_scenario(resolve_scenario(a), (dir_ / "a/x").string()), a);
  // Other content, another fingerprint (a sweep cache must not return the old trace's results).
  write("b/t.csv", trace + "0.0002,1\n");
  EXPECT_NE(scenario_sha256(parse_scenario(doc, (dir_ / "b").string())), scenario_sha256(a));
  write("b/t.csv", trace);
  write("b/p.xml", "<platform version=\"4.1\"/>\n");
  EXPECT_NE(scenario_sha256(parse_scenario(doc, (dir_ / "b").string())), scenario_sha256(a));
}

}  // namespace
}  // namespace napisim
