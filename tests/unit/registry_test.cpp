// Registry (sim/core/registry.hpp): the models' and the workloads' name lookup.
#include "sim/core/registry.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/model/model.hpp"
#include "sim/params/fields.hpp"
#include "sim/workloads/workload.hpp"

namespace napisim {
namespace {

struct ThingInfo {
  static constexpr const char* kKind = "thing";
  std::string name;
  int value = 0;
};

TEST(RegistryTest, KeepsEntriesSortedAndNamesTheValidOnesForAnUnknownName) {
  Registry<ThingInfo> r;
  r.add({"b", 2});
  r.add({"a", 1});
  r.add({"c", 3});
  std::vector<std::string> names;
  for (const ThingInfo& t : r.list())
    names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_NE(r.find("b"), nullptr);
  EXPECT_EQ(r.find("b")->value, 2);
  EXPECT_EQ(r.find("z"), nullptr);
  EXPECT_EQ(r.get("c", "/x").value, 3);
  try {
    r.get("z", "/x/name");
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/x/name");
    EXPECT_STREQ(e.what(), "/x/name: unknown thing \"z\"; expected one of \"a\", \"b\", \"c\"");
  }
}

TEST(RegistryTest, ModelsAndWorkloadsShareIt) {
  EXPECT_EQ(builtin_models().get("napi_irq", "/models/0/name").name, "napi_irq");
  EXPECT_EQ(builtin_workloads().get("tcp_rr", "/workload/type").name, "tcp_rr");
  try {
    builtin_models().get("napi_foo", "/models/0/name");
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown model \"napi_foo\"; expected one of \"epoll_busy_poll\""),
              std::string::npos)
        << e.what();
  }
}

// Every registered entry, as a user meets it: its defaults resolve and round-trip, its schema
// names each parameter `describe` lists (each with a description), an unknown key is refused at
// its JSON path, and the defaults build a model or a workload.
template <class Info, class Resolve>
void check_entry(const Info& info, const std::string& path, Resolve resolve) {
  SCOPED_TRACE(info.name);
  EXPECT_FALSE(info.summary.empty());
  const Json schema = info.schema();
  ASSERT_TRUE(schema.contains("properties"));
  const std::vector<FieldInfo> rows = info.describe();
  EXPECT_FALSE(rows.empty());
  for (const FieldInfo& f : rows) {
    EXPECT_TRUE(schema.at("properties").contains(f.name)) << f.name;
    EXPECT_FALSE(f.doc.empty()) << f.name;
  }
  const Json defaults = resolve(Json::object());
  EXPECT_EQ(resolve(defaults), defaults);
  for (const FieldInfo& f : rows)
    EXPECT_TRUE(defaults.contains(f.name)) << f.name;
  try {
    resolve(Json{{"no_such_knob", 1}});
    ADD_FAILURE() << "an unknown key was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), path + "/no_such_knob");
  }
}

TEST(RegistryTest, EveryModelResolvesDescribesAndBuildsFromItsDefaults) {
  for (const ModelInfo& m : builtin_models().list()) {
    check_entry(m, "/models/0/params", [&](const Json& p) { return m.resolve(p, "/models/0/params"); });
    EXPECT_NE(m.create(m.resolve(Json::object(), "/models/0/params"), "/models/0/params"), nullptr) << m.name;
  }
}

TEST(RegistryTest, EveryWorkloadResolvesDescribesAndBuildsFromItsDefaults) {
  for (const WorkloadInfo& w : builtin_workloads().list()) {
    if (w.name == "trace") continue;  // needs a trace file: TraceTest and e2e cover it
    check_entry(w, "/workload/params", [&](const Json& p) { return w.resolve(p, "/workload/params", "."); });
    EXPECT_NE(w.create(w.resolve(Json::object(), "/workload/params", "."), "/workload/params"), nullptr) << w.name;
  }
  try {
    builtin_workloads().get("trace", "/workload/type").resolve(Json::object(), "/workload/params", ".");
    FAIL() << "trace without a file was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path().rfind("/workload/params", 0), 0u) << e.path();
  }
}

}  // namespace
}  // namespace napisim
