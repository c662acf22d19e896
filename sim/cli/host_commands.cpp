// napisim import-host (see host_commands.hpp).
#include "sim/cli/host_commands.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "sim/core/error.hpp"
#include "sim/hostimport/host_import.hpp"
#include "sim/output/writers.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simgrid/run.hpp"

#include <unistd.h>

namespace napisim::cli {

namespace fs = std::filesystem;

struct HostCommands {
  CLI::App* import = nullptr;
  hostimport::ImportOptions imp;
  std::string imp_out;
};

namespace {

// An output file is checked before the work that fills it, so a bad path costs nothing.
void check_output_file(const std::string& path, const std::string& option) {
  const fs::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  if (path.empty() || path.back() == '/' || fs::is_directory(p))
    throw ConfigError(option, "expected a file path, got '" + path + "'");
  if (!fs::is_directory(dir)) throw ConfigError(option, "not a directory: '" + dir + "'");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) throw ConfigError(option, "cannot write to directory '" + dir + "'");
}

void write_output(const std::string& path, const std::string& text, const std::string& option) {
  try {
    output::write_file_atomic(path, text);
  } catch (const std::runtime_error& e) {
    throw ConfigError(option, e.what());
  }
}

int cmd_import(HostCommands& c) {
  if (!c.imp_out.empty()) check_output_file(c.imp_out, "--out");
  const fs::path out_dir = c.imp_out.empty() ? fs::current_path() : fs::absolute(c.imp_out).parent_path();
  if (!c.imp.trace.empty()) {
    // The scenario names the trace relative to where it is written, as scenarios name their files.
    std::error_code ec;
    const fs::path rel = fs::relative(fs::absolute(c.imp.trace), out_dir, ec);
    c.imp.trace_ref = ec || rel.empty() ? fs::absolute(c.imp.trace).string() : rel.string();
  }
  const hostimport::ImportResult r = hostimport::import_host(c.imp);
  for (const std::string& n : r.notes)
    std::fprintf(stderr, "napisim: import-host: note: %s\n", n.c_str());
  RunOptions ro;
  ro.base_dir = out_dir.string();
  try {
    (void)validate_scenario(r.scenario, ro);
  } catch (const ConfigError& e) {
    throw ConfigError("import-host", std::string("the imported host is outside what napisim models: ") + e.what());
  }
  const std::string text = r.scenario.dump(2) + "\n";
  if (c.imp_out.empty())
    std::fwrite(text.data(), 1, text.size(), stdout);
  else
    write_output(c.imp_out, text, "--out");
  return 0;
}

}  // namespace

std::shared_ptr<HostCommands> add_host_commands(CLI::App& app) {
  auto c = std::make_shared<HostCommands>();
  auto* im = c->import = app.add_subcommand(
      "import-host", "Write a scenario whose server is this machine, or the host whose files --from DIR holds");
  im->add_option("--from", c->imp.from_dir,
                 "Directory of files collected on another host (layout: docs/import-and-tune.md; "
                 "tools/collect-host.sh writes it)");
  im->add_option("--dev", c->imp.devices,
                 "Network device to import (repeatable; default: every device with a bus device)");
  im->add_option("--napi-get", c->imp.napi_get,
                 "JSON of `ynl --family netdev --dump napi-get --output-json` (per-NAPI settings and IRQs)");
  im->add_option("--name", c->imp.name, "Scenario name (default: imported)");
  im->add_option("--out", c->imp_out, "Write the scenario here (atomically) instead of stdout");
  im->add_option("--trace", c->imp.trace, "Workload: replay this request trace (neper --log-rtt or CSV)");
  im->add_option("--rate", c->imp.rate_rps, "Workload without a trace: open-loop requests/s (default 10000)");
  im->add_option("--request-size", c->imp.request_size, "Request bytes: a number or a distribution (JSON)");
  im->add_option("--response-size", c->imp.response_size, "Response bytes: a number or a distribution (JSON)");
  im->add_option("--service-ns", c->imp.service_ns, "Server CPU per request, ns: a number or a distribution (JSON)");
  im->add_option("--flows", c->imp.flows, "Client connections (default 64)");
  im->add_option("--threads", c->imp.threads, "Server worker threads (default: one per CPU taking a queue IRQ)");

  return c;
}

std::optional<int> run_host_commands(HostCommands& c) {
  if (c.import->parsed()) return cmd_import(c);
  return std::nullopt;
}

}  // namespace napisim::cli
