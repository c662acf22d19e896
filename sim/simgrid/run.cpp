#include "sim/simgrid/run.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

#include <simgrid/s4u.hpp>
#include <simgrid/version.h>

#include "sim/core/error.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/simulation.hpp"
#include "sim/simgrid/resource_model.hpp"

#include "git_sha.h"  // generated at build time (cmake/git_sha.cmake)
#include <sys/resource.h>
#include <unistd.h>

namespace sg4 = simgrid::s4u;

namespace napisim {

namespace {

std::atomic<bool> g_engine_used{false};  // SimGrid allows one engine per process

Scenario prepare(Json& doc, const RunOptions& opt) {
  apply_overrides(doc, opt.sets);
  if (opt.seed) doc["seed"] = *opt.seed;
  return parse_scenario(doc, opt.base_dir);
}

/// Builds the platform (or loads the XML) and returns each client's path to the server.
std::vector<ClientPath> build_platform(sg4::Engine& engine, const Scenario& s, sg4::Host** server) {
  const PlatformSpec& p = s.platform;
  if (p.xml.empty()) {
    auto* zone = sg4::create_full_zone("napisim");
    *server = zone->create_host(p.server, 1e9);
    for (const ClientSpec& c : p.clients) {  // names checked by parse_scenario()
      sg4::Host* h = zone->create_host(c.name, 1e9);
      sg4::Link* link = zone->create_link(c.name + "_link", c.link_gbps * 1e9 / 8.0)
                            ->set_latency(static_cast<double>(c.link_latency_ns) * 1e-9)
                            ->seal();
      zone->add_route(h->get_netpoint(), (*server)->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(link)}, true);
    }
    zone->seal();
  } else {
    try {
      engine.load_platform(p.xml);
    } catch (const std::exception& e) {
      throw ConfigError("/platform/xml", std::string("cannot load SimGrid platform: ") + e.what());
    }
    *server = engine.host_by_name_or_null(p.server);
    if (!*server) throw ConfigError("/platform/server", "no host \"" + p.server + "\" in " + p.xml);
  }
  std::vector<ClientPath> paths;
  for (std::size_t i = 0; i < p.clients.size(); ++i) {
    const ClientSpec& c = p.clients[i];
    sg4::Host* h = engine.host_by_name_or_null(c.name);
    if (!h) throw ConfigError("/platform/clients/" + std::to_string(i) + "/name", "no host \"" + c.name + "\"");
    std::vector<sg4::Link*> links;
    double latency = 0;
    h->route_to(*server, links, &latency);
    double bw = 1e18;
    for (sg4::Link* l : links)
      bw = std::min(bw, l->get_bandwidth());
    ClientPath cp;
    cp.name = c.name;
    cp.latency_ns = simgrid_to_nanos(latency);
    cp.bandwidth_gbps = links.empty() ? c.link_gbps : bw * 8.0 / 1e9;
    cp.nic = static_cast<int>(c.nic);
    paths.push_back(cp);
  }
  return paths;
}

}  // namespace

Json validate_scenario(Json doc, const RunOptions& opt, std::string* scenario_sha256) {
  const Scenario s = prepare(doc, opt);
  // What a run checks only once the host exists (cpulists against its CPUs, workload and model
  // values against its NICs) is checked here too, by building the simulation without running it.
  // An XML platform needs SimGrid's loader (one engine per process, and this may be called many
  // times): whether its hosts exist is checked by run only.
  if (s.platform.xml.empty()) {
    const Simulation check(s, Simulation::standalone_paths(s));
  }
  if (scenario_sha256) *scenario_sha256 = napisim::scenario_sha256(s);
  return resolve_scenario(s);
}

Json make_context(const Scenario& s) {
  Json c;
  c["napisim_version"] = NAPISIM_VERSION;
  c["git_sha"] = NAPISIM_GIT_SHA;
  c["build_type"] = NAPISIM_BUILD_TYPE;
#if defined(__clang__)
  c["compiler"] = std::string("clang++ ") + __clang_version__;  // __VERSION__ already says "Clang"
#else
  c["compiler"] = std::string("g++ ") + __VERSION__;
#endif
  c["simgrid_version"] = std::to_string(SIMGRID_VERSION_MAJOR) + "." + std::to_string(SIMGRID_VERSION_MINOR);
  c["scenario"] = s.name;
  c["scenario_sha256"] = scenario_sha256(s);
  if (!s.inputs.empty()) {
    Json files = Json::object();
    for (const InputFile& f : s.inputs)
      files[f.pointer] = {{"path", f.path}, {"sha256", f.sha256}};
    c["input_files"] = files;
  }
  c["seed"] = s.seed;
  c["run"] = s.run;
  return c;
}

TimelineOptions trace_window(const RunOptions& opt, const Scenario& s) {
  const double end = s.warmup_s + s.duration_s;
  const double from = std::isnan(opt.trace_from_s) ? s.warmup_s : opt.trace_from_s;
  if (!(from >= 0 && from < end))
    throw ConfigError("--trace-from", "expected a time in [0, warmup_s + duration_s) = [0, " + std::to_string(end) +
                                          ") s, got " + std::to_string(from));
  if (!(opt.trace_for_s > 0) || !std::isfinite(opt.trace_for_s))
    throw ConfigError("--trace-for", "expected a duration > 0 s, got " + std::to_string(opt.trace_for_s));
  TimelineOptions t;
  t.from = from_seconds(from);
  t.to = from_seconds(std::min(end, from + opt.trace_for_s));
  return t;
}

Nanos interval_ns(const RunOptions& opt, const Scenario& s) {
  if (opt.interval_s == 0) return 0;
  if (!(opt.interval_s > 0) || !std::isfinite(opt.interval_s) || s.duration_s / opt.interval_s > kMaxIntervals ||
      from_seconds(opt.interval_s) < 1)
    throw ConfigError("--interval", "expected a time in s > 0 that cuts duration_s (" + std::to_string(s.duration_s) +
                                        " s) into at most " + std::to_string(static_cast<long>(kMaxIntervals)) +
                                        " intervals, got " + std::to_string(opt.interval_s));
  return from_seconds(opt.interval_s);
}

Json run_scenario(Json doc, const RunOptions& opt, std::string* trace_out) {
  const Scenario s = prepare(doc, opt);
  std::unique_ptr<Timeline> trace;
  if (opt.trace) trace = std::make_unique<Timeline>(trace_window(opt, s));
  const Nanos interval = interval_ns(opt, s);  // checked, like the trace window, before the engine starts
  if (g_engine_used.exchange(true))
    throw std::logic_error("napisim: SimGrid allows one simulation per process; run each scenario in a new process");

  // Silence SimGrid's own logging; napisim prints its results itself.
  std::vector<std::string> args = {"napisim", "--log=root.thres:critical", "--cfg=surf/precision:1e-9"};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  sg4::Engine engine(&argc, argv.data());
  interrupt::install();  // in place of the engine's SIGINT handler, which exit(1)s from the handler

  sg4::Host* server = nullptr;
  const std::vector<ClientPath> paths = build_platform(engine, s, &server);
  Simulation sim(s, paths);
  if (trace) sim.set_trace(*trace);
  if (opt.explain) sim.set_explain();
  sim.set_interval(interval);
  auto model = std::make_shared<HostResourceModel>(sim.host());
  engine.add_model(model, {});

  const auto wall0 = std::chrono::steady_clock::now();
  const double warmup = to_seconds(sim.warmup_end());
  const double end = to_seconds(sim.run_end());
  const bool progress = opt.progress;
  sg4::Actor::create("control", server, [&sim, warmup, end, progress, wall0] {
    // Low-rate control plane: phase changes (and the progress line) at their own wake-up times.
    auto report = [&](bool final_line) {
      if (!progress) return;
      const double now = sg4::Engine::get_clock();
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
      const double eps = wall > 0 ? static_cast<double>(sim.host().events_processed()) / wall : 0;
      const double eta = now > 0 ? wall * (end - now) / now : 0;
      std::fprintf(stderr, "\rnapisim: t=%.3f/%.3f s  %.2e events/s  ETA %.0f s   %s", now, end, eps, eta,
                   final_line ? "\n" : "");
    };
    const double step = std::max(end / 50.0, 1e-3);
    sg4::this_actor::sleep_until(warmup);
    sim.begin_measurement();
    while (sg4::Engine::get_clock() + 1e-12 < end) {
      sg4::this_actor::sleep_until(std::min(end, sg4::Engine::get_clock() + step));
      report(false);
    }
    sim.end_measurement();
    report(true);
  });
  if (sim.interval() > 0) {
    // Interval reports at each boundary strictly inside the window; end_measurement() closes the last.
    sg4::Actor::create("intervals", server, [&sim] {
      for (Nanos t = sim.warmup_end() + sim.interval(); t < sim.run_end(); t += sim.interval()) {
        sg4::this_actor::sleep_until(to_seconds(t));
        sim.end_interval();
      }
    });
  }
  if (!s.changes.empty()) {
    // Run-time strategy changes (sysfs `threaded`-style): attach each model at its time.
    sg4::Actor::create("changes", server, [&sim, end] {
      const auto& changes = sim.scenario().changes;
      for (std::size_t i = 0; i < changes.size(); ++i) {
        if (changes[i].at_s > end) break;
        sg4::this_actor::sleep_until(changes[i].at_s);
        sim.apply_change(i);
      }
    });
  }
  sim.start();
  engine.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  Json result = sim.result(make_context(s));
  if (trace) {
    if (trace->truncated())
      std::fprintf(stderr, "napisim: warning: the trace stopped at %llu events; use a shorter --trace-for\n",
                   static_cast<unsigned long long>(trace->events()));
    std::string doc_text = trace->finish(sim.run_end());
    if (trace_out) trace_out->swap(doc_text);
  }
  if (progress || std::getenv("NAPISIM_TIMING")) {
    // 0.1 ms resolution: a benchmark's 0.2 s run takes ~0.3 wall s, and 10 ms steps would quantise
    // its wall-per-simulated-second figure by ~5%.
    // The process's peak resident set so far (ru_maxrss, KiB on Linux): flat in duration when
    // nothing grows with simulated time.
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    std::fprintf(stderr,
                 "napisim: %.3f simulated s in %.4f wall s, %.3e events/s, %.3f wall s per simulated s, "
                 "peak RSS %.1f MiB\n",
                 end, wall, static_cast<double>(sim.host().events_processed()) / std::max(wall, 1e-9),
                 wall / std::max(end, 1e-9), static_cast<double>(ru.ru_maxrss) / 1024.0);
  }
  return result;
}

}  // namespace napisim
