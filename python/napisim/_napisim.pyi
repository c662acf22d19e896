"""Type stubs for napisim's private native module (python/bindings.cpp). JSON text in, JSON text out."""

from typing import Callable, Optional

def run_json(
    scenario: str, sets: list[str] = ..., seed: Optional[int] = ..., base_dir: str = ..., trace: str = ...,
    trace_from: Optional[float] = ..., trace_for: float = ..., interval: float = ..., explain: bool = ...
) -> str:
    """Run a scenario and return the result document. Once per process (SimGrid); RuntimeError on a
    second call. ValueError (message starts with the JSON pointer) on bad input. Releases the GIL.
    With `trace`, also writes the timeline of [trace_from, trace_from + trace_for) simulated seconds
    to that file (the CLI's --trace). interval > 0: interval reports (the CLI's --interval)."""

def validate_json(
    scenario: str, sets: list[str] = ..., seed: Optional[int] = ..., base_dir: str = ...
) -> str:
    """Validate a scenario with overrides and return it with every default resolved."""

def scenario_sha256(
    scenario: str, sets: list[str] = ..., seed: Optional[int] = ..., base_dir: str = ...
) -> str:
    """Validate a scenario with overrides and return its fingerprint: results' scenario_sha256, which
    hashes the files the scenario names (trace, platform XML) by content, not by path."""

def schema_json() -> str:
    """JSON Schema (draft 2020-12) of a scenario document."""

def results_schema_json() -> str:
    """JSON Schema of what results report of each host: {"host": ..., "per_cpu": ...}."""

def default_scenario_json() -> str:
    """The embedded default scenario (scenarios/quickstart.json)."""

def list_models() -> list[tuple[str, str]]:
    """(name, one-line summary) of every receive-path model, sorted by name."""

def describe(name: str) -> str:
    """A model's parameters: {name, summary, params: [{name, type, unit, doc, default, constraint}],
    schema, text}. ValueError naming the valid models when `name` is unknown."""

def build_info() -> dict[str, str]:
    """napisim_version, git_sha, build_type of the native core."""

MAX_JSON_NESTING: int
"""Deepest object/array nesting a scenario may have (kMaxJsonNesting in sim/params/json_util.hpp)."""

MAX_JSON_FILE_BYTES: int
"""Largest scenario file (or included file) read (kMaxJsonFileBytes in sim/params/json_util.hpp)."""

def tune_json(resolved: str, options: str, run_batch: Callable[[str], str]) -> str:
    """napisim.tune's search (sim/tune): options as JSON text; run_batch(request JSON) -> results JSON."""

def import_host_json(options: str) -> str:
    """napisim import-host: {scenario, notes} (JSON text) from options (JSON text)."""
