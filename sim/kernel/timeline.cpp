// napisim: the run's timeline as a Chrome JSON trace (timeline.hpp says what is recorded and why).
#include "sim/kernel/timeline.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace napisim {
namespace {

// Processes: host h's CPUs are pid 2h+1, its tasks pid 2h+2. On a CPU process, CPU n is tid n and
// its NAPI track tid nr_cpus + n.
int cpus_pid(int host) {
  return 2 * host + 1;
}
int tasks_pid(int host) {
  return 2 * host + 2;
}
// The sampled requests' process, after every host's (at most 257 hosts: 64 NICs' clients + 1).
constexpr int kRequestsPid = 100000;

void append_escaped(std::string& out, const std::string& s) {
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += ch;
    }
  }
}

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const int n = std::snprintf(buf, sizeof buf, "%" PRId64, v);
  out.append(buf, static_cast<std::size_t>(n));
}

void meta(std::string& out, int pid, int tid, const char* what, const std::string& name) {
  out += "{\"ph\":\"M\",\"pid\":";
  append_int(out, pid);
  if (tid >= 0) {
    out += ",\"tid\":";
    append_int(out, tid);
  }
  out += ",\"name\":\"";
  out += what;
  out += "\",\"args\":{\"name\":\"";
  append_escaped(out, name);
  out += "\"}},\n";
}

void sort_index(std::string& out, int pid, int tid, int index) {
  out += "{\"ph\":\"M\",\"pid\":";
  append_int(out, pid);
  out += ",\"tid\":";
  append_int(out, tid);
  out += ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":";
  append_int(out, index);
  out += "}},\n";
}

const char* task_state_name(TaskState s) {
  return s == TaskState::kRunning ? "running" : "runnable";
}

}  // namespace

Timeline::Timeline(const TimelineOptions& opt) : opt_(opt) {
  out_ = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
}

int Timeline::add_host(const std::string& name, int nr_cpus) {
  const int h = static_cast<int>(hosts_.size());
  Host host;
  host.name = name;
  host.cpus.resize(static_cast<std::size_t>(nr_cpus));
  hosts_.push_back(std::move(host));
  meta(out_, cpus_pid(h), -1, "process_name", name + " CPUs");
  meta(out_, tasks_pid(h), -1, "process_name", name + " tasks");
  for (int c = 0; c < nr_cpus; ++c) {
    meta(out_, cpus_pid(h), c, "thread_name", "CPU " + std::to_string(c));
    sort_index(out_, cpus_pid(h), c, 2 * c);
    meta(out_, cpus_pid(h), nr_cpus + c, "thread_name", "CPU " + std::to_string(c) + " NAPI");
    sort_index(out_, cpus_pid(h), nr_cpus + c, 2 * c + 1);
  }
  return h;
}

bool Timeline::clip(Nanos& a, Nanos& b) const {
  a = std::max(a, opt_.from);
  b = std::min(b, opt_.to);
  return a < b;
}

bool Timeline::reserve_event() {
  if (events_ >= opt_.max_events) {
    truncated_ = true;
    return false;
  }
  ++events_;
  return true;
}

void Timeline::append_ts(Nanos t) {
  // µs with three decimals: exact, and no floating-point rounding.
  append_int(out_, t / 1000);
  char buf[8];
  std::snprintf(buf, sizeof buf, ".%03d", static_cast<int>(t % 1000));
  out_ += buf;
}

void Timeline::begin_slice(const char* cat, int pid, int tid, Nanos a, Nanos b, const char* name) {
  out_ += "{\"ph\":\"X\",\"cat\":\"";
  out_ += cat;
  out_ += "\",\"pid\":";
  append_int(out_, pid);
  out_ += ",\"tid\":";
  append_int(out_, tid);
  out_ += ",\"ts\":";
  append_ts(a);
  out_ += ",\"dur\":";
  append_ts(b - a);
  out_ += ",\"name\":\"";
  out_ += name;
  out_ += '"';
}

void Timeline::emit_cpu(int host, int cpu, const Open& o) {
  if (!reserve_event()) return;
  begin_slice("cpu", cpus_pid(host), cpu, o.start, o.end, cpu_class_name(o.cls));
  if (o.task) {
    out_ += ",\"args\":{\"task\":\"";
    append_escaped(out_, o.task->name);
    out_ += "\",\"tid\":";
    append_int(out_, o.task->id);
    out_ += '}';
  }
  out_ += "},\n";
}

void Timeline::cpu_time(int host, int cpu, CpuClass cls, const Task* curr, Nanos a, Nanos b) {
  if (!clip(a, b)) return;
  // Interrupt levels and idle run on behalf of no task.
  const bool task_level = cls != CpuClass::kIdle && cls != CpuClass::kHardirq && cls != CpuClass::kSoftirq;
  const Task* task = task_level ? curr : nullptr;
  Open& o = hosts_[static_cast<std::size_t>(host)].cpus[static_cast<std::size_t>(cpu)];
  if (o.open && o.cls == cls && o.task == task && o.end == a) {
    o.end = b;
    return;
  }
  if (o.open) emit_cpu(host, cpu, o);
  o = Open{true, cls, task, a, b};
}

void Timeline::irq(int host, int cpu, const char* what, Nanos t) {
  if (t < opt_.from || t >= opt_.to || !reserve_event()) return;
  out_ += "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"irq\",\"pid\":";
  append_int(out_, cpus_pid(host));
  out_ += ",\"tid\":";
  append_int(out_, cpu);
  out_ += ",\"ts\":";
  append_ts(t);
  out_ += ",\"name\":\"";
  out_ += what;
  out_ += "\"},\n";
}

void Timeline::napi_poll(int host, int cpu, int napi, int work, int budget, Nanos a, Nanos b) {
  if (!clip(a, b) || !reserve_event()) return;
  const int nr_cpus = static_cast<int>(hosts_[static_cast<std::size_t>(host)].cpus.size());
  begin_slice("napi", cpus_pid(host), nr_cpus + cpu, a, b, "napi_poll");
  out_ += ",\"args\":{\"napi\":";
  append_int(out_, napi);
  out_ += ",\"work\":";
  append_int(out_, work);
  out_ += ",\"budget\":";
  append_int(out_, budget);
  out_ += "}},\n";
}

void Timeline::emit_task(int host, int id, const TaskOpen& o, Nanos end) {
  Nanos a = o.since, b = end;
  if (!clip(a, b) || !reserve_event()) return;
  begin_slice("sched", tasks_pid(host), id, a, b, task_state_name(o.state));
  out_ += ",\"args\":{\"cpu\":";
  append_int(out_, o.cpu);
  out_ += "}},\n";
}

void Timeline::task_state(int host, const Task& t, TaskState s, int cpu, Nanos now) {
  Host& h = hosts_[static_cast<std::size_t>(host)];
  const auto id = static_cast<std::size_t>(t.id);
  if (id >= h.tasks.size()) h.tasks.resize(id + 1);
  TaskOpen& o = h.tasks[id];
  if (s != TaskState::kRunning && s != TaskState::kRunnable) s = TaskState::kSleeping;
  // A runnable task that migrates stays one runnable slice; running on another CPU is a new one.
  if (o.state == s && (s != TaskState::kRunning || o.cpu == cpu)) return;
  if (!o.named) {
    o.named = true;
    meta(out_, tasks_pid(host), t.id, "thread_name", t.name);
  }
  if (o.state != TaskState::kSleeping) emit_task(host, t.id, o, now);
  o.state = s;
  o.cpu = cpu;
  o.since = now;
}

void Timeline::request(int flow, Nanos begin, const std::string* stage_names, const Nanos* stage_ns, std::size_t n) {
  Nanos end = begin;
  for (std::size_t i = 0; i < n; ++i)
    end += stage_ns[i];
  Nanos a = begin, b = end;
  if (!clip(a, b)) return;
  if (request_tracks_.empty()) meta(out_, kRequestsPid, -1, "process_name", "requests (sampled)");
  const auto f = static_cast<std::size_t>(flow);
  if (f >= request_tracks_.size()) request_tracks_.resize(f + 1);
  if (!request_tracks_[f]) {
    request_tracks_[f] = true;
    meta(out_, kRequestsPid, flow, "thread_name", "flow " + std::to_string(flow));
  }
  if (!reserve_event()) return;
  begin_slice("request", kRequestsPid, flow, a, b, "request");
  out_ += ",\"args\":{\"latency_ns\":";
  append_int(out_, end - begin);
  out_ += ",\"start_ns\":";
  append_int(out_, begin);
  out_ += "}},\n";
  Nanos t = begin;
  for (std::size_t i = 0; i < n; ++i) {
    Nanos sa = t, sb = t + stage_ns[i];
    t = sb;
    if (!clip(sa, sb) || !reserve_event()) continue;
    begin_slice("stage", kRequestsPid, flow, sa, sb, stage_names[i].c_str());
    out_ += "},\n";
  }
}

std::string Timeline::finish(Nanos end) {
  for (std::size_t h = 0; h < hosts_.size(); ++h) {
    for (std::size_t c = 0; c < hosts_[h].cpus.size(); ++c) {
      Open& o = hosts_[h].cpus[c];
      if (o.open) emit_cpu(static_cast<int>(h), static_cast<int>(c), o);
      o.open = false;
    }
    for (std::size_t id = 0; id < hosts_[h].tasks.size(); ++id) {
      TaskOpen& o = hosts_[h].tasks[id];
      if (o.state != TaskState::kSleeping) emit_task(static_cast<int>(h), static_cast<int>(id), o, end);
      o.state = TaskState::kSleeping;
    }
  }
  // The last event's ",\n" becomes the array's end; metadata always precede, so there is one.
  if (out_.size() >= 2 && out_.compare(out_.size() - 2, 2, ",\n") == 0) out_.resize(out_.size() - 2);
  out_ += "\n],\"otherData\":{\"napisim_window_ns\":[";
  append_int(out_, opt_.from);
  out_ += ',';
  append_int(out_, opt_.to);
  out_ += "],\"napisim_events\":";
  append_int(out_, static_cast<std::int64_t>(events_));
  out_ += ",\"napisim_truncated\":";
  out_ += truncated_ ? "true" : "false";
  out_ += "}}\n";
  std::string doc;
  doc.swap(out_);
  return doc;
}

}  // namespace napisim
