// napisim: result writers: atomic file output and the text formats (summary, JSON, CSV, neper,
// netperf, mutilate).
//
// Every formatter takes the run's result JSON ({"context", "workload", "summary", ...}) and returns the
// text; none of them throws or crashes on a missing or mistyped optional key (it prints 0 or skips).
// The neper and netperf formats mimic the real tools' stdout byte for byte where napisim has the data
// (validation-targets.md §4), so the scripts that parse real runs can read simulated ones:
//  * neper tcp_rr client stdout: google/neper @ ea5890f (flags.c flags_parser_dump, define_all_flags.c,
//    percentiles.c percentiles_print, thread.c run_main_thread, rr.c rr_report_stats, histo.c
//    neper_histo_print, stats.c neper_stat_print).
//  * netperf TCP_RR: HewlettPackard/netperf @ afc51ff (nettest_bsd.c print_top_test_header,
//    nettest_omni.c send_tcp_rr / print_omni_csv / print_omni_keyword / set_output_elt).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/json.hpp"

namespace napisim::output {

/// Writes `content` to a temp file in the target's directory, fflush + fsync, then rename()s it over
/// `path`: readers see the old file or the new one, never a half-written one. On any failure the temp
/// file is removed and std::runtime_error("<path>: <what>: <strerror>") is thrown.
void write_file_atomic(const std::string& path, std::string_view content);

/// Several files as one set: each (path, content) is written and synced under a temp name first,
/// and only when all are written are they renamed over their targets. A failure while writing
/// (a full disk, say) removes every temp file and leaves every target as it was.
void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files);

/// result.dump(2) plus a trailing newline (invalid UTF-8 is replaced, never thrown on).
std::string format_json(const Json& result);

/// Two lines: header and values. Columns: scenario, seed, run (from "context"), then every scalar leaf
/// under "summary" flattened with '.' (arrays by index), e.g. latency_ns.p99. RFC 4180 quoting for
/// strings containing a comma, quote or newline; LF line ends.
std::string format_csv(const Json& result);

/// The default `run` output: a short summary for a person. What ran (scenario, napisim version,
/// seed, workload and its parameters, the measured window, each host's CPUs and receive-path models),
/// then the results with their units: throughput, latency (us), and per host (the server, then each
/// Linux client host) CPU busy, CPU per op, CPU by class, IRQs, NAPI polls, drops and PSI. Not meant
/// to be parsed: scripts read --format json, csv or a tool's format.
std::string format_summary(const Json& result);

/// neper tcp_rr client stdout (key=value lines): VERSION, the flag dump in reverse registration order,
/// total_run_time/total_transactions, the after-run block (rusage zeros, latencies in seconds %.9f,
/// latency_p%g per requested percentile, throughput...), then one napisim_<key>=<value> line for every
/// summary scalar not already printed.
std::string format_neper(const Json& result);

/// netperf TCP_RR stdout. style: "legacy" (banner + "Local /Remote" table), "omni-csv" (-o) or
/// "omni-keyval" (-k), the omni styles with selectors THROUGHPUT, THROUGHPUT_UNITS, MIN_LATENCY,
/// MAX_LATENCY, P50_LATENCY, P90_LATENCY, P99_LATENCY, MEAN_LATENCY, STDDEV_LATENCY (µs).
/// Throws ConfigError for any other style.
std::string format_netperf(const Json& result, std::string_view style);

/// mutilate's report (leverich/mutilate @ d65c6ef mutilate.cc main(), ConnectionStats.h print_header /
/// print_stats): "#type avg std min 5th 10th 50th 90th 95th 99th" rows for read, update and op_q
/// ("%-7s %7.1f ..."; upstream has no 50th column), Total QPS, Misses, Skipped TXs, RX/TX bytes, then
/// one napisim_<key>=<value> line each for the target QPS, CPU %, CPU ns and cycles per query, and
/// interrupt counts. Reads summary.mutilate (the mutilate workload's report).
std::string format_mutilate(const Json& result);

/// The run's interval reports (result["intervals"], run --interval) as a table, one line per
/// interval as sar prints them: end time, transactions/s, p50/p99/p99.9 (µs), the server's CPU busy
/// and by class (%), ring drops. An empty table when the run has none.
std::string format_intervals(const Json& result);

/// The latency attribution (result["latency_breakdown"], run --explain) as a table: one row per
/// stage in path order (stages that are 0 in every band left out), one column per percentile band,
/// the mean µs the band's requests spent in it; the bands' request counts and mean latencies (the
/// columns' sums) head and foot it. Empty when the run has none.
std::string format_breakdown(const Json& result);

}  // namespace napisim::output
