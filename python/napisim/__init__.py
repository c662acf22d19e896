"""napisim: a discrete-event simulator of Linux network receive scheduling, from Python.

    import napisim
    r = napisim.run("quickstart", duration_s=0.05)          # one run, in a fresh worker process
    r.summary["latency_ns.p99"], r.per_cpu, r.latency_cdf()
    df = napisim.sweep("quickstart", grid={"workload.params.num_flows": [16, 64]}, seeds=[1, 2])

Each simulation runs in its own process (SimGrid's engine is one per process), so run() and sweep()
may be called any number of times from one notebook. Bad input raises ValueError whose message
starts with the JSON pointer of the offending value. Plot helpers: napisim.plots.
"""

from ._core import (build_info, default_scenario, describe, has_model, has_scenario, list_models, list_scenarios,
                    list_workloads, load_scenario, model_spec, model_summaries, schema, scenario_dirs, validate)
from .compare import compare
from .sweep import cache_key, default_cache_dir, run, sweep, sweep_result
from .tune import TuneResult, import_host, tune

__version__ = build_info()["napisim_version"]

__all__ = [
    "run", "sweep", "sweep_result", "compare", "validate", "schema", "describe", "list_models", "list_workloads",
    "model_summaries",
    "has_model", "list_scenarios", "has_scenario", "scenario_dirs", "load_scenario",
    "default_scenario", "build_info", "model_spec", "cache_key", "default_cache_dir", "Result", "plots",
    "read_trace", "notebook_setup", "tune", "TuneResult", "import_host",
]


def __getattr__(name):
    # pandas and matplotlib are imported on first use, so worker processes start fast.
    if name == "Result":
        from .result import Result

        return Result
    if name == "notebook_setup":  # not imported with the package: `python -m napisim._notebooks` runs it
        from ._notebooks import notebook_setup

        return notebook_setup
    if name == "read_trace":
        from .trace import read_trace

        return read_trace
    if name == "plots":
        import importlib

        return importlib.import_module(".plots", __name__)
    raise AttributeError(f"module 'napisim' has no attribute '{name}'")
