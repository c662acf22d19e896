// The run's timeline (sim/kernel/timeline.hpp): a hand-checked timeline on one CPU, and on a
// two-host scenario the structure Perfetto needs and CPU time per class equal to the run's figures.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/params/json_util.hpp"
#include "sim/scenario/simulation.hpp"
#include "tests/unit/kernel_rig.hpp"

namespace napisim {
namespace {

struct Slice {
  int pid, tid;
  std::string name;
  Nanos ts, dur;
};

// "ts"/"dur" are µs with three decimals: back to exact ns.
Nanos ns_of(const Json& v) {
  return static_cast<Nanos>(std::llround(v.get<double>() * 1000.0));
}

std::vector<Slice> slices(const Json& doc, const std::string& cat) {
  std::vector<Slice> out;
  for (const Json& e : doc.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("cat") == cat)
      out.push_back({e.at("pid").get<int>(), e.at("tid").get<int>(), e.at("name").get<std::string>(), ns_of(e.at("ts")),
                     ns_of(e.at("dur"))});
  return out;
}

// One CPU, zero costs: a pinned task sleeps from the start, is woken at 1 ms, works 100 µs of
// user time and sleeps again. Window [0, 2 ms): the CPU is idle, then user (the task), then idle;
// the task's track has one running slice; the wakeup found the CPU idle, so no runnable wait.
TEST(TimelineTest, OneWakeupOnOneCpuGivesTheHandCheckedSlices) {
  Rig r(shape(2), KernelParams{}, zero_costs());
  TimelineOptions opt;
  opt.to = ms(2);
  Timeline tl(opt);
  r.k.set_trace(&tl, tl.add_host("server", 2));
  WaitQueue wq;
  std::vector<Nanos> got;
  pinned_sleeper(r, "worker", 0, wq, &got, us(100));
  At at(r.host);
  at(ms(1), [&] { r.k.wake_up(wq, 1); });
  r.run_to(ms(2));
  r.settle();
  const Json doc = parse_json_text(tl.finish(ms(2)), "trace");
  std::vector<std::tuple<std::string, Nanos, Nanos>> cpu;
  for (const Slice& s : slices(doc, "cpu"))
    if (s.tid == 0) cpu.emplace_back(s.name, s.ts, s.dur);
  const std::vector<std::tuple<std::string, Nanos, Nanos>> want_cpu = {
      {"idle", 0, ms(1)}, {"user", ms(1), us(100)}, {"idle", us(1100), us(900)}};
  EXPECT_EQ(cpu, want_cpu);
  const std::vector<Slice> task = slices(doc, "sched");
  ASSERT_EQ(task.size(), 1u);
  EXPECT_EQ(task[0].name, "running");
  EXPECT_EQ(task[0].ts, ms(1));
  EXPECT_EQ(task[0].dur, us(100));
  EXPECT_EQ(doc.at("otherData").at("napisim_truncated"), false);
}

// The same CPU with a user hog running: the woken task waits as "runnable" until it gets the CPU,
// and the CPU track names whose user time each slice is.
TEST(TimelineTest, ARequestIsASliceHoldingItsNonZeroStagesClippedToTheWindow) {
  // Window [10, 20) us. A request from 8 us: a 3 us, b 0, c 5 us, d 4 us: the request slice and a
  // are clipped to start at 10, b is left out, d ends at 20 (8 + 12).
  TimelineOptions opt;
  opt.from = us(10);
  opt.to = us(20);
  Timeline tl(opt);
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  const std::vector<Nanos> ns = {us(3), 0, us(5), us(4)};
  tl.request(7, us(8), names.data(), ns.data(), names.size());
  tl.request(7, us(30), names.data(), ns.data(), names.size());  // outside the window: nothing
  const Json doc = parse_json_text(tl.finish(us(40)), "trace");
  const std::vector<Slice> req = slices(doc, "request");
  ASSERT_EQ(req.size(), 1u);
  EXPECT_EQ(req[0].tid, 7);
  EXPECT_EQ(req[0].ts, us(10));
  EXPECT_EQ(req[0].dur, us(10));
  const std::vector<Slice> st = slices(doc, "stage");
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(std::make_tuple(st[0].name, st[0].ts, st[0].dur), std::make_tuple(std::string("a"), us(10), us(1)));
  EXPECT_EQ(std::make_tuple(st[1].name, st[1].ts, st[1].dur), std::make_tuple(std::string("c"), us(11), us(5)));
  EXPECT_EQ(std::make_tuple(st[2].name, st[2].ts, st[2].dur), std::make_tuple(std::string("d"), us(16), us(4)));
  bool named = false;
  for (const Json& e : doc.at("traceEvents"))
    named = named || (e.at("ph") == "M" && e.at("name") == "thread_name" && e.at("tid") == 7 &&
                      e.at("args").at("name") == "flow 7");
  EXPECT_TRUE(named);
}

TEST(TimelineTest, AWakeupBehindARunningTaskIsARunnableSlice) {
  Rig r(shape(1), KernelParams{}, zero_costs());
  TimelineOptions opt;
  opt.to = ms(10);
  Timeline tl(opt);
  r.k.set_trace(&tl, tl.add_host("server", 1));
  WaitQueue wq;
  std::vector<Nanos> got;
  Task& hog_task = r.k.create_task("hog", TaskKind::kUser, r.only(0));
  start(r.k, hog_task, hog(r.k, hog_task), 0);
  pinned_sleeper(r, "worker", 0, wq, &got, us(100));
  At at(r.host);
  at(us(2050), [&] { r.k.wake_up(wq, 0); });
  r.run_to(ms(10));
  r.settle();
  ASSERT_EQ(got.size(), 1u);
  const Json doc = parse_json_text(tl.finish(ms(10)), "trace");
  // The worker's runnable slice spans exactly its wait: from the wakeup to when it got the CPU.
  std::vector<Slice> runnable;
  for (const Slice& s : slices(doc, "sched"))
    if (s.name == "runnable" && s.ts >= us(2050)) runnable.push_back(s);
  ASSERT_FALSE(runnable.empty());
  EXPECT_EQ(runnable.front().ts, us(2050));
  EXPECT_EQ(runnable.front().ts + runnable.front().dur, got[0]);
  // The CPU's user time after the wakeup is the hog's, then 100 µs of the worker's.
  Nanos worker_user = 0;
  for (const Json& e : doc.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("cat") == "cpu" && e.contains("args") && e.at("args").at("task") == "worker")
      worker_user += ns_of(e.at("dur"));
  EXPECT_EQ(worker_user, us(100));
}

// quickstart with its Linux client, the trace over the measured window: well formed for the
// Perfetto importer (per track, slices nest: CPU and task slices never overlap, NAPI polls nest),
// every event inside the window, and each host's CPU time per class equal to the run's figures.
TEST(TimelineTest, QuickstartTraceIsWellFormedAndAddsUpToTheRunsCpuTime) {
  Json doc = default_scenario();
  apply_overrides(doc, {"warmup_s=0.005", "duration_s=0.01"});
  const Scenario s = parse_scenario(doc, ".");
  Simulation sim(s, Simulation::standalone_paths(s));
  TimelineOptions opt;
  opt.from = sim.warmup_end();
  opt.to = sim.run_end();
  Timeline tl(opt);
  sim.set_trace(tl);
  sim.run_standalone();
  const Json result = sim.result(Json::object());
  const Json trace = parse_json_text(tl.finish(sim.run_end()), "trace");

  std::map<int, std::string> process;
  for (const Json& e : trace.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == "process_name")
      process[e.at("pid").get<int>()] = e.at("args").at("name").get<std::string>();
  ASSERT_EQ(process.at(1), "server CPUs");
  ASSERT_EQ(process.at(3), "client0 CPUs");

  // Per track, sorted by start: each slice ends before the next starts, or contains it whole.
  std::map<std::pair<int, int>, std::vector<Slice>> tracks;
  std::size_t n = 0;
  for (const char* cat : {"cpu", "napi", "sched"})
    for (const Slice& sl : slices(trace, cat)) {
      EXPECT_GT(sl.dur, 0);
      EXPECT_GE(sl.ts, opt.from);
      EXPECT_LE(sl.ts + sl.dur, opt.to);
      tracks[{sl.pid, sl.tid}].push_back(sl);
      ++n;
    }
  EXPECT_GT(n, 1000u);
  for (auto& [key, v] : tracks) {
    std::sort(v.begin(), v.end(), [](const Slice& a, const Slice& b) { return a.ts < b.ts; });
    std::vector<Nanos> open_ends;  // the enclosing slices' ends
    for (const Slice& sl : v) {
      while (!open_ends.empty() && open_ends.back() <= sl.ts)
        open_ends.pop_back();
      if (!open_ends.empty()) {
        EXPECT_LE(sl.ts + sl.dur, open_ends.back()) << sl.name << " pid " << key.first;
      }
      open_ends.push_back(sl.ts + sl.dur);
    }
  }
  // CPU tracks hold one context at a time: no nesting at all.
  for (const Slice& sl : slices(trace, "cpu")) {
    const auto& v = tracks[{sl.pid, sl.tid}];
    const auto it =
        std::find_if(v.begin(), v.end(), [&](const Slice& o) { return o.ts > sl.ts && o.ts < sl.ts + sl.dur; });
    EXPECT_TRUE(it == v.end()) << "overlap on CPU track " << sl.tid;
  }

  // CPU time per class, each host: the trace's sum against result's by_class_pct.
  const double window = static_cast<double>(opt.to - opt.from);
  auto check_host = [&](int pid, const Json& by_class, int nr_cpus) {
    std::map<std::string, Nanos> sum;
    for (const Slice& sl : slices(trace, "cpu"))
      if (sl.pid == pid) sum[sl.name] += sl.dur;
    for (const auto& [cls, pct] : by_class.items()) {
      const double traced = static_cast<double>(sum[cls]) / (window * nr_cpus) * 100.0;
      EXPECT_NEAR(traced, pct.get<double>(), 1e-9) << process[pid] << " " << cls;
    }
  };
  check_host(1, result.at("summary").at("cpu").at("by_class_pct"), sim.kernel().nr_cpus());
  ASSERT_NE(sim.client_kernel(0), nullptr);
  check_host(3, result.at("clients").at("client0").at("cpu").at("by_class_pct"), sim.client_kernel(0)->nr_cpus());
}

}  // namespace
}  // namespace napisim
