"""napisim.tune() and napisim.import_host(): `napisim tune` and `napisim import-host` from Python.

The search is the native one (sim/tune, the CLI's): it asks for batches of runs and this module
runs them with napisim.sweep(), so they go to local worker processes or a Dask cluster
(`executor=client`) and land in sweep's cache; a rerun of the same search only reads it.
"""

from __future__ import annotations

import json
import numbers
from typing import Any, Mapping, Optional, Sequence

from . import _core
from ._core import ScenarioLike


def import_host(from_dir: Optional[str] = None, *, devices: Optional[Sequence[str]] = None,
                napi_get: Optional[str] = None, name: str = "imported", trace: Optional[str] = None,
                rate_rps: Optional[float] = None, request_size: Any = 1024, response_size: Any = 1024,
                service_ns: Any = None, flows: int = 64, threads: int = 0, with_notes: bool = False):
    """A scenario (dict) whose server is this machine, or the host whose collected files are in
    `from_dir` (the layout of `napisim import-host --from`). with_notes=True returns (scenario,
    notes): what was not read or was approximated. ValueError names the file and what was expected."""
    from . import _napisim

    opts: dict = {"name": name, "flows": flows, "threads": threads,
                  "request_size": request_size, "response_size": response_size}
    if from_dir is not None:
        opts["from_dir"] = str(from_dir)
    if devices:
        opts["devices"] = list(devices)
    if napi_get:
        opts["napi_get"] = str(napi_get)
    if trace:
        opts["trace"] = str(trace)
    if rate_rps is not None:
        opts["rate_rps"] = float(rate_rps)
    if service_ns is not None:
        opts["service_ns"] = service_ns
    out = json.loads(_napisim.import_host_json(json.dumps(_core.json_plain(opts))))
    return (out["scenario"], out["notes"]) if with_notes else out["scenario"]


class TuneResult:
    """What napisim.tune() found: `report` (the CLI's JSON report), `front` and `final` (DataFrames:
    id, strategy, objective_us and its ci95, busy_cpus and its ci95, throughput, within_budget),
    `recommended` (dict or None), `commands` (for the host) and `what_if` (the front's members at
    0.5x and 2x load, `load_factor` and `on_front` columns)."""

    def __init__(self, report: dict) -> None:
        self.report = report

    @staticmethod
    def _rows(rows: list, **extra: Any):
        import pandas as pd

        out = []
        for r in rows:
            row = dict(extra)
            row.update({"id": r["id"], "strategy": r.get("strategy"), "objective_us": r["objective_us"]["mean"],
                        "objective_ci95": r["objective_us"]["ci95"], "busy_cpus": r["busy_cpus"]["mean"],
                        "busy_cpus_ci95": r["busy_cpus"]["ci95"], "throughput": r["throughput"]["mean"],
                        "within_budget": r.get("within_budget"), "on_front": r.get("on_front", True)})
            out.append(row)
        return pd.DataFrame(out)

    @property
    def front(self):
        return self._rows(self.report["front"])

    @property
    def final(self):
        return self._rows(self.report["final"])

    @property
    def recommended(self) -> Optional[dict]:
        return self.report["recommended"]

    @property
    def commands(self) -> list:
        rec = self.report["recommended"]
        return list(rec["commands"]) if rec else []

    @property
    def what_if(self):
        import pandas as pd

        frames = [self._rows(w["candidates"], load_factor=w["load_factor"]) for w in self.report["what_if"]]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def plot(self, ax=None):
        """The last rung's candidates and the front (objective vs busy CPUs), with the what-if fronts."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(7, 4.5))
        f = self.final
        ax.scatter(f["busy_cpus"], f["objective_us"], color="0.7", label="last rung")
        fr = self.front.sort_values("busy_cpus")
        ax.plot(fr["busy_cpus"], fr["objective_us"], "o-", color="C0", label="front (load x1)")
        wi = self.what_if
        for i, (factor, g) in enumerate(wi.groupby("load_factor") if len(wi) else []):
            g = g[g["on_front"]].sort_values("busy_cpus")
            ax.plot(g["busy_cpus"], g["objective_us"], "s--", color=f"C{i + 1}", label=f"front at load x{factor:g}")
        budget = self.report["options"].get("cpu_budget_cpus")
        if budget:
            ax.axvline(budget, color="C3", ls=":", label="CPU budget")
        rec = self.recommended
        if rec:
            ax.scatter([rec["busy_cpus"]["mean"]], [rec["objective_us"]["mean"]], s=160, facecolors="none",
                       edgecolors="C3", label="recommended")
        ax.set_xlabel("busy CPUs (server)")
        ax.set_ylabel(f"{self.report['options']['objective']} latency (us)")
        ax.set_yscale("log")
        ax.legend(fontsize="small")
        return ax

    def __repr__(self) -> str:
        rec = self.recommended
        return (f"<TuneResult {self.report['scenario']}: {len(self.report['front'])} on the front, "
                f"recommended {rec['id'] if rec else None}>")


def _column(pointer: str) -> str:
    return pointer.lstrip("/").replace("/", ".")  # sweep's flattened summary column


def tune(scenario: ScenarioLike, objective: str = "p99", cpu_budget: Optional[str] = None, *,
         seeds: Sequence[int] = (1, 2, 3, 4, 5), duration_s: Optional[float] = None,
         strategies: Optional[Sequence[str]] = None, eta: int = 3, rungs: int = 3, what_if: bool = True,
         workers: Optional[int] = None, executor: Any = None, cache_dir: Any = None, cache: bool = True,
         progress: bool = False, overrides: Optional[Mapping[str, Any]] = None, base_dir: Optional[str] = None,
         **kwargs: Any) -> TuneResult:
    """`napisim tune` from Python: successive halving over the receive-path strategies and their
    knobs, every candidate of a rung on the same seeds; returns a TuneResult. The runs go through
    napisim.sweep (workers, executor=a Dask Client, cache_dir/cache as there). cpu_budget: "20%" of
    the host's CPUs or a number of CPUs. ValueError names the option or JSON pointer at fault."""
    from . import _napisim
    from .sweep import sweep

    doc, bdir = _core.load_scenario(scenario, base_dir)
    over = _core.merge_overrides(overrides, kwargs)
    resolved = _napisim.validate_json(json.dumps(doc), _core.to_sets(over), None, bdir)
    if isinstance(cpu_budget, numbers.Real) and not isinstance(cpu_budget, bool):
        cpu_budget = f"{cpu_budget:g}"
    if cpu_budget is not None and not isinstance(cpu_budget, str):
        raise ValueError(f"--cpu-budget: expected \"20%\" or a number of CPUs, got {cpu_budget!r}")
    opts = {"objective": objective, "cpu_budget": cpu_budget or "", "seeds": [_core.check_seed(s) for s in seeds],
            "duration_s": float(duration_s or 0), "eta": eta, "rungs": rungs,
            "strategies": list(strategies or []), "what_if": bool(what_if), "base_dir": bdir}

    def run_batch(request_text: str) -> str:
        req = json.loads(request_text)
        variants = {j["key"]: dict(j["sets"], seed=j["seed"]) for j in req["jobs"]}
        df = sweep(doc, variants=variants, seeds=[None], workers=workers, executor=executor, cache_dir=cache_dir,
                   cache=cache, progress=progress, overrides=over, base_dir=bdir)
        out = {}
        for _, row in df.iterrows():
            out[row["variant"]] = {m: float(row[_column(m)]) for m in req["metrics"] if _column(m) in row}
        return json.dumps(out)

    return TuneResult(json.loads(_napisim.tune_json(resolved, json.dumps(opts), run_batch)))
