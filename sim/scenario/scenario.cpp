#include "sim/scenario/scenario.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "sim/core/sha256.hpp"
#include "sim/model/model.hpp"
#include "sim/params/json_util.hpp"
#include "sim/workloads/workload.hpp"

namespace napisim {

namespace {
#include "quickstart.inc"  // const char* kQuickstartJson (generated from scenarios/quickstart.json)
}  // namespace

namespace {

// Request lines of a trace (trace.hpp: blank lines and '#' comments are not requests), counted as the
// file streams by, so that a trace over kMaxTraceRequests fails before the trace loader holds it.
class RecordLineCounter {
 public:
  void update(std::string_view data) {
    for (const char c : data) {
      if (c == '\n') {
        state_ = kStart;
      } else if (state_ == kStart && c != ' ' && c != '\t' && c != '\r') {
        state_ = c == '#' ? kComment : kRecord;
        lines_ += state_ == kRecord;
      }
    }
  }
  std::size_t lines() const { return lines_; }

 private:
  enum State { kStart, kRecord, kComment };
  State state_ = kStart;
  std::size_t lines_ = 0;
};

// A file the scenario names, at `pointer` (as written: `written`, resolved: `file`): a readable
// regular file of at most `max_bytes` (checked while reading: /dev/zero fails at the limit), hashed
// for the fingerprint. `what` names it in messages ("trace file").
InputFile read_input_file(const std::string& pointer, const std::string& written, const std::string& file,
                          const std::string& what, std::size_t max_bytes, RecordLineCounter* records = nullptr) {
  const auto bad = [&](const std::string& why) {
    return ConfigError(pointer, "cannot read " + what + " '" + file + "': " + why);
  };
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(file, ec);
  if (st.type() == std::filesystem::file_type::not_found) throw bad("no such file");
  if (st.type() == std::filesystem::file_type::directory) throw bad("is a directory, expected a file");
  // A pipe or device would be read to its end by every reader (the trace is read at validation and
  // again at the run): only a regular file is read the same each time.
  if (!ec && st.type() != std::filesystem::file_type::regular) throw bad("not a regular file");
  Sha256 sha;
  const bool whole = read_file_bounded(
      file, max_bytes,
      [&](std::string_view chunk) {
        sha.update(chunk);
        if (records) records->update(chunk);
      },
      pointer, what);
  if (!whole)
    throw ConfigError(pointer, what + " '" + file + "' is larger than the limit of " + byte_limit_text(max_bytes));
  return InputFile{pointer, written, sha.hex()};
}

// "include": scenario fragments (e.g. calibration/costs.json) merged *under* the document.
// Objects merge key by key; arrays and scalars of the document replace the included ones.
void merge_under(Json& over, const Json& under) {
  for (auto it = under.begin(); it != under.end(); ++it) {
    auto mine = over.find(it.key());
    if (mine == over.end())
      over[it.key()] = it.value();
    else if (mine->is_object() && it.value().is_object())
      merge_under(*mine, it.value());
  }
}

constexpr int kMaxIncludeDepth = 8;
constexpr int kMaxIncludeFiles = 64;  // files read in all: a file included many times counts each time

Json expand_includes(const Json& doc, const std::string& base_dir, int depth, int& files) {
  auto inc = doc.find("include");
  if (inc == doc.end()) return doc;
  if (!inc->is_array())
    throw ConfigError("/include", "expected an array of file names, got " + describe_json_value(*inc));
  if (depth >= kMaxIncludeDepth)
    throw ConfigError("/include", "includes nested deeper than " + std::to_string(kMaxIncludeDepth) + " (a cycle?)");
  Json out = doc;
  out.erase("include");
  Json merged = Json::object();  // later includes take precedence over earlier ones
  for (std::size_t i = 0; i < inc->size(); ++i) {
    const std::string p = "/include/" + std::to_string(i);
    const Json& name = (*inc)[i];
    if (!name.is_string() || name.get<std::string>().empty())
      throw ConfigError(p, "expected a file name, got " + describe_json_value(name));
    std::filesystem::path file(name.get<std::string>());
    if (file.is_relative()) file = std::filesystem::path(base_dir) / file;
    if (++files > kMaxIncludeFiles)
      throw ConfigError(p, "more than " + std::to_string(kMaxIncludeFiles) + " included files in all");
    Json part;
    try {
      part = load_json_file(file.string());
      if (!part.is_object()) throw ConfigError("/", "expected a scenario object, got " + describe_json_value(part));
      part = expand_includes(part, file.parent_path().string(), depth + 1, files);
      (void)parse_params<Scenario>(part, "");  // strict: unknown keys and bad values name the included file
    } catch (const ConfigError& e) {
      throw ConfigError(p, "in '" + file.string() + "': " + e.what());
    }
    Json next = part;
    merge_under(next, merged);
    merged = std::move(next);
  }
  merge_under(out, merged);
  return out;
}

// A client "like": "server" takes each host setting it does not give from the server's: the
// server's value is merged under the client's own, key by key, before the strict parse (so the
// resolved scenario spells the client host out in full).
void inherit_server_host(Json& doc) {
  if (!doc.contains("platform")) doc["platform"] = Json::object();
  Json& pl = doc["platform"];
  if (!pl.is_object()) return;  // the strict parse reports it
  if (!pl.contains("clients")) pl["clients"] = Json::array({Json::object()});
  Json& clients = pl["clients"];
  if (!clients.is_array()) return;
  for (Json& c : clients) {
    if (!c.is_object()) continue;
    auto like = c.find("like");
    if (like != c.end() && !(like->is_string() && like->get<std::string>() == "server")) continue;
    auto idx = c.find("nic");
    const std::int64_t nic = idx != c.end() && idx->is_number_integer() ? idx->get<std::int64_t>() : 0;
    auto under = [&](const char* key, const Json* server) {
      if (!server || !server->is_object()) return;
      if (!c.contains(key)) c[key] = Json::object();
      if (c[key].is_object()) merge_under(c[key], *server);
    };
    auto find = [&](const char* key) -> const Json* {
      auto it = doc.find(key);
      return it == doc.end() ? nullptr : &*it;
    };
    under("topology", find("topology"));
    under("kernel", find("kernel"));
    under("costs", find("costs"));
    const Json* nics = find("nics");
    if (nics && nics->is_array() && nic >= 0 && nic < static_cast<std::int64_t>(nics->size()))
      under("host_nic", &(*nics)[static_cast<std::size_t>(nic)]);
    const Json* models = find("models");
    if (!c.contains("models") && models && models->is_array()) {
      // The server's models that apply to the NIC this client reaches, on the client's one NIC.
      Json mine = Json::array();
      for (const Json& m : *models) {
        if (!m.is_object()) {
          mine.push_back(m);
          continue;
        }
        auto on = m.find("nics");
        bool applies = on == m.end() || !on->is_array() || on->empty();
        if (on != m.end() && on->is_array())
          for (const Json& n : *on)
            applies = applies || (n.is_number_integer() && n.get<std::int64_t>() == nic);
        if (!applies) continue;
        Json copy = m;
        copy.erase("nics");
        mine.push_back(copy);
      }
      if (!mine.empty()) c["models"] = mine;  // else ClientSpec's default (softirq NAPI)
    }
  }
}

}  // namespace

Json expand_scenario_includes(const Json& doc, const std::string& base_dir) {
  if (!doc.is_object()) return doc;
  int files = 0;
  return expand_includes(doc, base_dir, 0, files);
}

namespace {

std::int64_t cpu_count(const TopologyParams& t) {
  return t.numa_nodes * t.llcs_per_node * t.cores_per_llc * t.threads_per_core;
}

// A NIC's placement on a host (its node, its IRQ CPUs).
void check_nic_on_host(const NicParams& n, const TopologyParams& t, const std::string& p) {
  if (n.numa_node >= t.numa_nodes)
    throw ConfigError(p + "/numa_node",
                      "expected a node < " + std::to_string(t.numa_nodes) + ", got " + std::to_string(n.numa_node));
  (void)CpuMask::parse(n.irq_affinity, static_cast<int>(cpu_count(t)), p + "/irq_affinity");
}

// Resolves each model's params and checks its NIC indices against a host of `nics` NICs.
void resolve_models(std::vector<ModelSpec>& models, std::size_t nics, const std::string& p) {
  for (std::size_t i = 0; i < models.size(); ++i) {
    const std::string mp = p + "/" + std::to_string(i);
    const ModelInfo& m = builtin_models().get(models[i].name, mp + "/name");
    models[i].params = m.resolve(models[i].params, mp + "/params");
    for (std::size_t j = 0; j < models[i].nics.size(); ++j)
      if (models[i].nics[j] >= static_cast<std::int64_t>(nics))
        throw ConfigError(mp + "/nics/" + std::to_string(j), "expected a NIC index < " + std::to_string(nics) +
                                                                 ", got " + std::to_string(models[i].nics[j]));
  }
}

// A Linux client host: the same checks as the server's host, on its own topology and one NIC.
void check_client_host(ClientSpec& c, const std::string& p, const std::string& workload) {
  if (!workload_has_linux_client(workload))
    throw ConfigError(p + "/stack",
                      "workload \"" + workload + "\" has no Linux client yet: expected \"idealised\" (or \"auto\")");
  try {
    c.topology.validate(p + "/topology");
    check_nic_on_host(c.host_nic, c.topology, p + "/host_nic");
  } catch (const ConfigError& e) {
    // The offending value may be one the user wrote for the server only: say where it came from.
    if (c.like != "server") throw;
    const std::string what = e.what();
    throw ConfigError(e.path(), what.substr(e.path().size() + 2) +
                                    " (the client host takes every value it does not set from the server: "
                                    "\"like\": \"server\")");
  }
  if (c.models.empty()) throw ConfigError(p + "/models", "expected at least one receive-path model (e.g. napi_irq)");
  resolve_models(c.models, 1, p + "/models");
}

}  // namespace

Scenario parse_scenario(const Json& in, const std::string& base_dir) {
  if (!in.is_object()) throw ConfigError("/", "expected a scenario object, got " + describe_json_value(in));
  Json doc = expand_scenario_includes(in, base_dir);
  // The server's own values first, so that an error in one is reported at its own pointer rather
  // than at the client that inherits it.
  (void)parse_params<Scenario>(doc, "");
  inherit_server_host(doc);
  Scenario s = parse_params<Scenario>(doc, "");
  s.topology.validate("/topology");
  if (s.nics.empty()) throw ConfigError("/nics", "expected at least one NIC");
  std::map<std::string, std::size_t> nic_names;  // name -> first index: one lookup per NIC, not a scan
  for (std::size_t i = 0; i < s.nics.size(); ++i) {
    const std::string p = "/nics/" + std::to_string(i);
    const NicParams& n = s.nics[i];
    check_nic_on_host(n, s.topology, p);
    const auto [first, added] = nic_names.emplace(n.name, i);
    if (!added)
      throw ConfigError(p + "/name",
                        "duplicate NIC name \"" + n.name + "\" (also /nics/" + std::to_string(first->second) + ")");
  }
  if (s.platform.clients.empty()) throw ConfigError("/platform/clients", "expected at least one client");
  std::map<std::string, std::size_t> client_names;  // name -> first index (a scan per client was quadratic)
  for (std::size_t i = 0; i < s.platform.clients.size(); ++i) {
    const std::string p = "/platform/clients/" + std::to_string(i);
    const ClientSpec& c = s.platform.clients[i];
    if (c.nic >= static_cast<std::int64_t>(s.nics.size()))
      throw ConfigError(p + "/nic",
                        "expected a NIC index < " + std::to_string(s.nics.size()) + ", got " + std::to_string(c.nic));
    // Hosts are named (SimGrid's, or the XML platform's): a client is neither the server nor
    // another client.
    if (c.name == s.platform.server) throw ConfigError(p + "/name", "client \"" + c.name + "\" is the server's host");
    const auto [first, added] = client_names.emplace(c.name, i);
    if (!added)
      throw ConfigError(p + "/name", "duplicate client name \"" + c.name + "\" (also /platform/clients/" +
                                         std::to_string(first->second) + ")");
  }
  if (!s.platform.xml.empty()) {
    std::filesystem::path xml(s.platform.xml);
    if (xml.is_relative()) xml = std::filesystem::path(base_dir) / xml;
    s.inputs.push_back(
        read_input_file("/platform/xml", s.platform.xml, xml.string(), "platform file", kMaxPlatformFileBytes));
    s.platform.xml = xml.string();
  }
  if (s.models.empty()) throw ConfigError("/models", "expected at least one receive-path model (e.g. napi_irq)");
  resolve_models(s.models, s.nics.size(), "/models");
  for (std::size_t i = 0; i < s.platform.clients.size(); ++i) {
    ClientSpec& c = s.platform.clients[i];
    if (c.stack == "auto") c.stack = workload_has_linux_client(s.workload.type) ? "linux" : "idealised";
    if (c.linux_host()) check_client_host(c, "/platform/clients/" + std::to_string(i), s.workload.type);
  }
  for (std::size_t i = 0; i < s.changes.size(); ++i) {
    const std::string p = "/changes/" + std::to_string(i);
    ModelSpec& m = s.changes[i].model;
    const ModelInfo& info = builtin_models().get(m.name, p + "/model/name");
    m.params = info.resolve(m.params, p + "/model/params");
    for (std::size_t j = 0; j < m.nics.size(); ++j)
      if (m.nics[j] >= static_cast<std::int64_t>(s.nics.size()))
        throw ConfigError(
            p + "/model/nics/" + std::to_string(j),
            "expected a NIC index < " + std::to_string(s.nics.size()) + ", got " + std::to_string(m.nics[j]));
    if (i > 0 && s.changes[i].at_s < s.changes[i - 1].at_s)
      throw ConfigError(p + "/at_s",
                        "expected changes in time order (at_s >= " + std::to_string(s.changes[i - 1].at_s) + "), got " +
                            std::to_string(s.changes[i].at_s));
  }
  // The trace is checked here, before its loader reads it: a directory, a device or an oversized file
  // fails with what is wrong with it, and its content (not its location) enters the fingerprint.
  const Json* trace = s.workload.type == "trace" && s.workload.params.is_object() && s.workload.params.contains("file")
                          ? &s.workload.params["file"]
                          : nullptr;
  if (trace && trace->is_string() && !trace->get<std::string>().empty()) {
    const std::string written = trace->get<std::string>();
    std::filesystem::path file(written);
    if (file.is_relative()) file = std::filesystem::path(base_dir) / file;  // as resolve_trace_params() does
    RecordLineCounter lines;
    const std::string resolved = file.lexically_normal().string();
    s.inputs.push_back(
        read_input_file("/workload/params/file", written, resolved, "trace file", kMaxTraceFileBytes, &lines));
    if (lines.lines() > kMaxTraceRequests + 1)  // the header line, then one request per line
      throw ConfigError("/workload/params/file",
                        "trace file '" + resolved + "' has " + std::to_string(lines.lines() - 1) +
                            " requests, more than the limit of " + std::to_string(kMaxTraceRequests));
  }
  s.workload.params = resolve_workload_params(s.workload.type, s.workload.params, "/workload/params", base_dir);
  if (s.warmup_s + s.duration_s > 1e5) throw ConfigError("/duration_s", "expected warmup_s + duration_s <= 1e5 s");
  return s;
}

Json resolve_scenario(const Scenario& s) {
  Json out = params_to_json(s);
  for (const InputFile& f : s.inputs)
    out[Json::json_pointer(f.pointer)] = f.path;
  return out;
}

std::string scenario_sha256(const Scenario& s) {
  Json out = params_to_json(s);
  for (const InputFile& f : s.inputs)
    out[Json::json_pointer(f.pointer)] = "sha256:" + f.sha256;
  return sha256_hex(out.dump());
}

Json scenario_schema() {
  Json s = params_schema<Scenario>();
  Json out;
  out["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  out["title"] = "napisim scenario";
  for (auto it = s.begin(); it != s.end(); ++it)
    out[it.key()] = it.value();
  out["description"] = "A scenario file (and each included file) is at most " + byte_limit_text(kMaxJsonFileBytes) +
                       ", nested at most " + std::to_string(kMaxJsonNesting) + " levels";
  if (out.contains("properties") && out["properties"].is_object()) {
    out["properties"]["include"] = {{"type", "array"},
                                    {"items", {{"type", "string"}}},
                                    {"maxItems", kMaxIncludeFiles},
                                    {"description",
                                     "Scenario fragments (paths relative to this file) merged under this "
                                     "document; this document's own values take precedence (at most " +
                                         std::to_string(kMaxIncludeFiles) + " files read in all)"}};
    Json& xml = out["properties"]["platform"]["properties"]["xml"];
    xml["description"] =
        xml["description"].get<std::string>() + " (at most " + byte_limit_text(kMaxPlatformFileBytes) + ")";
  }
  Json models;
  for (const ModelInfo& m : builtin_models().list())
    models[m.name] = m.schema();
  out["$defs"]["model_params"] = models;
  out["$defs"]["workload_params"] = workload_schema();
  Json& trace = out["$defs"]["workload_params"]["trace"]["properties"]["file"];
  if (trace.is_object() && trace.contains("description"))
    trace["description"] = trace["description"].get<std::string>() + " (at most " +
                           byte_limit_text(kMaxTraceFileBytes) + " and " + std::to_string(kMaxTraceRequests) +
                           " requests)";
  return out;
}

Json default_scenario() {
  return parse_json_text(kQuickstartJson, "embedded quickstart scenario");
}

std::vector<std::string> scenario_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("NAPISIM_SCENARIOS")) {
    std::string list = env;
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t colon = std::min(list.find(':', at), list.size());
      if (colon > at) dirs.push_back(list.substr(at, colon - at));
      at = colon + 1;
    }
  }
  // `cmake --install` puts the scenarios at a fixed place relative to the executable, whatever the
  // prefix: a copy of napisim outside the build tree with scenarios there uses them, the build
  // tree's the source tree's.
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path installed = (exe.parent_path() / NAPISIM_INSTALLED_SCENARIOS_DIR).lexically_normal();
  const bool is_installed = !ec && exe.parent_path() != std::filesystem::path(NAPISIM_BUILD_DIR) &&
                            std::filesystem::is_directory(installed, ec);
  dirs.push_back(is_installed ? installed.string() : std::string(NAPISIM_SCENARIOS_DIR));
  dirs.push_back((std::filesystem::current_path() / "scenarios").string());
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& d : dirs) {
    const auto canon = std::filesystem::weakly_canonical(d, ec);
    if (seen.insert(ec ? d : canon.string()).second) out.push_back(d);
  }
  return out;
}

std::vector<std::string> list_scenarios() {
  std::set<std::string> names;
  for (const std::string& d : scenario_dirs()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(d, ec)) continue;
    for (auto it = std::filesystem::recursive_directory_iterator(d, ec); !ec && it != std::filesystem::end(it);
         it.increment(ec)) {
      const std::filesystem::path& p = it->path();
      const std::string file = p.filename().string();
      if (!it->is_regular_file(ec) || p.extension() != ".json" || file.ends_with(".schema.json")) continue;
      names.insert(std::filesystem::relative(p, d).replace_extension().generic_string());
    }
  }
  return {names.begin(), names.end()};
}

std::string find_scenario_file(const std::string& spec) {
  std::error_code ec;
  if (spec.empty()) return "";
  if (std::filesystem::is_regular_file(spec, ec)) return spec;
  for (const std::string& d : scenario_dirs()) {
    for (const std::string& cand : {d + "/" + spec, d + "/" + spec + ".json"})
      if (std::filesystem::is_regular_file(cand, ec)) return cand;
  }
  if (spec == "quickstart") return "";                 // the embedded copy
  if (std::filesystem::exists(spec, ec)) return spec;  // a directory or device: load_json_file says which
  std::string searched, known;
  for (const std::string& d : scenario_dirs())
    searched += (searched.empty() ? "" : ", ") + d;
  for (const std::string& n : list_scenarios())
    known += (known.empty() ? "" : ", ") + n;
  throw ConfigError("/", "no scenario file or scenario name '" + spec + "' (searched " + searched +
                             "; known names: " + (known.empty() ? "none" : known) + ")");
}

Json load_scenario_doc(const std::string& path_or_name) {
  const std::string file = find_scenario_file(path_or_name);
  return file.empty() ? default_scenario() : load_json_file(file);
}

void apply_overrides(Json& doc, const std::vector<std::string>& sets) {
  // --set would turn a null document into an object and accept it.
  if (!doc.is_object()) throw ConfigError("/", "expected a scenario object, got " + describe_json_value(doc));
  for (const std::string& a : sets)
    apply_set(doc, a);
}

}  // namespace napisim
