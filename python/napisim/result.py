"""Result: one run's result document with pandas views (summary, per-CPU, histogram, latency CDF)."""

from __future__ import annotations

import json
from functools import cached_property
from typing import Any, Optional

import pandas as pd

from ._core import iter_flat


def flatten(d: dict, sep: str = ".") -> dict:
    """Nested dicts to one level: {"latency_ns": {"p99": 1}} -> {"latency_ns.p99": 1}."""
    return {k if sep == "." else k.replace(".", sep): v for k, v in iter_flat(d)}


def model_label(scenario: dict) -> str:
    """"napi_irq", or "napi_threaded+napi_defer" when a scenario composes models."""
    return "+".join(m.get("name", "?") for m in scenario.get("models", [])) or "none"


class Result:
    """The result of one napisim run.

    raw          the result document (dict), exactly as `napisim run --format json` prints it
    summary      pandas Series, flattened: throughput, latency_ns.p99, cpu.busy_pct, cpu.by_class_pct.softirq, ...
    per_cpu      DataFrame, one row per CPU (busy_pct, by_class_pct.*, irqs, ...)
    clients      {host: Series} of each Linux client host's figures (cpu.*, irqs, napi_polls, ...)
    client_per_cpu(host)  DataFrame, one row per CPU of that client host
    intervals    DataFrame, one row per interval report (run with interval=S): t_start_s, t_end_s,
                 throughput, latency_ns.*, cpu.by_class_pct.*, ... and clients.<host>.cpu.*
    breakdown    DataFrame of the latency attribution (run with explain=True): one row per percentile
                 band (p0-p50, ..., all), columns requests, latency_ns and one per stage in path
                 order (mean ns per request of the band; the stages sum to latency_ns), then the
                 waiting stages' splits "<stage>[<class>]" (each stage's sum to it)
    histogram    DataFrame of the latency histogram buckets: lo, hi, count, cdf (ns)
    latency_cdf  DataFrame latency/cdf for plotting
    scenario     the resolved scenario the run used; context: provenance (version, seed, hash)
    """

    def __init__(self, raw: dict, label: Optional[str] = None):
        self.raw = raw
        self.label = label or model_label(raw.get("scenario", {}))

    @classmethod
    def from_json(cls, text: str, label: Optional[str] = None) -> "Result":
        return cls(json.loads(text), label)

    @classmethod
    def load(cls, path, label: Optional[str] = None) -> "Result":
        with open(path, encoding="utf-8") as f:
            return cls(json.load(f), label)

    def save(self, path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.raw, f, indent=1)

    @property
    def context(self) -> dict:
        return self.raw.get("context", {})

    @property
    def scenario(self) -> dict:
        return self.raw.get("scenario", {})

    @property
    def fingerprint(self) -> str:
        return self.raw.get("fingerprint", "")

    @property
    def model(self) -> str:
        return model_label(self.scenario)

    @cached_property
    def summary(self) -> pd.Series:
        return pd.Series(flatten(self.raw.get("summary", {})), name=self.label)

    @cached_property
    def per_cpu(self) -> pd.DataFrame:
        rows = [flatten(r) for r in self.raw.get("per_cpu", [])]
        df = pd.DataFrame(rows)
        if "cpu" in df.columns:
            df = df.set_index("cpu")
        return df

    @cached_property
    def clients(self) -> dict:
        """Each Linux client host's figures, flattened as `summary` is (empty with idealised clients)."""
        out = {}
        for host, c in self.raw.get("clients", {}).items():
            plain = {k: v for k, v in c.items() if k not in ("host", "per_cpu", "models")}
            out[host] = pd.Series(flatten(plain), name=f"{self.label} {host}")
        return out

    def client_per_cpu(self, host: str = "client0") -> pd.DataFrame:
        """One row per CPU of Linux client host `host`."""
        rows = [flatten(r) for r in self.raw.get("clients", {}).get(host, {}).get("per_cpu", [])]
        df = pd.DataFrame(rows)
        if "cpu" in df.columns:
            df = df.set_index("cpu")
        return df

    @cached_property
    def intervals(self) -> pd.DataFrame:
        """The interval reports (napisim.run(..., interval=S), the CLI's --interval), one row each,
        flattened as `summary` is; empty when the run made none."""
        return pd.DataFrame([flatten(iv) for iv in self.raw.get("intervals", [])])

    @cached_property
    def breakdown(self) -> pd.DataFrame:
        """The latency attribution (napisim.run(..., explain=True), the CLI's --explain): one row
        per percentile band, indexed by band name; columns requests, latency_ns, then each stage's
        mean ns in path order, then the waiting stages' splits by what their CPU did meanwhile,
        "<stage>[<class>]" (who was running instead; [self]: the waiting thread itself): a stage's
        split columns sum to it, so they are not to be added to the stages. Empty when the run has
        none."""
        b = self.raw.get("latency_breakdown")
        if not b:
            return pd.DataFrame()
        stages = list(b["stages"])
        splits = list(b.get("splits", []))
        rows = [{"requests": band["requests"], "latency_ns": band["latency_ns"],
                 **{s: band["stage_ns"].get(s, 0.0) for s in stages},
                 **{s: band.get("split_ns", {}).get(s, 0.0) for s in splits}} for band in b["bands"]]
        return pd.DataFrame(rows, index=pd.Index([band["band"] for band in b["bands"]], name="band"),
                            columns=["requests", "latency_ns"] + stages + splits)

    @cached_property
    def histogram(self) -> pd.DataFrame:
        buckets = self.raw.get("histogram", {}).get("buckets", [])
        df = pd.DataFrame(buckets, columns=["lo", "hi", "count"])
        total = df["count"].sum()
        df["cdf"] = df["count"].cumsum() / total if total else 0.0
        return df

    def latency_cdf(self, unit: str = "us") -> pd.DataFrame:
        """Columns `latency_<unit>` (each bucket's upper edge) and `cdf`, starting at (min, 0)."""
        scale = {"ns": 1.0, "us": 1e-3, "ms": 1e-6, "s": 1e-9}[unit]
        h = self.histogram
        if h.empty:
            return pd.DataFrame({f"latency_{unit}": [], "cdf": []})
        x = [h["lo"].iloc[0] * scale] + list(h["hi"] * scale)
        y = [0.0] + list(h["cdf"])
        return pd.DataFrame({f"latency_{unit}": x, "cdf": y})

    def percentiles(self, unit: str = "us") -> pd.Series:
        """p50, p90, p99, ... of the client-observed latency, in `unit`."""
        scale = {"ns": 1.0, "us": 1e-3, "ms": 1e-6, "s": 1e-9}[unit]
        lat = self.raw.get("summary", {}).get("latency_ns", {})
        return pd.Series({k: v * scale for k, v in lat.items() if k.startswith("p")}, name=self.label)

    def __getitem__(self, key: str) -> Any:
        """result["latency_ns.p99"] is result.summary["latency_ns.p99"]."""
        return self.summary[key]

    def __repr__(self) -> str:
        s = self.raw.get("summary", {})
        lat = s.get("latency_ns", {})
        cpu = s.get("cpu", {})
        parts = [f"<napisim.Result {self.context.get('scenario', '?')} [{self.label}]"]
        if "throughput" in s:
            parts.append(f"qps={s['throughput']:.4g}")
        for p in ("p50", "p99"):
            if p in lat:
                parts.append(f"{p}={lat[p] / 1e3:.4g}us")
        if "busy_pct" in cpu:
            parts.append(f"cpu={cpu['busy_pct']:.3g}%")
        return " ".join(parts) + ">"
