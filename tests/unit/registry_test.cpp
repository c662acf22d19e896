// Registry (sim/core/registry.hpp): the models' and the workloads' name lookup.
#include "sim/core/registry.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/model/model.hpp"
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

}  // namespace
}  // namespace napisim
