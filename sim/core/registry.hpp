// napisim: a registry of named plug-ins (receive-path models, workloads): what `describe`, the
// `list-*` commands, the schema and the scenario loader look names up in. Entries are kept sorted
// by name; `Info::kKind` names the kind of entry in errors ("model", "workload type").
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "sim/core/error.hpp"

namespace napisim {

template <class Info>
class Registry {
 public:
  void add(Info info) {
    NAPISIM_ASSERT(find(info.name) == nullptr, "registered twice");
    const auto at = std::lower_bound(entries_.begin(), entries_.end(), info.name,
                                     [](const Info& e, const std::string& n) { return e.name < n; });
    entries_.insert(at, std::move(info));
  }
  const Info* find(const std::string& name) const {
    for (const Info& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }
  /// Throws ConfigError at `path` naming the valid names when `name` is unknown.
  const Info& get(const std::string& name, const std::string& path) const {
    if (const Info* e = find(name)) return *e;
    std::string valid;
    for (const Info& e : entries_)
      valid += (valid.empty() ? "\"" : ", \"") + e.name + "\"";
    throw ConfigError(path, std::string("unknown ") + Info::kKind + " \"" + name + "\"; expected one of " + valid);
  }
  const std::vector<Info>& list() const { return entries_; }  // sorted by name

 private:
  std::vector<Info> entries_;
};

}  // namespace napisim
