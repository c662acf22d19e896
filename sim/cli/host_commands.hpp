// napisim import-host and napisim tune: their options and what they do, apart from main.cpp.
#pragma once

#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

namespace napisim::cli {

struct HostCommands;

/// Adds the import-host and tune subcommands to `app`.
std::shared_ptr<HostCommands> add_host_commands(CLI::App& app);

/// Runs import-host or tune when one of them was given (its exit status), else nullopt. Errors
/// are thrown as main() expects them (ConfigError: bad input, exit 2).
std::optional<int> run_host_commands(HostCommands& c);

}  // namespace napisim::cli
