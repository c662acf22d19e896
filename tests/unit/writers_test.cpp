// Tests for the result writers (sim/output/writers.hpp): atomic writes, JSON/CSV, neper and netperf text.
#include "sim/output/writers.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

namespace napisim::output {
namespace {

// ---------------------------------------------------------------------------------------------------
// helpers

class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/tmp/napisim_writers_test.XXXXXX";
    const char* p = ::mkdtemp(tmpl.data());
    if (p == nullptr) {
      throw std::runtime_error("mkdtemp failed");
    }
    path_ = p;
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    return names;
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") {
      names.push_back(n);
    }
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    lines.push_back(line);
  }
  return lines;
}

/// RFC 4180 field split of one line.
std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::size_t index_of(const std::vector<std::string>& v, const std::string& s) {
  return static_cast<std::size_t>(std::find(v.begin(), v.end(), s) - v.begin());
}

Json sample_result() {
  return Json::parse(R"({
    "context": {"napisim_version": "0.1.0", "git_sha": "abc", "scenario": "quickstart", "scenario_sha256": "00",
                "seed": 1, "run": 0},
    "workload": {"type": "tcp_rr", "num_flows": 1000, "num_threads": 8, "request_size": 1, "response_size": 1,
                 "test_length": 1.0, "percentiles": [99.9, 50, 90, 99, 50]},
    "summary": {"measured_s": 1.0, "transactions": 2100000, "throughput": 2100000.0,
                "latency_ns": {"count": 2100000, "min": 12345, "max": 950123, "mean": 25500.7, "stddev": 5250.25,
                               "p50": 20999, "p90": 30001, "p95": 35000, "p99": 40999, "p99.9": 123456,
                               "p99.99": 500000},
                "cpu": {"busy_pct": 87.5, "cpu_us_per_op": 3.25, "by_class_pct": {"hardirq": 2.5, "softirq": 30.0}},
                "irqs": 123456, "ring_drops": 0},
    "per_cpu": [], "histogram": {}, "fingerprint": "f00"
  })");
}

// The tcp_rr flags in REGISTRATION order (google/neper @ ea5890f define_all_flags.c: add_flags_common, _tcp
// without pin_numa (the Makefile defines NO_LIBNUMA), _rr, _tcp_rr). neper prints them reversed.
std::vector<std::string> registration_order() {
  // clang-format off
  return {
      // add_flags_common
      "magic", "maxevents", "num_flows", "num_threads", "num_clients", "listen_backlog", "suicide_length",
      "source_port", "stime_use_proc", "ipv4", "ipv6", "client", "debug", "dry_run", "pin_cpu", "logtostderr",
      "nolog", "nonblocking", "freebind", "interval", "max_pacing_rate", "local_hosts", "host", "control_port",
      "port", "all_samples", "time_wait", "iostat_ms", "wait_start",
      // add_flags_tcp
      "num_ports", "tcp_fastopen", "tcp_tx_delay", "no_delay", "congestion_control",
      // add_flags_rr
      "request_size", "response_size", "percentiles", "test_length", "buffer_size", "log_rtt",
      "logrtt_entries_per_flow", "mark",
      // add_flags_tcp_rr
      "delay", "async_connect", "reuseaddr", "noburst"};
  // clang-format on
}

// ---------------------------------------------------------------------------------------------------
// write_file_atomic

TEST(WriteFileAtomicTest, ReplacesContentAndLeavesNoTempFiles) {
  TempDir dir;
  const std::string path = dir.path() + "/result.json";
  write_file_atomic(path, "first version, longer than the second\n");
  EXPECT_EQ(read_file(path), "first version, longer than the second\n");
  write_file_atomic(path, "second\n");
  EXPECT_EQ(read_file(path), "second\n");
  write_file_atomic(path, "");
  EXPECT_EQ(read_file(path), "");
  EXPECT_EQ(list_dir(dir.path()), std::vector<std::string>{"result.json"});
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644U);
}

TEST(WriteFileAtomicTest, MissingDirectoryThrowsAndCreatesNothing) {
  TempDir dir;
  const std::string missing = dir.path() + "/no/such/dir";
  const std::string path = missing + "/out.csv";
  try {
    write_file_atomic(path, "x");
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(list_dir(dir.path()).empty());
}

TEST(WriteFileAtomicTest, FailedRenameRemovesTheTempFileAndKeepsTheTarget) {
  TempDir dir;
  const std::string target = dir.path() + "/target";
  ASSERT_EQ(::mkdir(target.c_str(), 0755), 0);  // a directory: renaming a file over it fails (EISDIR)
  write_file_atomic(target + "/keep", "kept");
  EXPECT_THROW(write_file_atomic(target, "new content"), std::runtime_error);
  EXPECT_EQ(list_dir(dir.path()), std::vector<std::string>{"target"});
  EXPECT_EQ(read_file(target + "/keep"), "kept");
}

// write_files_atomic: all of a set or none (the CLI's --out writes result.json, .csv and .txt).
TEST(WriteFilesAtomicTest, WritesEveryFileOfTheSet) {
  TempDir dir;
  write_files_atomic({{dir.path() + "/a.json", "A"}, {dir.path() + "/b.csv", "B"}});
  EXPECT_EQ(read_file(dir.path() + "/a.json"), "A");
  EXPECT_EQ(read_file(dir.path() + "/b.csv"), "B");
  EXPECT_EQ(list_dir(dir.path()), (std::vector<std::string>{"a.json", "b.csv"}));
}

TEST(WriteFilesAtomicTest, AFailedWriteLeavesEveryTargetAsItWas) {
  TempDir dir;
  const std::string a = dir.path() + "/a.json";
  write_file_atomic(a, "old A");
  // The second file cannot be written: the first, already written under its temp name, must not
  // replace the old A, and no temp file may be left.
  const std::string bad = dir.path() + "/no/such/dir/b.csv";
  try {
    write_files_atomic({{a, "new A"}, {bad, "B"}, {dir.path() + "/c.txt", "C"}});
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_file(a), "old A");
  EXPECT_EQ(list_dir(dir.path()), std::vector<std::string>{"a.json"});
}

// ---------------------------------------------------------------------------------------------------
// JSON and CSV

TEST(FormatJsonTest, IndentsAndEndsWithNewline) {
  const Json r = sample_result();
  const std::string s = format_json(r);
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s.back(), '\n');
  EXPECT_NE(s.find("\n  \"context\": {"), std::string::npos);
  EXPECT_EQ(Json::parse(s), r);
}

TEST(FormatCsvTest, HeaderAndValueCountsMatch) {
  Json r = sample_result();
  r["summary"]["note"] = "a,b \"c\"";
  const auto lines = lines_of(format_csv(r));
  ASSERT_EQ(lines.size(), 2U);
  const auto header = csv_split(lines[0]);
  const auto values = csv_split(lines[1]);
  ASSERT_EQ(header.size(), values.size());
  EXPECT_EQ(header[0], "scenario");
  EXPECT_EQ(header[1], "seed");
  EXPECT_EQ(header[2], "run");
  EXPECT_EQ(values[0], "quickstart");
  EXPECT_EQ(values[1], "1");
  EXPECT_EQ(values[2], "0");
  const std::size_t p99 = index_of(header, "latency_ns.p99");
  ASSERT_LT(p99, header.size());
  EXPECT_EQ(values[p99], "40999");
  const std::size_t sirq = index_of(header, "cpu.by_class_pct.softirq");
  ASSERT_LT(sirq, header.size());
  EXPECT_EQ(values[sirq], "30.0");
  EXPECT_EQ(values[index_of(header, "note")], "a,b \"c\"");
  EXPECT_NE(lines[1].find("\"a,b \"\"c\"\"\""), std::string::npos);
  // 3 context columns + every summary leaf.
  EXPECT_EQ(header.size(), 3U + 3 + 11 + 4 + 2 + 1);
}

TEST(FormatCsvTest, MissingSectionsGiveEmptyContextColumnsOnly) {
  const auto lines = lines_of(format_csv(Json::object()));
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[0], "scenario,seed,run");
  EXPECT_EQ(lines[1], ",,");
}

// ---------------------------------------------------------------------------------------------------
// neper

TEST(FormatNeperTest, FlagDumpIsReverseRegistrationOrder) {
  const auto lines = lines_of(format_neper(sample_result()));
  ASSERT_GT(lines.size(), registration_order().size() + 2);
  EXPECT_EQ(lines[0], "VERSION=1.1.0");
  EXPECT_EQ(lines[1], "noburst=0");
  const auto order = registration_order();
  std::vector<std::string> expected(order.rbegin(), order.rend());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const std::string& line = lines[1 + i];
    EXPECT_EQ(line.substr(0, line.find('=')), expected[i]) << "line " << 1 + i;
  }
  EXPECT_EQ(lines[expected.size()], "magic=42");
  EXPECT_EQ(lines[expected.size() + 1], "total_run_time=1");
}

TEST(FormatNeperTest, PrintsNeperKeysAndFormats) {
  const std::string out = format_neper(sample_result());
  const auto lines = lines_of(out);
  for (const auto& line : lines) {
    ASSERT_FALSE(line.empty());
    ASSERT_NE(line.find('='), std::string::npos) << line;
  }
  const auto has = [&](const std::string& l) { return std::find(lines.begin(), lines.end(), l) != lines.end(); };
  // flags from the workload, the rest neper's defaults
  EXPECT_TRUE(has("percentiles=50,90,99,99.9,"));  // sorted, de-duplicated, %g with trailing comma
  EXPECT_TRUE(has("num_flows=1000"));
  EXPECT_TRUE(has("num_threads=8"));
  EXPECT_TRUE(has("test_length=1"));
  EXPECT_TRUE(has("interval=1.000000"));
  EXPECT_TRUE(has("port=12867"));
  EXPECT_TRUE(has("host="));
  EXPECT_TRUE(has("client=1"));
  EXPECT_TRUE(has("source_port=-1"));
  // after-run block
  EXPECT_TRUE(has("invalid_secret_count=0"));
  EXPECT_TRUE(has("time_start=0.000000000"));
  EXPECT_TRUE(has("utime_start=0.000000"));
  EXPECT_TRUE(has("nivcsw_end=0"));
  EXPECT_TRUE(has("num_transactions=2100000"));
  EXPECT_TRUE(has("latency_min=0.000012345"));
  EXPECT_TRUE(has("latency_max=0.000950123"));
  EXPECT_TRUE(has("latency_mean=0.000025501"));  // 25500.7 ns rounds up at 9 decimals
  EXPECT_TRUE(has("latency_stddev=0.000005250"));
  EXPECT_TRUE(has("latency_p50=0.000020999"));
  EXPECT_TRUE(has("latency_p99.9=0.000123456"));
  EXPECT_FALSE(has("latency_p95=0.000035000"));  // not requested
  EXPECT_TRUE(has("time_end=1.000000000"));
  EXPECT_TRUE(has("correlation_coefficient=1.00"));
  EXPECT_TRUE(has("throughput=2100000.00"));
  EXPECT_TRUE(has("local_throughput=2100000"));
  EXPECT_TRUE(has("remote_throughput=2100000"));
  // napisim's extras: every summary scalar not printed above
  EXPECT_TRUE(has("napisim_cpu.busy_pct=87.5"));
  EXPECT_TRUE(has("napisim_cpu.cpu_us_per_op=3.25"));
  EXPECT_TRUE(has("napisim_cpu.by_class_pct.softirq=30.0"));
  EXPECT_TRUE(has("napisim_irqs=123456"));
  EXPECT_TRUE(has("napisim_latency_ns.p95=35000"));
  EXPECT_TRUE(has("napisim_measured_s=1.0"));
  EXPECT_EQ(out.find("napisim_throughput="), std::string::npos);
  EXPECT_EQ(out.find("napisim_latency_ns.p99="), std::string::npos);
  EXPECT_EQ(out.find("napisim_transactions="), std::string::npos);

  // Order of the fixed after-run keys.
  const std::vector<std::string> order = {"total_run_time",
                                          "invalid_secret_count",
                                          "time_start",
                                          "utime_start",
                                          "utime_end",
                                          "stime_start",
                                          "stime_end",
                                          "maxrss_start",
                                          "maxrss_end",
                                          "minflt_start",
                                          "minflt_end",
                                          "majflt_start",
                                          "majflt_end",
                                          "nvcsw_start",
                                          "nvcsw_end",
                                          "nivcsw_start",
                                          "nivcsw_end",
                                          "num_transactions",
                                          "latency_min",
                                          "latency_max",
                                          "latency_mean",
                                          "latency_stddev",
                                          "latency_p50",
                                          "latency_p90",
                                          "latency_p99",
                                          "latency_p99.9",
                                          "num_samples",
                                          "time_end",
                                          "correlation_coefficient",
                                          "throughput",
                                          "local_throughput",
                                          "remote_throughput"};
  const std::size_t first = registration_order().size() + 1;
  ASSERT_GT(lines.size(), first + order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(lines[first + i].substr(0, lines[first + i].find('=')), order[i]);
  }
  EXPECT_EQ(lines[first + order.size()].rfind("napisim_", 0), 0U);
}

TEST(FormatNeperTest, NegativeTestLengthPrintsTotalTransactions) {
  Json r = sample_result();
  r["workload"]["test_length"] = -5000;
  r["summary"]["time_start_ns"] = 1500000000;
  const auto lines = lines_of(format_neper(r));
  EXPECT_NE(std::find(lines.begin(), lines.end(), "test_length=-5000"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "total_transactions=5000"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "time_start=1.500000000"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "time_end=2.500000000"), lines.end());
}

TEST(FormatNeperTest, MissingKeysPrintDefaultsAndZeros) {
  const std::string out = format_neper(Json::object());
  const auto lines = lines_of(out);
  EXPECT_EQ(lines[0], "VERSION=1.1.0");
  const auto has = [&](const std::string& l) { return std::find(lines.begin(), lines.end(), l) != lines.end(); };
  EXPECT_TRUE(has("percentiles="));
  EXPECT_TRUE(has("test_length=10"));
  EXPECT_TRUE(has("total_run_time=10"));
  EXPECT_TRUE(has("num_flows=1"));
  EXPECT_TRUE(has("latency_min=0.000000000"));
  EXPECT_TRUE(has("throughput=0.00"));
  EXPECT_EQ(out.find("latency_p"), std::string::npos);
  EXPECT_EQ(out.find("napisim_"), std::string::npos);
  // Wrong types do not crash either.
  const Json weird = Json::parse(R"({"workload": {"num_flows": "many", "percentiles": 7}, "summary": [1, 2]})");
  const std::string w = format_neper(weird);
  EXPECT_NE(w.find("\nnum_flows=1\n"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------------
// summary (the default text)

TEST(FormatSummaryTest, SaysWhatRanThenTheResultsPerHost) {
  Json r = sample_result();
  r["scenario"] = Json::parse(R"({
    "warmup_s": 0.5,
    "topology": {"numa_nodes": 2, "llcs_per_node": 1, "cores_per_llc": 14, "threads_per_core": 2},
    "nics": [{"name": "eth0", "queues": 8}],
    "models": [{"name": "napi_threaded", "params": {}, "nics": []}, {"name": "rps_rfs", "params": {}, "nics": [0]}],
    "platform": {"server": "server", "clients": [
      {"name": "client0", "stack": "linux", "topology": {"cores_per_llc": 4}, "host_nic": {"name": "eth1", "queues": 1},
       "models": [{"name": "napi_irq"}]},
      {"name": "gen", "stack": "idealised"}]}
  })");
  r["workload"]["service_ns"] = Json::parse(R"({"type": "lognormal", "mean": 40000, "stddev": 60000})");
  r["clients"] = Json::parse(R"({"client0": {"cpu": {"busy_pct": 12.5, "busy_cpus": 0.5, "cpu_us_per_op": 1.5,
                                  "by_class_pct": {"idle": 87.5, "softirq": 10.0, "user": 2.5}},
                                  "irqs": 7, "psi_cpu_some_pct": 3.25}})");
  const auto lines = lines_of(format_summary(r));
  const std::vector<std::string> want = {
      "napisim 0.1.0 (abc): scenario quickstart, seed 1",
      "workload   tcp_rr: num_flows=1000, num_threads=8, request_size=1, response_size=1,",
      "           service_ns=lognormal(mean=40000, stddev=60000)",
      "window     1 s measured after 0.5 s of warm-up (simulated time)",
      "server     56 CPUs, eth0 (8 queues), models napi_threaded, rps_rfs (NICs 0)",
      "client0    Linux client host: 4 CPUs, eth1 (1 queue), model napi_irq",
      "gen        idealised client: a fixed turnaround per request, no simulated host",
      "",
      "throughput 2100000 transactions/s (2100000 in the window)",
      "latency    avg 25.5  p50 21.0  p90 30.0  p99 41.0  p99.9 123.5  p99.99 500.0  max 950.1 us",
      "server     CPU 87.5% busy (0.00 CPUs), 3.25 us per transaction",
      "           by class: hardirq 2.5%, softirq 30.0%",
      "           IRQs 123456 from NICs (0 in all), 0.00 packets per IRQ; 0 NAPI polls (0 full)",
      "           drops 0 ring, 0 backlog; 0 time squeezes; 0 packets steered by RPS",
      "           0 context switches, 0 wakeups, 0 migrations; PSI cpu some 0.0%",
      "client0    CPU 12.5% busy (0.50 CPUs), 1.50 us per transaction",
      "           by class: softirq 10.0%, user 2.5%",
      "           IRQs 7 from NICs (0 in all), 0.00 packets per IRQ; 0 NAPI polls (0 full)",
      "           drops 0 ring, 0 backlog; 0 time squeezes; 0 packets steered by RPS",
      "           0 context switches, 0 wakeups, 0 migrations; PSI cpu some 3.2%",
  };
  EXPECT_EQ(lines, want);
}

TEST(FormatSummaryTest, NamesEachWorkloadsOperationAndItsOwnFigures) {
  Json r = sample_result();
  r["workload"] = Json{{"type", "mutilate"}, {"qps", 1000}};
  r["summary"]["mutilate"] = Json{{"target_qps", 1000}, {"misses", 3}, {"skips", 4}};
  std::string out = format_summary(r);
  EXPECT_NE(out.find("\nthroughput 2100000 queries/s (2100000 in the window)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\noffered    1000 queries/s target; 3 misses, 4 skipped\n"), std::string::npos) << out;
  EXPECT_NE(out.find(", 3.25 us per query\n"), std::string::npos) << out;

  r["workload"] = Json{{"type", "stream"}};
  r["summary"] = Json::parse(R"({"measured_s": 1, "throughput": 9400.5, "throughput_units": "10^6bits/s",
                                 "bytes_received": 123, "cpu": {"busy_pct": 5, "cpu_us_per_op": 0}})");
  out = format_summary(r);
  EXPECT_NE(out.find("\nthroughput 9400.50 10^6bits/s\nreceived   123 bytes\n"), std::string::npos) << out;
  EXPECT_NE(out.find("server     CPU 5.0% busy (0.00 CPUs)\n"), std::string::npos) << out;  // no ops, no per op
  EXPECT_EQ(out.find("latency"), std::string::npos) << out;
}

TEST(FormatSummaryTest, MissingOrMistypedKeysDoNotThrow) {
  EXPECT_NO_THROW(format_summary(Json::object()));
  EXPECT_NO_THROW(format_summary(Json::parse(R"({"workload": 3, "summary": [1], "scenario": {"models": 7,
      "platform": {"clients": [1, {"stack": "linux"}]}, "changes": [{"at_s": "x"}]}, "clients": []})")));
  const std::string out = format_summary(Json::parse(R"({"scenario": {"changes": [{"at_s": 0.1}, {"at_s": 0.2}]}})"));
  EXPECT_NE(out.find("\nchanges    2 at run time: at 0.1 s, 0.2 s\n"), std::string::npos) << out;
}

// ---------------------------------------------------------------------------------------------------
// netperf

TEST(FormatNetperfTest, LegacyBannerAndTable) {
  const std::string out = format_netperf(sample_result(), "legacy");
  const std::string expected =
      "MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 10.0.0.2 () port 0 AF_INET"
      " : demo : first burst 0\n"
      "Local /Remote\n"
      "Socket Size   Request  Resp.   Elapsed  Trans.\n"
      "Send   Recv   Size     Size    Time     Rate         \n"
      "bytes  Bytes  bytes    bytes   secs.    per sec   \n"
      "\n"
      "16384  87380  1        1       1.00     2100000.00   \n"
      "16384  87380 \n";
  EXPECT_EQ(out, expected);
}

TEST(FormatNetperfTest, BannerKeepsShortAddressesInParentheses) {
  Json r = sample_result();
  r["workload"]["host"] = "1.2.3.4";
  r["workload"]["no_delay"] = true;
  const auto lines = lines_of(format_netperf(r, "legacy"));
  EXPECT_EQ(lines[0],
            "MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 1.2.3.4 (1.2.3.4) port 0 "
            "AF_INET : nodelay : demo : first burst 0");
}

TEST(FormatNetperfTest, LongHostNamesArePrintedWhole) {
  Json r = sample_result();
  const std::string host(300, 'h');
  r["workload"]["host"] = host;
  const auto lines = lines_of(format_netperf(r, "omni-keyval"));
  EXPECT_NE(lines[0].find(" to " + host + " () port 0 AF_INET : demo"), std::string::npos);
}

TEST(FormatNetperfTest, OmniCsvSelectorsInMicroseconds) {
  const auto lines = lines_of(format_netperf(sample_result(), "omni-csv"));
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[0].rfind("MIGRATED TCP REQUEST/RESPONSE TEST", 0), 0U);
  EXPECT_EQ(lines[1],
            "Throughput,Throughput Units,Minimum Latency Microseconds,Maximum Latency Microseconds,"
            "50th Percentile Latency Microseconds,90th Percentile Latency Microseconds,"
            "99th Percentile Latency Microseconds,Mean Latency Microseconds,Stddev Latency Microseconds");
  EXPECT_EQ(lines[2], "2100000.00,Trans/s,12,950,20,30,40,25.50,5.25");
  EXPECT_EQ(csv_split(lines[1]).size(), csv_split(lines[2]).size());
}

TEST(FormatNetperfTest, OmniKeyvalSelectors) {
  const auto lines = lines_of(format_netperf(sample_result(), "omni-keyval"));
  const std::vector<std::string> expected = {
      "THROUGHPUT=2100000.00", "THROUGHPUT_UNITS=Trans/s", "MIN_LATENCY=12",     "MAX_LATENCY=950",    "P50_LATENCY=20",
      "P90_LATENCY=30",        "P99_LATENCY=40",           "MEAN_LATENCY=25.50", "STDDEV_LATENCY=5.25"};
  ASSERT_EQ(lines.size(), expected.size() + 1);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(lines[i + 1], expected[i]);
  }
}

TEST(FormatNetperfTest, MissingLatencyPrintsNetperfsNotMeasuredValues) {
  const auto lines = lines_of(format_netperf(Json::object(), "omni-csv"));
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[2], "0.00,Trans/s,-1,-1,-1,-1,-1,-1.00,-1.00");
  EXPECT_NO_THROW(format_netperf(Json::object(), "legacy"));
}

TEST(FormatNetperfTest, UnknownStyleIsAConfigError) {
  EXPECT_THROW(format_netperf(sample_result(), "human"), ConfigError);
}

}  // namespace
}  // namespace napisim::output
