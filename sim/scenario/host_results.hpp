// napisim: what results report of each host, declared once.
//
// Every figure a run reports of a host's kernel (the server's in "summary" and "per_cpu", each
// Linux client's in "clients.<host>", each interval's in "intervals") is one entry of the two
// tables in host_results.cpp: its key, unit, description and how it follows from two snapshots
// of the host's counters (sim/kernel/counters.hpp). The JSON of a result, the results schema
// (`napisim schema --results`) and docs/results.md (`napisim describe results`) are all derived
// from those tables, so a new figure is added in one place.
#pragma once

#include <string>

#include "sim/core/json.hpp"
#include "sim/kernel/counters.hpp"

namespace napisim {

/// A host's figures over the window [b, e] into `summary` (host-wide) and `per_cpu` (an array, one
/// object per CPU); `transactions` in the window give the per-operation figures.
void host_results(const Snapshot& b, const Snapshot& e, double transactions, Json& summary, Json& per_cpu);

/// JSON Schema of a host's figures: {"host": <schema of the host-wide object>, "per_cpu": <schema
/// of one CPU's object>}, each property with its unit and description.
Json host_results_schema();

/// The tables as Markdown: docs/results.md.
std::string host_results_markdown();

}  // namespace napisim
