"""napisim.compare: `napisim compare` from Python. Each scenario runs on the same seeds (common random
numbers: seed s of every scenario draws the same arrivals and costs where the scenarios agree), and
each one's change against the first is computed seed by seed, with a 95% Student-t interval over
the seeds; a change is called when its interval excludes 0."""

import math
import re
from typing import Any, Iterable, Mapping, Optional

from .sweep import sweep
from .validation import stat

# (column of the sweep DataFrame, name as printed, unit, scale): the CLI's rows.
METRICS = [
    ("throughput", "throughput", "/s", 1.0),
    ("latency_ns.mean", "latency mean", "us", 1e-3),
    ("latency_ns.p50", "latency p50", "us", 1e-3),
    ("latency_ns.p90", "latency p90", "us", 1e-3),
    ("latency_ns.p99", "latency p99", "us", 1e-3),
    ("latency_ns.p99.9", "latency p99.9", "us", 1e-3),
    ("mutilate.read.avg", "mutilate read avg", "us", 1.0),
    ("mutilate.read.p99", "mutilate read p99", "us", 1.0),
    ("cpu.cpu_us_per_op", "CPU per op", "us", 1.0),
    ("cpu.busy_pct", "CPU busy", "%", 1.0),
]

def _stat(xs: list) -> tuple:
    s = stat(xs)
    return s.mean, s.ci


def compare(*scenarios: Any, seeds: Iterable[int] = (1, 2, 3, 4, 5), workers: Optional[int] = None,
            overrides: Optional[Mapping[str, Any]] = None, cache: bool = True, explain: bool = False, **kwargs: Any):
    """Runs `scenarios` (dicts, paths or names; the first is the baseline) on the same `seeds` and
    returns a DataFrame with one row per metric: `metric`, `unit`, `mean_<i>`, `ci95_<i>` for each
    scenario i, and for i >= 1 the paired relative change against scenario 0: `change_<i>`
    (fraction), `change_ci95_<i>` and `called_<i>`. `overrides`/keyword overrides apply to every
    run (as in napisim.sweep). df.attrs["scenarios"] names the columns' scenarios.

    explain=True adds the CLI's `compare --explain` rows: one per percentile band and stage of the
    latency breakdown (metric "<band> <stage>", unit us, `stage` True), whose `change_<i>` is the
    paired difference in µs (the stages' changes add up to the band latency's), called on it."""
    import pandas as pd

    if len(scenarios) < 2:
        raise ValueError(f"compare: expected at least two scenarios (the first is the baseline), got {len(scenarios)}")
    seeds = list(seeds)
    df = sweep(list(scenarios), seeds=seeds, workers=workers, progress=False, overrides=overrides, cache=cache,
               explain=explain, **kwargs)
    n = len(seeds)
    blocks = [df.iloc[i * n:(i + 1) * n] for i in range(len(scenarios))]
    rows = []
    for col, name, unit, scale in METRICS:
        if any(col not in b or b[col].isna().any() for b in blocks):
            continue
        values = [[float(x) * scale for x in b[col]] for b in blocks]
        row = {"metric": name, "unit": unit}
        for i, xs in enumerate(values):
            row[f"mean_{i}"], row[f"ci95_{i}"] = _stat(xs)
            if i == 0:
                continue
            if any(a == 0 for a in values[0]):
                row[f"change_{i}"], row[f"change_ci95_{i}"], row[f"called_{i}"] = math.nan, math.nan, False
                continue
            m, ci = _stat([b / a - 1.0 for a, b in zip(values[0], xs)])
            row[f"change_{i}"], row[f"change_ci95_{i}"] = m, ci
            row[f"called_{i}"] = n > 1 and abs(m) > ci
        rows.append(row)
    stage_cols = [c for c in df.columns if c.startswith("latency_breakdown.")] if explain else []
    for col in stage_cols:  # in the order the runs report bands and stages
        band, stage = re.fullmatch(r"latency_breakdown\.(all|p[\d.]+-p[\d.]+)\.([a-z].*)", col).groups()
        if any(b[col].isna().any() for b in blocks):
            continue
        values = [[float(x) * 1e-3 for x in b[col]] for b in blocks]
        row = {"metric": f"{band} {stage}", "unit": "us", "stage": True}
        for i, xs in enumerate(values):
            row[f"mean_{i}"], row[f"ci95_{i}"] = _stat(xs)
            if i > 0:
                m, ci = _stat([b - a for a, b in zip(values[0], xs)])
                row[f"change_{i}"], row[f"change_ci95_{i}"] = m, ci
                row[f"called_{i}"] = n > 1 and abs(m) > ci
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs["scenarios"] = [str(s) if not isinstance(s, dict) else s.get("name", f"scenario {i}")
                              for i, s in enumerate(scenarios)]
    out.attrs["seeds"] = seeds
    return out
