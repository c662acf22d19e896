// Scenario `include` files (sim/scenario/scenario.cpp): resolved relative to the including file,
// merged under the document (its own values and --set overrides win), checked strictly with errors
// naming /include/<i> and the included file.
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

class IncludeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("napisim-include-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "cal");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& rel, const std::string& text) { std::ofstream(dir_ / rel) << text; }
  std::string error(const Json& doc) {
    try {
      (void)parse_scenario(doc, dir_.string());
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(IncludeTest, MergedUnderTheDocumentWhichWins) {
  write("cal/costs.json", R"({"costs": {"rx_skb_ns": 900, "wakeup_ns": 555}, "duration_s": 0.3})");
  const Json doc = {{"include", {"cal/costs.json"}}, {"costs", {{"wakeup_ns", 444}}}};
  const Scenario s = parse_scenario(doc, dir_.string());
  EXPECT_EQ(s.costs.rx_skb_ns, 900);                       // from the include
  EXPECT_EQ(s.costs.wakeup_ns, 444);                       // the document's own value wins
  EXPECT_EQ(s.costs.hardirq_ns, CostParams{}.hardirq_ns);  // untouched default
  EXPECT_DOUBLE_EQ(s.duration_s, 0.3);
  // The resolved form has no include key and round-trips.
  const Json r = resolve_scenario(s);
  EXPECT_FALSE(r.contains("include"));
  EXPECT_EQ(parse_scenario(r), s);
}

TEST_F(IncludeTest, OverridesWinOverIncludesAndLaterIncludesOverEarlier) {
  write("a.json", R"({"costs": {"rx_skb_ns": 900, "wakeup_ns": 1}})");
  write("b.json", R"({"costs": {"rx_skb_ns": 800}})");
  Json doc = {{"include", {"a.json", "b.json"}}};
  apply_overrides(doc, {"costs.wakeup_ns=2"});
  const Scenario s = parse_scenario(doc, dir_.string());
  EXPECT_EQ(s.costs.rx_skb_ns, 800);
  EXPECT_EQ(s.costs.wakeup_ns, 2);
}

TEST_F(IncludeTest, NestedIncludesResolveRelativeToTheirOwnFile) {
  write("cal/inner.json", R"({"costs": {"syscall_ns": 77}})");
  write("cal/outer.json", R"({"include": ["inner.json"], "costs": {"send_ns": 1000}})");
  const Scenario s = parse_scenario(Json{{"include", {"cal/outer.json"}}}, dir_.string());
  EXPECT_EQ(s.costs.syscall_ns, 77);
  EXPECT_EQ(s.costs.send_ns, 1000);
}

TEST_F(IncludeTest, ArraysAreReplacedNotMerged) {
  write("nics.json", R"({"nics": [{"queues": 4}, {"queues": 2}]})");
  const Scenario s = parse_scenario(Json{{"include", {"nics.json"}}, {"nics", {{{"queues", 3}}}}}, dir_.string());
  ASSERT_EQ(s.nics.size(), 1u);
  EXPECT_EQ(s.nics[0].queues, 3);
}

TEST_F(IncludeTest, ErrorsNameThePointerAndTheFile) {
  EXPECT_EQ(error(Json{{"include", "x.json"}}).rfind("/include: expected an array", 0), 0u);
  EXPECT_EQ(error(Json{{"include", {3}}}).rfind("/include/0: expected a file name", 0), 0u);
  const std::string missing = error(Json{{"include", {"nope.json"}}});
  EXPECT_EQ(missing.rfind("/include/0: in '", 0), 0u) << missing;
  EXPECT_NE(missing.find("nope.json"), std::string::npos);
  write("bad.json", R"({"costs": {"rx_skb_nss": 1}})");
  const std::string bad = error(Json{{"include", {"ok.json", "bad.json"}}});
  EXPECT_EQ(bad.rfind("/include/0", 0), 0u) << bad;  // ok.json does not exist either: first one reported
  write("ok.json", R"({})");
  const std::string bad2 = error(Json{{"include", {"ok.json", "bad.json"}}});
  EXPECT_EQ(bad2.rfind("/include/1: in '", 0), 0u) << bad2;
  EXPECT_NE(bad2.find("/costs/rx_skb_nss"), std::string::npos) << bad2;
  write("neg.json", R"({"costs": {"rx_skb_ns": -5}})");
  EXPECT_NE(error(Json{{"include", {"neg.json"}}}).find("/costs/rx_skb_ns"), std::string::npos);
  write("arr.json", R"([1])");
  EXPECT_NE(error(Json{{"include", {"arr.json"}}}).find("expected a scenario object"), std::string::npos);
  write("cycle.json", R"({"include": ["cycle.json"]})");
  EXPECT_NE(error(Json{{"include", {"cycle.json"}}}).find("nested deeper"), std::string::npos);
}

TEST_F(IncludeTest, SchemaDeclaresInclude) {
  const Json s = scenario_schema();
  EXPECT_EQ(s["properties"]["include"]["type"], "array");
}

}  // namespace
}  // namespace napisim
