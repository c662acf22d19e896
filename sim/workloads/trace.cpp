#include "sim/workloads/trace.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

namespace napisim {

namespace {

std::vector<std::string> split_fields(const std::string& line) {
  // Comma separated when the line has a comma (each field trimmed), else whitespace separated.
  std::vector<std::string> out;
  const bool commas = line.find(',') != std::string::npos;
  std::string cur;
  auto flush = [&](bool keep_empty) {
    const std::size_t b = cur.find_first_not_of(" \t\r");
    const std::size_t e = cur.find_last_not_of(" \t\r");
    std::string f = b == std::string::npos ? std::string() : cur.substr(b, e - b + 1);
    if (keep_empty || !f.empty()) out.push_back(f);
    cur.clear();
  };
  for (const char c : line) {
    if (commas ? c == ',' : (c == ' ' || c == '\t' || c == '\r')) {
      flush(commas);
      continue;
    }
    cur.push_back(c);
  }
  flush(commas);
  return out;
}

struct LineError {
  const std::string& ptr;
  const std::string& file;
  [[noreturn]] void operator()(std::size_t line, std::size_t col, const std::string& name,
                               const std::string& msg) const {
    std::string where = file + " line " + std::to_string(line);
    if (col > 0) where += ", column " + std::to_string(col) + (name.empty() ? "" : " (" + name + ")");
    throw ConfigError(ptr, where + ": " + msg);
  }
};

double parse_double(const std::string& tok, bool* ok) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(tok.c_str(), &end);
  *ok = !tok.empty() && end == tok.c_str() + tok.size() && errno == 0 && std::isfinite(v);
  return v;
}

}  // namespace

std::vector<TraceRecord> load_trace(const TraceParams& p, const std::string& path, std::int64_t* num_flows) {
  const std::string ptr = path + "/file";
  if (p.file.empty()) throw ConfigError(ptr, "expected a trace file path");
  std::ifstream in(p.file);
  if (!in) throw ConfigError(ptr, "cannot read trace file '" + p.file + "'");
  const LineError err{ptr, p.file};
  enum Col { kTime, kFlow, kReq, kResp, kService, kThread, kRtt, kNone };
  std::vector<Col> cols;
  std::vector<std::string> names;
  bool neper = false;
  std::map<std::pair<std::int64_t, std::int64_t>, std::int32_t> flow_ids;
  std::vector<TraceRecord> out;
  std::string line;
  std::size_t lineno = 0;
  Nanos last_t = std::numeric_limits<Nanos>::min();
  while (std::getline(in, line)) {
    ++lineno;
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::vector<std::string> f = split_fields(line);
    if (cols.empty()) {
      // The header.
      names = f;
      neper = names == std::vector<std::string>{"timestamp", "thread_id", "flow_id", "rtt"};
      if (p.format == "neper" && !neper)
        err(lineno, 0, "", "expected neper's --log-rtt header \"timestamp thread_id flow_id rtt\"");
      if (p.format == "csv") neper = false;
      for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string& n = names[i];
        Col c = kNone;
        if (n == "timestamp")
          c = kTime;
        else if (neper && n == "thread_id")
          c = kThread;
        else if (neper && n == "flow_id")
          c = kFlow;
        else if (neper && n == "rtt")
          c = kRtt;
        else if (!neper && n == "flow")
          c = kFlow;
        else if (!neper && n == "request_size")
          c = kReq;
        else if (!neper && n == "response_size")
          c = kResp;
        else if (!neper && n == "service_ns")
          c = kService;
        if (c == kNone) {
          bool numeric = false;
          (void)parse_double(n, &numeric);
          err(lineno, i + 1, "",
              numeric ? "expected a header line naming the columns (timestamp, flow, request_size, "
                        "response_size, service_ns), got a number '" +
                            n + "'"
                      : "unknown column '" + n +
                            "'; expected timestamp, flow, request_size, "
                            "response_size, service_ns (or neper's timestamp thread_id flow_id rtt)");
        }
        if (std::find(cols.begin(), cols.end(), c) != cols.end()) err(lineno, i + 1, n, "column named twice");
        cols.push_back(c);
      }
      if (std::find(cols.begin(), cols.end(), kTime) == cols.end()) err(lineno, 0, "", "expected a timestamp column");
      continue;
    }
    if (f.size() != cols.size())
      err(lineno, 0, "", "expected " + std::to_string(cols.size()) + " columns, got " + std::to_string(f.size()));
    TraceRecord r;
    r.request_size = static_cast<std::uint32_t>(p.request_size);
    r.response_size = static_cast<std::uint32_t>(p.response_size);
    double ts = 0, rtt = 0;
    std::int64_t flow = 0, thread = 0;
    for (std::size_t i = 0; i < f.size(); ++i) {
      bool ok = false;
      const double v = parse_double(f[i], &ok);
      if (!ok) err(lineno, i + 1, names[i], "expected a number, got '" + f[i] + "'");
      auto integer = [&](double lo, double hi) {
        if (v != std::floor(v) || v < lo || v > hi)
          err(lineno, i + 1, names[i],
              "expected an integer in [" + std::to_string(static_cast<long long>(lo)) + ", " +
                  std::to_string(static_cast<long long>(hi)) + "], got '" + f[i] + "'");
        return static_cast<std::int64_t>(v);
      };
      switch (cols[i]) {
        case kTime:
          if (v < 0 || v > 1e6) err(lineno, i + 1, names[i], "expected seconds in [0, 1e6], got '" + f[i] + "'");
          ts = v;
          break;
        case kRtt:
          if (v < 0 || v > 1e6) err(lineno, i + 1, names[i], "expected seconds >= 0, got '" + f[i] + "'");
          rtt = v;
          break;
        case kFlow:
          flow = integer(-9e15, 9e15);
          break;
        case kThread:
          thread = integer(-9e15, 9e15);
          break;
        case kReq:
          r.request_size = static_cast<std::uint32_t>(integer(1, 1e9));
          break;
        case kResp:
          r.response_size = static_cast<std::uint32_t>(integer(1, 1e9));
          break;
        case kService:
          r.service_ns = integer(0, 1e12);
          break;
        case kNone:
          break;
      }
    }
    // neper logs completions: the request left rtt earlier.
    r.t = static_cast<Nanos>(std::llround((ts - rtt) * 1e9));
    if (!neper && r.t < last_t)
      err(lineno, 1, "timestamp", "expected timestamps in non-decreasing order, got " + f[0] + " after a later one");
    last_t = r.t;
    const auto key = std::make_pair(thread, flow);
    auto it = flow_ids.find(key);
    if (it == flow_ids.end()) it = flow_ids.emplace(key, static_cast<std::int32_t>(flow_ids.size())).first;
    r.flow = it->second;
    out.push_back(r);
  }
  if (out.empty()) throw ConfigError(ptr, p.file + ": expected at least one request after the header");
  if (neper)
    std::stable_sort(out.begin(), out.end(), [](const TraceRecord& a, const TraceRecord& b) { return a.t < b.t; });
  const Nanos t0 = out.front().t;
  for (TraceRecord& r : out)
    r.t -= t0;
  *num_flows = static_cast<std::int64_t>(flow_ids.size());
  return out;
}

namespace {
RpcLoad trace_load(const TraceParams& p, const std::string& path) {
  RpcLoad l;
  l.kind = RpcLoad::Kind::kTrace;
  l.trace = load_trace(p, path, &l.num_flows);
  l.rate_scale = p.rate_scale;
  l.repeat = p.repeat;
  return l;
}
}  // namespace

Trace::Trace(const TraceParams& p, const std::string& path) : RpcServer(p, trace_load(p, path), "trace", path), p_(p) {}

void Trace::describe(Json& workload) const {
  workload["file"] = p_.file;
  workload["rate_scale"] = p_.rate_scale;
  workload["repeat"] = p_.repeat;
}

Json resolve_trace_params(const Json& params, const std::string& path, const std::string& base_dir) {
  TraceParams p = parse_params<TraceParams>(params, path);
  if (!p.file.empty()) {
    std::filesystem::path f(p.file);
    if (f.is_relative()) f = std::filesystem::path(base_dir) / f;
    p.file = f.lexically_normal().string();
  }
  std::int64_t flows = 0;
  (void)load_trace(p, path, &flows);
  p.service_ns = Distribution::parse(p.service_ns, path + "/service_ns").to_json();
  p.block_ns = Distribution::parse(p.block_ns, path + "/block_ns").to_json();
  return params_to_json(p);
}

std::string generate_trace_csv(const Json& spec) {
  const TraceGenParams p = parse_params<TraceGenParams>(spec, "");
  const Distribution gaps = Distribution::parse(p.interarrival, "/interarrival");
  const double mean = gaps.mean();
  if (!(mean > 0) || !std::isfinite(mean))
    throw ConfigError("/interarrival", "expected a distribution with a finite mean > 0");
  const double scale = 1.0 / p.rate_rps / mean;  // seconds per unit of the shape
  // The trace is built in memory: bound it (1e8 requests is a CSV of a few GB).
  if (p.duration_s * p.rate_rps > 1e8)
    throw ConfigError(
        "/rate_rps", "expected duration_s x rate_rps <= 1e8 requests, got " + format_number(p.duration_s * p.rate_rps));
  const Distribution req = Distribution::parse(p.request_size, "/request_size");
  const Distribution resp = Distribution::parse(p.response_size, "/response_size");
  const bool with_service = !p.service_ns.is_null();
  const Distribution service = with_service ? Distribution::parse(p.service_ns, "/service_ns") : Distribution();
  Rng rng = RngRoot(static_cast<std::uint64_t>(p.seed), 0).stream("trace-gen");
  std::string out = with_service ? "timestamp,flow,request_size,response_size,service_ns\n"
                                 : "timestamp,flow,request_size,response_size\n";
  char buf[128];
  for (double t = 0; t < p.duration_s; t += gaps.sample(rng) * scale) {
    const auto flow = static_cast<long long>(rng.uniform_int(static_cast<std::uint64_t>(p.flows)));
    const long long q = std::max(1LL, std::llround(req.sample(rng)));
    const long long r = std::max(1LL, std::llround(resp.sample(rng)));
    int n = std::snprintf(buf, sizeof buf, "%.9f,%lld,%lld,%lld", t, flow, q, r);
    if (with_service)
      n += std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), ",%lld", std::llround(service.sample(rng)));
    out.append(buf, static_cast<std::size_t>(n));
    out.push_back('\n');
  }
  return out;
}

}  // namespace napisim
