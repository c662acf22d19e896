"""Plot helpers (matplotlib) for napisim results and sweeps. Each returns the Axes it drew on.

    napisim.plots.latency_cdf({"softirq": r1, "threaded": r2})     # latency CDF per model
    napisim.plots.percentile_bars([r1, r2])                          # p50/p90/p99/p99.9 side by side
    napisim.plots.cpu_by_class(r1)                                   # CPU busy by class, per CPU
    napisim.plots.breakdown_bars(r1)                                 # latency by stage, per band (explain=True)
    napisim.plots.sweep_curve(df, x="workload.params.num_flows", y="latency_ns.p99")
    napisim.plots.frontier(df, x="cpu.busy_pct", y="latency_ns.p99")  # latency vs CPU trade-off

`results` arguments take a {label: Result} mapping or a list of Results (labelled by Result.label).
DataFrame helpers take napisim.sweep() output; seeds are averaged, with their spread as error bars.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional, Sequence, Union

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .result import Result

Results = Union[Mapping[str, Result], Iterable[Result]]

_UNITS = {"ns": 1.0, "us": 1e-3, "ms": 1e-6}
_UNIT_LABEL = {"ns": "ns", "us": "µs", "ms": "ms"}
# Stable colours for the execution classes (stack order: interrupt context first).
CLASS_COLORS = {
    "hardirq": "#d62728",
    "softirq": "#ff7f0e",
    "ksoftirqd": "#bcbd22",
    "kthread": "#9467bd",
    "system": "#1f77b4",
    "busy_poll": "#17becf",
    "busy_spin": "#7f7f7f",
    "user": "#2ca02c",
}


def _items(results: Results) -> list[tuple[str, Result]]:
    if isinstance(results, Result):
        return [(results.label, results)]
    if isinstance(results, Mapping):
        return [(str(k), v) for k, v in results.items()]
    return [(r.label, r) for r in results]


def _ax(ax):
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    return ax


def _metric_label(col: str, unit: str) -> str:
    if col.startswith("latency_ns."):
        return f"{col.split('.', 1)[1]} latency ({_UNIT_LABEL[unit]})"
    if col == "throughput":
        return "throughput (transactions/s)"
    if col == "cpu.busy_pct":
        return "CPU busy (% of all CPUs)"
    if col == "cpu.cpu_us_per_op":
        return "CPU µs per transaction"
    if col.startswith("cpu.by_class_pct."):
        return f"{col.rsplit('.', 1)[1]} CPU (%)"
    return col


def _scaled(series: pd.Series, col: str, unit: str) -> pd.Series:
    return series * _UNITS[unit] if col.startswith("latency_ns") else series


def latency_cdf(results: Results, ax=None, unit: str = "us", tail: bool = False, logx: bool = False):
    """Latency CDF per result. tail=True plots 1 - CDF on a log scale, which separates the tails."""
    ax = _ax(ax)
    for label, r in _items(results):
        c = r.latency_cdf(unit)
        x, y = c[f"latency_{unit}"], c["cdf"]
        if tail:
            y = (1.0 - y).clip(lower=1e-7)
        ax.step(x, y, where="post", label=label)
    ax.set_xlabel(f"request/response latency ({_UNIT_LABEL[unit]})")
    if tail:
        ax.set_yscale("log")
        ax.set_ylabel("fraction of transactions slower (1 − CDF)")
    else:
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1.01)
    if logx:
        ax.set_xscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend()
    return ax


def percentile_bars(results: Results, percentiles: Sequence[str] = ("p50", "p90", "p99", "p99.9"),
                    ax=None, unit: str = "us", logy: bool = False):
    """Grouped bars: one group per percentile, one bar per result."""
    ax = _ax(ax)
    items = _items(results)
    width = 0.8 / max(1, len(items))
    x = np.arange(len(percentiles))
    for i, (label, r) in enumerate(items):
        p = r.percentiles(unit)
        vals = [p.get(q, np.nan) for q in percentiles]
        ax.bar(x + (i - (len(items) - 1) / 2) * width, vals, width, label=label)
    ax.set_xticks(x, percentiles)
    ax.set_ylabel(f"latency ({_UNIT_LABEL[unit]})")
    if logy:
        ax.set_yscale("log")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    return ax


def cpu_by_class(result: Result, ax=None, classes: Optional[Sequence[str]] = None, title: Optional[str] = None):
    """Stacked bars of CPU busy by execution class (hardirq, softirq, ksoftirqd, kthread, system,
    user) for each CPU of one run."""
    ax = _ax(ax)
    pc = result.per_cpu
    cols = [c for c in pc.columns if c.startswith("by_class_pct.") and not c.endswith(".idle")]
    names = [c.split(".", 1)[1] for c in cols]
    if classes is not None:
        keep = [i for i, n in enumerate(names) if n in classes]
        cols, names = [cols[i] for i in keep], [names[i] for i in keep]
    bottom = np.zeros(len(pc))
    x = np.arange(len(pc))
    for col, name in zip(cols, names):
        vals = pc[col].to_numpy(dtype=float)
        ax.bar(x, vals, 0.8, bottom=bottom, label=name, color=CLASS_COLORS.get(name))
        bottom += vals
    step = 1 if len(pc) <= 32 else 4
    ax.set_xticks(x[::step], [str(i) for i in pc.index][::step])
    ax.set_xlabel("CPU")
    ax.set_ylabel("busy (% of the CPU)")
    ax.set_ylim(0, 105)
    ax.set_title(title if title is not None else result.label)
    ax.legend(fontsize="small", ncol=3)
    return ax


def breakdown_bars(result: Result, ax=None, unit: str = "us", bands: Optional[Sequence[str]] = None,
                   min_share: float = 0.02, title: Optional[str] = None):
    """Stacked bars of where the requests of each percentile band spent their latency (a run with
    explain=True): one bar per band, one segment per stage. Stages under `min_share` of every
    band's latency are summed into "other"."""
    ax = _ax(ax)
    df = result.breakdown
    if df.empty:
        raise ValueError("breakdown_bars: the result has no latency breakdown; run it with explain=True")
    if bands is not None:
        df = df.loc[list(bands)]
    stages = [c for c in df.columns if c not in ("requests", "latency_ns") and "[" not in c]  # not the splits
    share = df[stages].div(df["latency_ns"].where(df["latency_ns"] > 0, 1.0), axis=0)
    keep = [s for s in stages if (share[s] >= min_share).any()]
    other = df[[s for s in stages if s not in keep]].sum(axis=1)
    scale = _UNITS[unit]
    x = np.arange(len(df))
    bottom = np.zeros(len(df))
    cmap = plt.get_cmap("tab20")
    for i, s in enumerate(keep):
        vals = df[s].to_numpy(dtype=float) * scale
        ax.bar(x, vals, 0.7, bottom=bottom, label=s, color=cmap(i % 20))
        bottom += vals
    if (other > 0).any():
        vals = other.to_numpy(dtype=float) * scale
        ax.bar(x, vals, 0.7, bottom=bottom, label="other", color="#cccccc")
    ax.set_xticks(x, list(df.index))
    ax.set_xlabel("requests of the percentile band")
    ax.set_ylabel(f"mean latency ({_UNIT_LABEL[unit]})")
    ax.set_title(title if title is not None else result.label)
    ax.legend(fontsize="small", ncol=2)
    ax.grid(True, axis="y", alpha=0.3)
    return ax


def _aggregate(df: pd.DataFrame, keys: list[str], y: str) -> pd.DataFrame:
    g = df.groupby(keys, sort=False, dropna=False)[y]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["std"] = out["std"].fillna(0.0)
    return out


def sweep_curve(df: pd.DataFrame, x: str, y: str = "latency_ns.p99", hue: Optional[str] = "model",
                ax=None, unit: str = "us", logx: bool = False, logy: bool = False, marker: str = "o"):
    """Metric `y` against swept parameter `x`, one line per `hue` value (model or variant); seeds are
    averaged and their standard deviation drawn as error bars."""
    ax = _ax(ax)
    if hue is not None and hue not in df.columns:
        hue = None
    groups = [(None, df)] if hue is None else list(df.groupby(hue, sort=False))
    for label, sub in groups:
        a = _aggregate(sub, [x], y).sort_values(x)
        ax.errorbar(a[x], _scaled(a["mean"], y, unit), yerr=_scaled(a["std"], y, unit), marker=marker,
                    capsize=3, label=None if label is None else str(label))
    ax.set_xlabel(x)
    ax.set_ylabel(_metric_label(y, unit))
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    if hue is not None:
        ax.legend(title=hue)
    return ax


def frontier(df: pd.DataFrame, x: str = "cpu.busy_pct", y: str = "latency_ns.p99", hue: Optional[str] = "model",
             by: Optional[str] = None, annotate: Optional[str] = None, ax=None, unit: str = "us",
             logy: bool = False):
    """The latency-vs-CPU trade-off: one point per configuration (seeds averaged), one line per
    `hue`, points joined in order of `by` (e.g. the load) or of x. Lower-left is better."""
    ax = _ax(ax)
    if hue is not None and hue not in df.columns:
        hue = None
    order_key = by or x
    keys = list(dict.fromkeys(c for c in (by, annotate) if c is not None))
    groups = [(None, df)] if hue is None else list(df.groupby(hue, sort=False))
    for label, sub in groups:
        if keys:
            ax_x = _aggregate(sub, keys, x).rename(columns={"mean": "x"})
            ax_y = _aggregate(sub, keys, y).rename(columns={"mean": "y"})
            a = ax_x[keys + ["x"]].merge(ax_y[keys + ["y"]], on=keys)
            a = a.sort_values(order_key if order_key in a.columns else "x")
        else:
            a = pd.DataFrame({"x": sub[x].to_numpy(), "y": sub[y].to_numpy()}).sort_values("x")
        line = ax.plot(a["x"], _scaled(a["y"], y, unit), marker="o", label=None if label is None else str(label))[0]
        if annotate is not None and annotate in a.columns:
            ys = _scaled(a["y"], y, unit)
            for xv, yv, text in zip(a["x"], ys, a[annotate]):
                if isinstance(text, float) and text.is_integer():
                    text = int(text)
                ax.annotate(str(text), (xv, yv), textcoords="offset points", xytext=(4, 4), fontsize="x-small",
                            color=line.get_color())
    ax.set_xlabel(_metric_label(x, unit))
    ax.set_ylabel(_metric_label(y, unit))
    if logy:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    if hue is not None:
        ax.legend(title=hue)
    return ax
