// napisim: result writers (see writers.hpp for the formats and the upstream sources they follow).
#include "sim/output/writers.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace napisim::output {

namespace {

// ---------------------------------------------------------------------------------------------------
// Small helpers: printf into a std::string, tolerant JSON lookups, flattening.

__attribute__((format(printf, 1, 2))) std::string strf(const char* fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  // clang-analyzer's valist checker misreads x86-64's array-typed va_list here (false positive).
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);  // NOLINT(clang-analyzer-valist.Uninitialized)
  va_end(ap);
  if (n < 0) {
    return {};
  }
  if (static_cast<std::size_t>(n) < sizeof buf) {
    return std::string(buf, static_cast<std::size_t>(n));
  }
  std::string s(static_cast<std::size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(s.data(), s.size(), fmt, ap);  // NOLINT(clang-analyzer-valist.Uninitialized)
  va_end(ap);
  s.resize(static_cast<std::size_t>(n));
  return s;
}

/// j[key] if j is an object holding key, else nullptr.
const Json* find(const Json* j, std::string_view key) {
  if (j == nullptr || !j->is_object()) {
    return nullptr;
  }
  const auto it = j->find(key);
  return it == j->end() ? nullptr : &*it;
}

bool is_num(const Json* j) {
  return j != nullptr && j->is_number();
}

double num_or(const Json* j, double fallback) {
  if (!is_num(j)) {
    return fallback;
  }
  const double v = j->get<double>();
  return std::isfinite(v) ? v : fallback;
}

/// Integer value of a JSON number (floats truncated toward zero, clamped to the int64 range).
long long int_or(const Json* j, long long fallback) {
  if (j == nullptr) {
    return fallback;
  }
  if (j->is_number_unsigned()) {
    const auto v = j->get<std::uint64_t>();
    return v > static_cast<std::uint64_t>(std::numeric_limits<long long>::max()) ? std::numeric_limits<long long>::max()
                                                                                 : static_cast<long long>(v);
  }
  if (j->is_number_integer()) {
    return j->get<long long>();
  }
  if (j->is_number_float()) {
    const double v = j->get<double>();
    if (!std::isfinite(v)) {
      return fallback;
    }
    if (v >= 9.2e18) {
      return std::numeric_limits<long long>::max();
    }
    if (v <= -9.2e18) {
      return std::numeric_limits<long long>::min();
    }
    return static_cast<long long>(v);
  }
  if (j->is_boolean()) {
    return j->get<bool>() ? 1 : 0;
  }
  return fallback;
}

using Leaves = std::vector<std::pair<std::string, const Json*>>;

void flatten(const Json& j, const std::string& prefix, Leaves& out) {
  const auto child = [&prefix](std::string_view name) {
    std::string key = prefix;
    if (!key.empty()) {
      key += '.';
    }
    key += name;
    return key;
  };
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      flatten(v, child(k), out);
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      flatten(j[i], child(std::to_string(i)), out);
    }
  } else {
    out.emplace_back(prefix, &j);
  }
}

/// The summary's scalars, then each Linux client host's as "clients.<host>.<key>" (its CPU by
/// class, IRQs, NAPI polls, drops, PSI; not its per-CPU rows or model reports).
Leaves summary_leaves(const Json& result) {
  Leaves out;
  if (const Json* s = find(&result, "summary"); s != nullptr && s->is_object()) {
    flatten(*s, "", out);
  }
  if (const Json* clients = find(&result, "clients"); clients != nullptr && clients->is_object()) {
    for (const auto& [name, c] : clients->items()) {
      if (!c.is_object()) {
        continue;
      }
      for (const auto& [k, v] : c.items()) {
        if (k != "host" && k != "per_cpu" && k != "models") {
          flatten(v, "clients." + name + "." + k, out);
        }
      }
    }
  }
  return out;
}

/// A scalar as plain text: strings unquoted, numbers as nlohmann prints them, null as "".
std::string scalar_text(const Json* j) {
  if (j == nullptr || j->is_null()) {
    return "";
  }
  if (j->is_string()) {
    return j->get<std::string>();
  }
  return j->dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) {
    return s;
  }
  std::string q = "\"";
  for (const char c : s) {
    if (c == '"') {
      q += '"';
    }
    q += c;
  }
  q += '"';
  return q;
}

/// %g of a percentile, as neper prints it (`latency_p%g`, `percentiles=%g,`).
std::string pct_g(double p) {
  return strf("%g", p);
}

void put(std::string& out, std::string_view key, const std::string& value) {
  out.append(key);
  out += '=';
  out += value;
  out += '\n';
}

// ---------------------------------------------------------------------------------------------------
// neper

enum class FlagType { kInt, kBool, kString, kULong, kDouble, kLongLong, kPercentiles };

struct NeperFlag {
  const char* name;
  FlagType type;
  const char* default_value;  // already printed the way neper prints the default
};

// tcp_rr's flags in neper's print order, i.e. the REVERSE of registration order: tcp_rr_main.c registers
// add_flags_common, add_flags_tcp, add_flags_rr, add_flags_tcp_rr (define_all_flags.c @ ea5890f) and
// flags_parser_add() pushes each flag onto the front of a list that flags_parser_dump() walks. pin_numa
// is absent: neper's Makefile builds with -DNO_LIBNUMA, which leaves it undefined. help/version are
// registered first and skipped by the dump.
constexpr NeperFlag kNeperTcpRrFlags[] = {
    // add_flags_tcp_rr
    {"noburst", FlagType::kULong, "0"},
    {"reuseaddr", FlagType::kBool, "0"},
    {"async_connect", FlagType::kBool, "0"},
    {"delay", FlagType::kULong, "0"},
    // add_flags_rr
    {"mark", FlagType::kInt, "0"},
    {"logrtt_entries_per_flow", FlagType::kInt, "10000"},
    {"log_rtt", FlagType::kString, ""},
    {"buffer_size", FlagType::kInt, "65536"},
    {"test_length", FlagType::kInt, "10"},
    {"percentiles", FlagType::kPercentiles, ""},
    {"response_size", FlagType::kInt, "1"},
    {"request_size", FlagType::kInt, "1"},
    // add_flags_tcp
    {"congestion_control", FlagType::kString, ""},
    {"no_delay", FlagType::kBool, "0"},
    {"tcp_tx_delay", FlagType::kInt, "0"},
    {"tcp_fastopen", FlagType::kBool, "0"},
    {"num_ports", FlagType::kInt, "1"},
    // add_flags_common
    {"wait_start", FlagType::kULong, "0"},
    {"iostat_ms", FlagType::kULong, "0"},
    {"time_wait", FlagType::kBool, "0"},
    {"all_samples", FlagType::kString, ""},
    {"port", FlagType::kString, "12867"},
    {"control_port", FlagType::kString, "12866"},
    {"host", FlagType::kString, ""},
    {"local_hosts", FlagType::kString, ""},
    {"max_pacing_rate", FlagType::kLongLong, "0"},
    {"interval", FlagType::kDouble, "1.000000"},
    {"freebind", FlagType::kBool, "0"},
    {"nonblocking", FlagType::kBool, "0"},
    {"nolog", FlagType::kBool, "0"},
    {"logtostderr", FlagType::kBool, "0"},
    {"pin_cpu", FlagType::kBool, "0"},
    {"dry_run", FlagType::kBool, "0"},
    {"debug", FlagType::kBool, "0"},
    {"client", FlagType::kBool, "1"},  // napisim prints the client's stdout, i.e. neper run with -c
    {"ipv6", FlagType::kBool, "0"},
    {"ipv4", FlagType::kBool, "0"},
    {"stime_use_proc", FlagType::kBool, "0"},
    {"source_port", FlagType::kInt, "-1"},
    {"suicide_length", FlagType::kInt, "0"},
    {"listen_backlog", FlagType::kInt, "128"},
    {"num_clients", FlagType::kInt, "1"},
    {"num_threads", FlagType::kInt, "1"},
    {"num_flows", FlagType::kInt, "1"},
    {"maxevents", FlagType::kInt, "1000"},
    {"magic", FlagType::kInt, "42"},
};

/// percentiles.c percentiles_parse: legacy 999/9999 spellings, range [0, 100], sorted, de-duplicated.
std::vector<double> neper_percentiles(const Json* workload) {
  std::vector<double> ps;
  const Json* p = find(workload, "percentiles");
  if (p == nullptr || !p->is_array()) {
    return ps;
  }
  for (const auto& e : *p) {
    if (!e.is_number()) {
      continue;
    }
    double d = e.get<double>();
    if (d == 999) {
      d = 99.9;
    } else if (d == 9999) {
      d = 99.99;
    }
    if (std::isfinite(d) && d >= 0 && d <= 100) {
      ps.push_back(d);
    }
  }
  std::sort(ps.begin(), ps.end());
  ps.erase(std::unique(ps.begin(), ps.end()), ps.end());
  return ps;
}

/// neper's test_length is an int; a fractional simulated length (e.g. 0.25 s) prints with %g instead.
std::string test_length_text(double v) {
  if (v == std::trunc(v) && std::fabs(v) < 9e18) {
    return strf("%lld", static_cast<long long>(v));
  }
  return strf("%g", v);
}

std::string neper_flag_value(const NeperFlag& f, const Json* workload, const std::vector<double>& percentiles) {
  if (f.type == FlagType::kPercentiles) {
    std::string s;
    for (const double p : percentiles) {
      s += pct_g(p) + ",";
    }
    return s;
  }
  const Json* v = find(workload, f.name);
  if (v == nullptr || v->is_null()) {
    return f.default_value;
  }
  switch (f.type) {
    case FlagType::kInt:
      if (std::string_view(f.name) == "test_length" && v->is_number_float()) {
        return test_length_text(num_or(v, 10));
      }
      [[fallthrough]];
    case FlagType::kLongLong:
      return v->is_number() ? strf("%lld", int_or(v, 0)) : f.default_value;
    case FlagType::kULong:
      return v->is_number() ? strf("%lld", std::max(0LL, int_or(v, 0))) : f.default_value;
    case FlagType::kBool:
      return (v->is_boolean() || v->is_number()) ? (int_or(v, 0) != 0 ? "1" : "0") : f.default_value;
    case FlagType::kDouble:
      return v->is_number() ? strf("%f", num_or(v, 0)) : f.default_value;
    case FlagType::kString:
      return v->is_string() ? v->get<std::string>() : f.default_value;
    case FlagType::kPercentiles:
      break;
  }
  return f.default_value;
}

/// `%ld.%09ld` of a non-negative nanosecond count.
std::string timespec_text(long long ns) {
  ns = std::max(0LL, ns);
  return strf("%lld.%09lld", ns / 1000000000LL, ns % 1000000000LL);
}

std::string seconds_9(double ns) {
  return strf("%.9f", ns * 1e-9);
}

// ---------------------------------------------------------------------------------------------------
// netperf

/// print_top_test_header(): the address in parentheses goes through inet_ntop(..., address_buf,
/// sizeof(address_buf)) with address_buf a char*, so the buffer is 8 bytes: longer addresses print as
/// "()" with glibc.
std::string netperf_banner(const Json* workload) {
  const Json* host_j = find(workload, "host");
  const std::string host = (host_j != nullptr && host_j->is_string()) ? host_j->get<std::string>() : "10.0.0.2";
  const bool v6 = host.find(':') != std::string::npos;
  const std::string paren = host.size() <= 7 ? host : "";
  const Json* type = find(workload, "type");
  const bool stream = type != nullptr && type->is_string() && type->get<std::string>() == "stream";
  std::string s = stream ? "MIGRATED TCP STREAM TEST" : "MIGRATED TCP REQUEST/RESPONSE TEST";
  s += strf(" from %s (%s) port %u %s", v6 ? "::" : "0.0.0.0", v6 ? "::" : "0.0.0.0", 0U, v6 ? "AF_INET6" : "AF_INET");
  s += strf(" to %s (%s) port %u %s", host.c_str(), paren.c_str(), 0U, v6 ? "AF_INET6" : "AF_INET");
  if (int_or(find(workload, "no_delay"), 0) != 0) {
    s += " : nodelay";
  }
  s += " : demo";
  if (!stream) {  // "first burst" only for REQUEST/RESPONSE tests
    s += strf(" : first burst %lld", int_or(find(workload, "first_burst"), 0));
  }
  s += '\n';
  return s;
}

struct NetperfLatency {
  long long min_us = -1, max_us = -1, p50_us = -1, p90_us = -1, p99_us = -1;
  double mean_us = -1.0, stddev_us = -1.0;
};

/// netperf keeps integer-µs samples (delta_micro) and reports int µs for min/max/percentiles and %.2f
/// for mean/stddev; -1 is what netperf prints when latency statistics were not kept (no -j).
NetperfLatency netperf_latency(const Json* summary) {
  NetperfLatency l;
  const Json* lat = find(summary, "latency_ns");
  if (lat == nullptr || !lat->is_object()) {
    return l;
  }
  const auto us_int = [&](const char* key) {
    const Json* v = find(lat, key);
    return is_num(v) ? static_cast<long long>(std::floor(std::max(0.0, num_or(v, 0)) / 1000.0)) : -1LL;
  };
  l.min_us = us_int("min");
  l.max_us = us_int("max");
  l.p50_us = us_int("p50");
  l.p90_us = us_int("p90");
  l.p99_us = us_int("p99");
  l.mean_us = is_num(find(lat, "mean")) ? num_or(find(lat, "mean"), 0) / 1000.0 : -1.0;
  l.stddev_us = is_num(find(lat, "stddev")) ? num_or(find(lat, "stddev"), 0) / 1000.0 : -1.0;
  return l;
}

std::string errno_text(int err) {
  return std::generic_category().message(err == 0 ? EIO : err);
}

/// Cleans up after a failed atomic write (closes the stream or descriptor, removes the temp file).
[[noreturn]] void fail_atomic(FILE* f, int fd, const std::string& tmp, const std::string& path, const char* what,
                              int err) {
  if (f != nullptr) {
    std::fclose(f);
  } else if (fd >= 0) {
    ::close(fd);
  }
  ::unlink(tmp.c_str());
  throw std::runtime_error(path + ": " + what + ": " + errno_text(err));
}

}  // namespace

// -----------------------------------------------------------------------------------------------------

namespace {

/// A target's content, written and synced under a temp name in the target's directory.
struct Staged {
  std::string tmp, path, dir;
};

Staged stage_file(const std::string& path, std::string_view content) {
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) {
    throw std::runtime_error(path + ": not a file path");
  }
  std::string tmp = (dir == "/" ? "/" : dir + "/") + "." + base + ".tmp.XXXXXX";

  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    const int err = errno;
    throw std::runtime_error(path + ": cannot create a temporary file in " + dir + ": " + errno_text(err));
  }
  FILE* f = ::fdopen(fd, "wb");
  if (f == nullptr) {
    fail_atomic(nullptr, fd, tmp, path, "fdopen", errno);
  }
  if (::fchmod(fd, 0644) != 0) {
    fail_atomic(f, fd, tmp, path, "fchmod", errno);
  }
  if (!content.empty() && std::fwrite(content.data(), 1, content.size(), f) != content.size()) {
    fail_atomic(f, fd, tmp, path, "write", errno);
  }
  if (std::fflush(f) != 0) {
    fail_atomic(f, fd, tmp, path, "write", errno);
  }
  if (::fsync(fd) != 0) {
    fail_atomic(f, fd, tmp, path, "fsync", errno);
  }
  if (std::fclose(f) != 0) {
    fail_atomic(nullptr, -1, tmp, path, "close", errno);
  }
  return Staged{tmp, path, dir};
}

void commit_file(const Staged& s) {
  if (::rename(s.tmp.c_str(), s.path.c_str()) != 0) {
    fail_atomic(nullptr, -1, s.tmp, s.path, "rename", errno);
  }
  // Make the rename itself durable; best effort (some filesystems refuse fsync on directories).
  const int dfd = ::open(s.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view content) {
  commit_file(stage_file(path, content));
}

void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<Staged> staged;
  staged.reserve(files.size());
  try {
    for (const auto& [path, content] : files) {
      staged.push_back(stage_file(path, content));
      // Fault injection for the interruption tests: a real signal in the middle of a write.
      if (staged.size() == 1) {
        if (const char* sig = std::getenv("NAPISIM_TEST_SIGNAL_IN_WRITE")) std::raise(std::atoi(sig));
      }
    }
  } catch (...) {
    for (const Staged& s : staged)
      ::unlink(s.tmp.c_str());
    throw;
  }
  // Every file is written: only renames are left, which do not run out of space.
  for (std::size_t i = 0; i < staged.size(); ++i) {
    try {
      commit_file(staged[i]);
    } catch (...) {
      for (std::size_t j = i + 1; j < staged.size(); ++j)
        ::unlink(staged[j].tmp.c_str());
      throw;
    }
  }
}

std::string format_json(const Json& result) {
  return result.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string format_csv(const Json& result) {
  const Json* context = find(&result, "context");
  std::vector<std::string> header = {"scenario", "seed", "run"};
  std::vector<std::string> values = {scalar_text(find(context, "scenario")), scalar_text(find(context, "seed")),
                                     scalar_text(find(context, "run"))};
  for (const auto& [key, value] : summary_leaves(result)) {
    header.push_back(key);
    values.push_back(scalar_text(value));
  }
  // run --explain: "latency_breakdown.<band>.<stage>" (mean ns), with each band's requests and
  // mean latency, then the waiting stages' sub-rows "latency_breakdown.<band>.<stage>[<class>]".
  const Json* breakdown = find(&result, "latency_breakdown");
  const Json* bands = find(breakdown, "bands");
  const Json* stages = find(breakdown, "stages");
  const Json* splits = find(breakdown, "splits");
  if (bands && stages && bands->is_array() && stages->is_array()) {
    for (const Json& band : *bands) {
      const std::string prefix = "latency_breakdown." + band.value("band", "") + ".";
      header.push_back(prefix + "requests");
      values.push_back(scalar_text(find(&band, "requests")));
      header.push_back(prefix + "latency_ns");
      values.push_back(scalar_text(find(&band, "latency_ns")));
      auto columns = [&](const Json* names, const char* key) {
        const Json* st = find(&band, key);
        if (!names || !names->is_array() || !st || !st->is_object()) return;
        for (const Json& name : *names) {
          header.push_back(prefix + name.get<std::string>());
          values.push_back(scalar_text(find(st, name.get<std::string>())));
        }
      };
      columns(stages, "stage_ns");
      columns(splits, "split_ns");
    }
  }
  std::string out;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(header[i]);
  }
  out += '\n';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(values[i]);
  }
  out += '\n';
  return out;
}

namespace {

// ---------------------------------------------------------------------------------------------------
// summary

/// Appends `item` to a list, after `sep` unless the list is empty.
void append_item(std::string& list, std::string_view sep, const std::string& item) {
  if (!list.empty()) list += sep;
  list += item;
}

/// A workload parameter as the summary shows it: a distribution as type(key=value, ...), a constant
/// one as its value, an array as its elements joined by commas.
std::string param_text(const Json& v) {
  if (v.is_object()) {
    const Json* type = find(&v, "type");
    const std::string name = type != nullptr && type->is_string() ? type->get<std::string>() : "";
    if (name == "constant" && find(&v, "value") != nullptr) return param_text(v["value"]);
    std::string args;
    for (const auto& [k, x] : v.items())
      if (k != "type") append_item(args, ", ", k + "=" + param_text(x));
    return name + "(" + args + ")";
  }
  if (v.is_array()) {
    std::string s;
    for (const Json& e : v)
      append_item(s, ",", param_text(e));
    return s;
  }
  return scalar_text(&v);
}

/// "8 CPUs, eth0 (4 queues), models napi_irq, rps_rfs" for a host's topology, NICs and models.
std::string host_text(const Json* topology, const std::vector<const Json*>& nics, const Json* models) {
  long long cpus = 1;
  for (const char* k : {"numa_nodes", "llcs_per_node", "cores_per_llc", "threads_per_core"})
    cpus *= int_or(find(topology, k), 1);
  std::string s = strf("%lld CPU%s", cpus, cpus == 1 ? "" : "s");
  for (const Json* n : nics) {
    const Json* name = find(n, "name");
    const long long queues = int_or(find(n, "queues"), 0);
    s += strf(", %s (%lld queue%s)", name != nullptr && name->is_string() ? name->get<std::string>().c_str() : "nic",
              queues, queues == 1 ? "" : "s");
  }
  if (models != nullptr && models->is_array()) {
    s += models->size() == 1 ? ", model " : ", models ";
    for (std::size_t i = 0; i < models->size(); ++i) {
      const Json* name = find(&(*models)[i], "name");
      if (i > 0) s += ", ";
      s += name != nullptr && name->is_string() ? name->get<std::string>() : "?";
      const Json* only = find(&(*models)[i], "nics");
      if (only != nullptr && only->is_array() && !only->empty()) s += " (NICs " + param_text(*only) + ")";
    }
  }
  return s;
}

/// What the workload counts as one operation (CPU per op), singular and plural.
struct Op {
  const char* one;
  const char* many;
};

/// One host's results: CPU busy and per op, CPU by class, IRQs and NAPI polls, drops, scheduling, PSI.
void host_results(std::string& out, const std::string& label, const Json* h, const Op& op) {
  static constexpr const char* kClasses[] = {"hardirq", "softirq", "ksoftirqd", "kthread",
                                             "user",    "system",  "busy_poll", "busy_spin"};
  const Json* cpu = find(h, "cpu");
  out += strf("%-10s CPU %.1f%% busy (%.2f CPUs)", label.c_str(), num_or(find(cpu, "busy_pct"), 0),
              num_or(find(cpu, "busy_cpus"), 0));
  // A stream has no operations to divide by (its cpu_us_per_op is 0).
  const double per_op = num_or(find(cpu, "cpu_us_per_op"), 0);
  out += per_op > 0 ? strf(", %.2f us per %s\n", per_op, op.one) : "\n";
  std::string by_class;
  for (const char* c : kClasses) {
    const double pct = num_or(find(find(cpu, "by_class_pct"), c), 0);
    if (pct > 0) by_class += strf("%s%s %.1f%%", by_class.empty() ? "" : ", ", c, pct);
  }
  out += strf("%-10s by class: %s\n", "", by_class.empty() ? "none" : by_class.c_str());
  out += strf("%-10s IRQs %lld from NICs (%lld in all), %.2f packets per IRQ; %lld NAPI polls (%lld full)\n", "",
              int_or(find(h, "irqs"), 0), int_or(find(h, "irqs_all"), 0), num_or(find(h, "packets_per_irq"), 0),
              int_or(find(h, "napi_polls"), 0), int_or(find(h, "napi_full_polls"), 0));
  out += strf("%-10s drops %lld ring, %lld backlog; %lld time squeezes; %lld packets steered by RPS\n", "",
              int_or(find(h, "ring_drops"), 0), int_or(find(h, "backlog_drops"), 0), int_or(find(h, "time_squeeze"), 0),
              int_or(find(h, "received_rps"), 0));
  const Json* tcp = find(h, "tcp");
  const long long retrans = int_or(find(tcp, "retrans_segs"), 0), probes = int_or(find(tcp, "loss_probes"), 0),
                  rtos = int_or(find(tcp, "timeouts"), 0), tsq = int_or(find(tcp, "tsq_throttled"), 0),
                  switch_drops = int_or(find(h, "switch_drops"), 0);
  if (retrans || probes || rtos || tsq || switch_drops)
    out += strf(
        "%-10s TCP %lld segments retransmitted (%lld fast, %lld loss probes, %lld RTOs); %lld TSQ throttles; "
        "%lld switch drops\n",
        "", retrans, int_or(find(tcp, "fast_retrans"), 0), probes, rtos, tsq, switch_drops);
  out += strf("%-10s %lld context switches, %lld wakeups, %lld migrations; PSI cpu some %.1f%%\n", "",
              int_or(find(h, "context_switches"), 0), int_or(find(h, "wakeups"), 0), int_or(find(h, "migrations"), 0),
              num_or(find(h, "psi_cpu_some_pct"), 0));
  // Where the scheduler put the workload's threads when they woke (ttwu_stat() and wake_affine()).
  const Json* tw = find(h, "thread_wakeups");
  const long long woken = int_or(find(tw, "count"), 0);
  if (woken > 0) {
    const auto share = [&](const char* key) {
      return 100.0 * static_cast<double>(int_or(find(tw, key), 0)) / static_cast<double>(woken);
    };
    out += strf(
        "%-10s threads woken %lld times: %.1f%% onto the waking CPU, %.1f%% pulled by wake_affine, %.1f%% "
        "moved, %.1f%% onto softirq or NAPI work\n",
        "", woken, share("local"), share("affine"), share("migrate"), share("onto_softirq"));
  }
}

}  // namespace

std::string format_summary(const Json& result) {
  const Json* context = find(&result, "context");
  const Json* scenario = find(&result, "scenario");
  const Json* workload = find(&result, "workload");
  const Json* summary = find(&result, "summary");
  const std::string type = scalar_text(find(workload, "type"));
  std::string out;

  // What ran.
  out += strf("napisim %s (%s): scenario %s, seed %s", scalar_text(find(context, "napisim_version")).c_str(),
              scalar_text(find(context, "git_sha")).c_str(), scalar_text(find(context, "scenario")).c_str(),
              scalar_text(find(context, "seed")).c_str());
  if (int_or(find(context, "run"), 0) != 0) out += ", run " + scalar_text(find(context, "run"));
  out += "\n";
  // The workload's parameters, wrapped at 100 columns under the label.
  std::string line = strf("%-10s %s", "workload", type.c_str());
  bool first = true;
  if (workload != nullptr && workload->is_object()) {
    for (const auto& [k, v] : workload->items()) {
      if (k == "type" || k == "test_length" || k == "percentiles") continue;
      const std::string item = k + "=" + param_text(v);
      if (!first && line.size() + item.size() + 2 > 100) {
        out += line + ",\n";
        line = strf("%-10s %s", "", item.c_str());
      } else {
        line += first ? ": " : ", ";
        line += item;
      }
      first = false;
    }
  }
  out += line + "\n";
  out += strf("%-10s %g s measured after %g s of warm-up (simulated time)\n", "window",
              num_or(find(summary, "measured_s"), 0), num_or(find(scenario, "warmup_s"), 0));
  if (const Json* changes = find(scenario, "changes"); changes != nullptr && changes->is_array() && !changes->empty()) {
    std::string at;
    for (const Json& c : *changes)
      at += strf("%s%g s", at.empty() ? "" : ", ", num_or(find(&c, "at_s"), 0));
    out += strf("%-10s %zu at run time: at %s\n", "changes", changes->size(), at.c_str());
  }
  std::vector<const Json*> server_nics;
  if (const Json* nics = find(scenario, "nics"); nics != nullptr && nics->is_array())
    for (const Json& n : *nics)
      server_nics.push_back(&n);
  const Json* platform = find(scenario, "platform");
  const Json* server_name = find(platform, "server");
  const std::string server =
      server_name != nullptr && server_name->is_string() ? server_name->get<std::string>() : "server";
  out += strf("%-10s %s\n", server.c_str(),
              host_text(find(scenario, "topology"), server_nics, find(scenario, "models")).c_str());
  std::vector<std::string> linux_clients;
  if (const Json* clients = find(platform, "clients"); clients != nullptr && clients->is_array()) {
    for (const Json& c : *clients) {
      const std::string name = scalar_text(find(&c, "name"));
      if (scalar_text(find(&c, "stack")) == "linux") {
        linux_clients.push_back(name);
        out += strf("%-10s Linux client host: %s\n", name.c_str(),
                    host_text(find(&c, "topology"), {find(&c, "host_nic")}, find(&c, "models")).c_str());
      } else {
        out += strf("%-10s idealised client: a fixed turnaround per request, no simulated host\n", name.c_str());
      }
    }
  }

  // What it measured.
  const Op op = type == "mutilate"                   ? Op{"query", "queries"}
                : (type == "app" || type == "trace") ? Op{"request", "requests"}
                                                     : Op{"transaction", "transactions"};
  out += "\n";
  const Json* units = find(summary, "throughput_units");
  if (units != nullptr && units->is_string()) {
    out += strf("%-10s %.2f %s\n", "throughput", num_or(find(summary, "throughput"), 0),
                units->get<std::string>().c_str());
  } else {
    out += strf("%-10s %.0f %s/s (%lld in the window)\n", "throughput", num_or(find(summary, "throughput"), 0), op.many,
                int_or(find(summary, "transactions"), 0));
  }
  if (const Json* lat = find(summary, "latency_ns"); lat != nullptr && int_or(find(lat, "count"), 0) > 0) {
    out += strf("%-10s avg %.1f", "latency", num_or(find(lat, "mean"), 0) / 1e3);
    for (const char* p : {"p50", "p90", "p99", "p99.9", "p99.99", "max"})
      if (is_num(find(lat, p))) out += strf("  %s %.1f", p, num_or(find(lat, p), 0) / 1e3);
    out += " us\n";
  }
  if (const Json* fl = find(summary, "flows"); fl != nullptr && int_or(find(fl, "count"), 0) > 0) {
    // tcp_rr's per-flow view: a body made by some flows being slower shows as a spread here.
    const Json* tx = find(fl, "transactions");
    const Json* ml = find(fl, "mean_latency_ns");
    out += strf(
        "%-10s %lld: transactions p10 %.0f p50 %.0f p90 %.0f; mean latency p10 %.1f p50 %.1f p90 %.1f us; "
        "Jain %.3f\n",
        "flows", int_or(find(fl, "count"), 0), num_or(find(tx, "p10"), 0), num_or(find(tx, "p50"), 0),
        num_or(find(tx, "p90"), 0), num_or(find(ml, "p10"), 0) / 1e3, num_or(find(ml, "p50"), 0) / 1e3,
        num_or(find(ml, "p90"), 0) / 1e3, num_or(find(fl, "jain_index"), 0));
    // Which grouping of the flows their mean latencies' spread lies between.
    if (const Json* by = find(fl, "mean_latency_explained_by"); by != nullptr && by->is_object() && !by->empty()) {
      out += strf("%-10s mean latency spread between flows' groups:", "");
      const char* sep = " ";
      for (const auto& [name, share] : by->items()) {
        out += strf("%s%s %.2f", sep, name.c_str(), share.is_number() ? share.get<double>() : 0.0);
        sep = ", ";
      }
      out += "\n";
    }
  }
  if (type == "app" || type == "trace") {
    const Json* app = find(summary, "app");
    out += strf("%-10s %.0f requests/s offered, %lld unsent; %.2f%% overloaded (waited > %g us to start)\n", "offered",
                num_or(find(summary, "offered_rps"), 0), int_or(find(summary, "unsent_requests"), 0),
                num_or(find(summary, "app_overload_pct"), 0), num_or(find(app, "overload_threshold_us"), 0));
  } else if (type == "mutilate") {
    const Json* m = find(summary, "mutilate");
    out += strf("%-10s %lld queries/s target; %lld misses, %lld skipped\n", "offered", int_or(find(m, "target_qps"), 0),
                int_or(find(m, "misses"), 0), int_or(find(m, "skips"), 0));
  } else if (type == "super_netperf") {
    out += strf("%-10s %.0f to %.0f transactions/s per instance\n", "instances",
                num_or(find(summary, "instance_rate_min"), 0), num_or(find(summary, "instance_rate_max"), 0));
  } else if (type == "stream") {
    out += strf("%-10s %lld bytes\n", "received", int_or(find(summary, "bytes_received"), 0));
  } else if (type == "xsk_rr") {
    const Json* x = find(summary, "xsk");
    out += strf("%-10s %lld RX, %lld TX, %lld RX ring drops, %lld empty fill ring, %lld syscalls, %lld driver kicks\n",
                "xsk", int_or(find(x, "rx_packets"), 0), int_or(find(x, "tx_packets"), 0),
                int_or(find(x, "rx_dropped"), 0), int_or(find(x, "fill_ring_empty"), 0), int_or(find(x, "syscalls"), 0),
                int_or(find(x, "driver_wakeups"), 0));
  }
  if (const Json* srv = find(summary, "server"); srv != nullptr && (type == "app" || type == "trace")) {
    out += strf("%-10s %s, %lld accepts, %lld listen overflows, %lld listener wakeups, %lld futex wakes\n", "server",
                find(srv, "server_arch") && find(srv, "server_arch")->is_string()
                    ? find(srv, "server_arch")->get<std::string>().c_str()
                    : "",
                int_or(find(srv, "accepts"), 0), int_or(find(srv, "listen_overflows"), 0),
                int_or(find(srv, "listen_wakeups"), 0), int_or(find(srv, "futex_wakes"), 0));
  }
  host_results(out, server, summary, op);
  for (const std::string& name : linux_clients)
    host_results(out, name, find(find(&result, "clients"), name), op);
  return out;
}

std::string format_neper(const Json& result) {
  const Json* workload = find(&result, "workload");
  const Json* summary = find(&result, "summary");
  const Json* lat = find(summary, "latency_ns");
  const std::vector<double> percentiles = neper_percentiles(workload);
  std::set<std::string> printed;  // flattened summary keys consumed by neper's own lines
  std::string out;

  // 1. flags_parser_dump(): VERSION, then the flags.
  put(out, "VERSION", "1.1.0");
  for (const NeperFlag& f : kNeperTcpRrFlags) {
    put(out, f.name, neper_flag_value(f, workload, percentiles));
  }

  // 2. run_main_thread(): printed before the run starts.
  const double test_length = num_or(find(workload, "test_length"), 10);
  if (test_length > 0) {
    put(out, "total_run_time", test_length_text(test_length));
  } else {
    put(out, "total_transactions", test_length_text(-test_length));
  }

  // 3. After the run: control-plane incidents, start time, rusage pairs (no host process: zeros).
  put(out, "invalid_secret_count", "0");
  const long long time_start_ns = int_or(find(summary, "time_start_ns"), 0);
  printed.insert("time_start_ns");
  put(out, "time_start", timespec_text(time_start_ns));
  for (const char* key : {"utime", "stime"}) {
    put(out, std::string(key) + "_start", "0.000000");
    put(out, std::string(key) + "_end", "0.000000");
  }
  for (const char* key : {"maxrss", "minflt", "majflt", "nvcsw", "nivcsw"}) {
    put(out, std::string(key) + "_start", "0");
    put(out, std::string(key) + "_end", "0");
  }

  // 4.-7. rr_report_stats() and neper_histo_print(): latencies in seconds.
  const Json* transactions = find(summary, "transactions");
  if (transactions == nullptr) {
    transactions = find(lat, "count");
  }
  printed.insert("transactions");
  put(out, "num_transactions", strf("%lld", int_or(transactions, 0)));
  for (const char* key : {"min", "max", "mean", "stddev"}) {
    put(out, std::string("latency_") + key, seconds_9(num_or(find(lat, key), 0)));
    printed.insert(std::string("latency_ns.") + key);
  }
  for (const double p : percentiles) {
    const std::string key = std::string("p").append(pct_g(p));
    put(out, "latency_" + key, seconds_9(num_or(find(lat, key), 0)));
    printed.insert("latency_ns." + key);
  }

  // 8. neper_stat_print(): snapshots, end time, steadiness.
  put(out, "num_samples", strf("%lld", int_or(find(summary, "num_samples"), 0)));
  printed.insert("num_samples");
  long long time_end_ns = time_start_ns + std::llround(num_or(find(summary, "measured_s"), 0) * 1e9);
  time_end_ns = int_or(find(summary, "time_end_ns"), time_end_ns);
  printed.insert("time_end_ns");
  put(out, "time_end", timespec_text(time_end_ns));
  put(out, "correlation_coefficient", strf("%.2f", num_or(find(summary, "correlation_coefficient"), 1.0)));
  printed.insert("correlation_coefficient");

  // 9.-10. throughput, then both sides' integer rates (equal in a closed-loop simulation).
  const double throughput = num_or(find(summary, "throughput"), 0);
  printed.insert("throughput");
  put(out, "throughput", strf("%.2f", throughput));
  put(out, "local_throughput", strf("%lld", int_or(find(summary, "throughput"), 0)));
  put(out, "remote_throughput", strf("%lld", int_or(find(summary, "throughput"), 0)));

  // napisim's own lines: every summary scalar neper has no key for (cpu/op, CPU by class, IRQs, drops...).
  for (const auto& [key, value] : summary_leaves(result)) {
    if (printed.count(key) != 0) {
      continue;
    }
    std::string text = scalar_text(value);
    std::replace(text.begin(), text.end(), '\n', ' ');
    put(out, "napisim_" + key, text);
  }
  return out;
}

std::string format_netperf(const Json& result, std::string_view style) {
  const Json* workload = find(&result, "workload");
  const Json* summary = find(&result, "summary");
  const double thruput = num_or(find(summary, "throughput"), 0);
  std::string out = netperf_banner(workload);

  const Json* type = find(workload, "type");
  if (style == "legacy" && type != nullptr && type->is_string() && type->get<std::string>() == "stream") {
    // nettest_omni.c send_tcp_stream(), verbosity 1, no CPU measurement: tput_title with
    // format_units() "10^6bits", then tput_fmt_1 (remote recv socket, local send socket, send size).
    out +=
        "Recv   Send    Send                          \n"
        "Socket Socket  Message  Elapsed              \n"
        "Size   Size    Size     Time     Throughput  \n"
        "bytes  bytes   bytes    secs.    10^6bits/sec  \n\n";
    out += strf("%6lld %6lld %6lld    %-6.2f   %7.2f   %s\n", int_or(find(workload, "recv_socket_size"), 131072),
                int_or(find(workload, "send_socket_size"), 16384), int_or(find(workload, "send_size"), 16384),
                num_or(find(summary, "measured_s"), 0), thruput, "");
    return out;
  }
  if (style == "legacy") {
    // send_tcp_rr(), verbosity 1, no CPU measurement, libfmt 'x'. Socket sizes are the Linux defaults
    // netperf reports (SO_SNDBUF 16384 / SO_RCVBUF 87380 on both sides); titles keep their trailing blanks.
    out +=
        "Local /Remote\n"
        "Socket Size   Request  Resp.   Elapsed  Trans.\n"
        "Send   Recv   Size     Size    Time     Rate         \n"
        "bytes  Bytes  bytes    bytes   secs.    per sec   \n\n";
    out += strf("%-6d %-6d %-6lld   %-6lld  %-6.2f   %7.2f   %s\n", 16384, 87380,
                int_or(find(workload, "request_size"), 1), int_or(find(workload, "response_size"), 1),
                num_or(find(summary, "measured_s"), 0), thruput, "");
    out += strf("%-6d %-6d\n", 16384, 87380);
    return out;
  }

  const NetperfLatency l = netperf_latency(summary);
  if (style == "omni-csv") {
    // print_omni_csv(): each selector's header lines joined by spaces, commas between selectors.
    out +=
        "Throughput,Throughput Units,Minimum Latency Microseconds,Maximum Latency Microseconds,"
        "50th Percentile Latency Microseconds,90th Percentile Latency Microseconds,"
        "99th Percentile Latency Microseconds,Mean Latency Microseconds,Stddev Latency Microseconds\n";
    out += strf("%.2f,%s/s,%lld,%lld,%lld,%lld,%lld,%.2f,%.2f\n", thruput, "Trans", l.min_us, l.max_us, l.p50_us,
                l.p90_us, l.p99_us, l.mean_us, l.stddev_us);
    return out;
  }
  if (style == "omni-keyval") {
    // print_omni_keyword(): SELECTOR=value.
    out += strf("THROUGHPUT=%.2f\n", thruput);
    out += "THROUGHPUT_UNITS=Trans/s\n";
    out += strf("MIN_LATENCY=%lld\nMAX_LATENCY=%lld\n", l.min_us, l.max_us);
    out += strf("P50_LATENCY=%lld\nP90_LATENCY=%lld\nP99_LATENCY=%lld\n", l.p50_us, l.p90_us, l.p99_us);
    out += strf("MEAN_LATENCY=%.2f\nSTDDEV_LATENCY=%.2f\n", l.mean_us, l.stddev_us);
    return out;
  }
  throw ConfigError(
      "", "unknown netperf output style '" + std::string(style) + "' (expected legacy, omni-csv or omni-keyval)");
}

std::string format_mutilate(const Json& result) {
  const Json* summary = find(&result, "summary");
  const Json* m = find(summary, "mutilate");
  std::string out = strf("%-7s %7s %7s %7s %7s %7s %7s %7s %7s %7s\n", "#type", "avg", "std", "min", "5th", "10th",
                         "50th", "90th", "95th", "99th");
  for (const char* row : {"read", "update", "op_q"}) {
    const Json* r = find(m, row);
    const char* keys[] = {"avg", "std", "min", "p5", "p10", "p50", "p90", "p95", "p99"};
    out += strf("%-7s", row);
    for (const char* k : keys)
      out += strf(" %7.1f", num_or(find(r, k), 0.0));
    out += "\n";
  }
  const long long gets = int_or(find(m, "gets"), 0), sets = int_or(find(m, "sets"), 0);
  const long long total = gets + sets;
  const double secs = num_or(find(m, "seconds"), 0.0);
  out += strf("\nTotal QPS = %.1f (%lld / %.1fs)\n\n", secs > 0 ? static_cast<double>(total) / secs : 0.0, total, secs);
  const long long misses = int_or(find(m, "misses"), 0), skips = int_or(find(m, "skips"), 0);
  out += strf("Misses = %lld (%.1f%%)\n", misses,
              gets > 0 ? 100.0 * static_cast<double>(misses) / static_cast<double>(gets) : 0.0);
  out += strf("Skipped TXs = %lld (%.1f%%)\n\n", skips,
              total > 0 ? 100.0 * static_cast<double>(skips) / static_cast<double>(total) : 0.0);
  const long long rx = int_or(find(m, "rx_bytes"), 0), tx = int_or(find(m, "tx_bytes"), 0);
  const double mb = secs > 0 ? 1024.0 * 1024.0 * secs : 1.0;
  out += strf("RX %10lld bytes : %6.1f MB/s\n", rx, static_cast<double>(rx) / mb);
  out += strf("TX %10lld bytes : %6.1f MB/s\n", tx, static_cast<double>(tx) / mb);
  out += strf("\nnapisim_target_qps=%lld\n", int_or(find(m, "target_qps"), 0));
  out += strf("napisim_cpu_report_cpus=%s\n", find(m, "cpu_report_cpus") && find(m, "cpu_report_cpus")->is_string()
                                                  ? find(m, "cpu_report_cpus")->get<std::string>().c_str()
                                                  : "");
  out += strf("napisim_cpu_pct=%.1f\n", num_or(find(m, "cpu_pct"), 0.0));
  out += strf("napisim_cpu_ns_per_query=%.0f\n", num_or(find(m, "cpu_ns_per_query"), 0.0));
  out += strf("napisim_cycles_per_query=%.0f\n", num_or(find(m, "cycles_per_query"), 0.0));
  out += strf("napisim_cpq_ghz=%.2f\n", num_or(find(m, "cpq_ghz"), 0.0));
  out += strf("napisim_irqs=%lld\n", int_or(find(summary, "irqs"), 0));
  out += strf("napisim_irqs_all=%lld\n", int_or(find(summary, "irqs_all"), 0));
  out += strf("napisim_schedule_slip_us_avg=%.1f\n", num_or(find(m, "schedule_slip_us_avg"), 0.0));
  return out;
}

std::string format_breakdown(const Json& result) {
  const Json* b = find(&result, "latency_breakdown");
  const Json* stages = find(b, "stages");
  const Json* bands = find(b, "bands");
  if (!stages || !bands || !stages->is_array() || !bands->is_array()) return "";
  const Json* splits = find(b, "splits");
  std::size_t width = 5;
  for (const Json& s : *stages)
    width = std::max(width, s.get<std::string>().size());
  if (splits && splits->is_array())
    for (const Json& s : *splits)
      width = std::max(width, s.get<std::string>().size());
  std::string out =
      "# latency by stage: mean us per request of each percentile band (run --explain); a waiting\n"
      "# stage's rows <stage>[<class>] split it by what its CPU did meanwhile (self: the waiting thread)\n";
  auto row = [&](const std::string& label, auto cell) {
    std::string line = strf("%-*s", static_cast<int>(width), label.c_str());
    for (const Json& band : *bands)
      line += cell(band);
    out += line + "\n";
  };
  row("stage", [](const Json& band) { return strf(" %12s", band.value("band", "").c_str()); });
  row("requests", [](const Json& band) { return strf(" %12.0f", num_or(find(&band, "requests"), 0.0)); });
  // A row for each stage any band has time in; under it, its sub-rows any band has 0.1 us in.
  auto rows = [&](const std::string& name, const char* key, double min_ns) {
    bool any = false;
    for (const Json& band : *bands)
      any = any || std::abs(num_or(find(find(&band, key), name), 0.0)) >= min_ns;
    if (!any) return;
    row(name,
        [&name, key](const Json& band) { return strf(" %12.1f", num_or(find(find(&band, key), name), 0.0) / 1000.0); });
  };
  for (const Json& s : *stages) {
    const std::string name = s.get<std::string>();
    rows(name, "stage_ns", 1e-9);
    if (!splits || !splits->is_array()) continue;
    for (const Json& sub : *splits) {
      const std::string sn = sub.get<std::string>();
      if (sn.compare(0, name.size() + 1, name + "[") == 0) rows(sn, "split_ns", 50.0);
    }
  }
  row("latency", [](const Json& band) { return strf(" %12.1f", num_or(find(&band, "latency_ns"), 0.0) / 1000.0); });
  return out;
}

std::string format_intervals(const Json& result) {
  static constexpr const char* kClasses[] = {"user",    "system",    "softirq",  "ksoftirqd",
                                             "kthread", "busy_poll", "busy_spin"};
  std::string out = "#  t_end_s     trans/s   p50_us   p99_us p99.9_us  busy%";
  for (const char* c : kClasses) {
    char h[32];
    std::snprintf(h, sizeof h, " %9s%%", c);
    out += h;
  }
  out += " ring_drops\n";
  const Json* ivs = result.contains("intervals") && result["intervals"].is_array() ? &result["intervals"] : nullptr;
  if (!ivs) return out;
  auto num = [](const Json& j, const char* k) {
    return j.is_object() && j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0;
  };
  for (const Json& iv : *ivs) {
    const Json& lat = iv.contains("latency_ns") ? iv["latency_ns"] : Json::object();
    const Json& cpu = iv.contains("cpu") ? iv["cpu"] : Json::object();
    const Json& by = cpu.is_object() && cpu.contains("by_class_pct") ? cpu["by_class_pct"] : Json::object();
    char line[256];
    std::snprintf(line, sizeof line, "%10.4f %11.0f %8.1f %8.1f %8.1f %6.1f", num(iv, "t_end_s"), num(iv, "throughput"),
                  num(lat, "p50") / 1000.0, num(lat, "p99") / 1000.0, num(lat, "p99.9") / 1000.0, num(cpu, "busy_pct"));
    out += line;
    for (const char* c : kClasses) {
      std::snprintf(line, sizeof line, " %10.1f", num(by, c));
      out += line;
    }
    std::snprintf(line, sizeof line, " %10.0f\n", num(iv, "ring_drops"));
    out += line;
  }
  return out;
}

}  // namespace napisim::output
