"""Reading a run's timeline (`napisim run --trace FILE`, `napisim.run(..., trace=FILE)`) back as pandas.

    t = napisim.read_trace("t.json")
    t[(t.kind == "task") & (t.name == "runnable")].groupby("host").dur_ns.describe()

One row per slice: host ("server", "client0", ...), kind ("cpu": what a CPU ran, "napi": one
napi_poll, "task": a thread running or runnable), cpu (the CPU for cpu/napi rows, the CPU a task
ran or waited on), task (thread name: the running task of a cpu row at task level, the thread of a
task row), tid (its task id), name (the class, "napi_poll", "running" or "runnable"), start_ns,
dur_ns, and for napi rows work and budget. IRQ instants are in `read_trace(path, irqs=True)`, and
the sampled requests of a workload with latency attribution (tcp_rr) in
`read_trace(path, requests=True)`: one row per stage of each traced request (flow, request_ns: the
request's start, latency_ns, name: the stage, start_ns, dur_ns).
"""

from __future__ import annotations

import json
import os
from typing import Union

import pandas as pd

PathLike = Union[str, "os.PathLike[str]"]


def _ns(us: float) -> int:
    # The file's µs carry three decimals: exact nanoseconds.
    return int(round(us * 1000.0))


def read_trace(path: PathLike, irqs: bool = False, requests: bool = False) -> pd.DataFrame:
    """The slices of a napisim trace file as a DataFrame (module docstring); with irqs=True, the IRQ
    and IPI instants instead (host, cpu, name, start_ns); with requests=True, the stages of the
    sampled requests instead. Raises ValueError for a file that is not a napisim trace."""
    with open(path, encoding="utf-8") as f:
        try:
            doc = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{os.fspath(path)}: not a JSON trace: {e}") from None
    if not isinstance(doc, dict) or "napisim_window_ns" not in doc.get("otherData", {}):
        raise ValueError(f"{os.fspath(path)}: not a napisim trace (no otherData.napisim_window_ns)")
    events = doc["traceEvents"]
    process, thread = {}, {}
    for e in events:
        if e.get("ph") != "M":
            continue
        if e["name"] == "process_name":
            process[e["pid"]] = e["args"]["name"]
        elif e["name"] == "thread_name":
            thread[(e["pid"], e["tid"])] = e["args"]["name"]
    # "<host> CPUs" / "<host> tasks": pid 2h+1 / 2h+2; a CPU process's NAPI track is tid nr_cpus + n.
    ncpus = {}
    for (pid, tid), name in thread.items():
        if process.get(pid, "").endswith(" CPUs") and not name.endswith(" NAPI"):
            ncpus[pid] = ncpus.get(pid, 0) + 1
    if requests:
        rows, parent = [], {}
        for e in events:
            if e.get("ph") != "X" or e.get("cat") not in ("request", "stage"):
                continue
            if e["cat"] == "request":
                parent[e["tid"]] = (e["args"]["start_ns"], e["args"]["latency_ns"])
                continue
            start, latency = parent[e["tid"]]
            rows.append({"flow": e["tid"], "request_ns": start, "latency_ns": latency, "name": e["name"],
                         "start_ns": _ns(e["ts"]), "dur_ns": _ns(e["dur"])})
        return pd.DataFrame(rows, columns=["flow", "request_ns", "latency_ns", "name", "start_ns", "dur_ns"])
    rows = []
    for e in events:
        ph, pid = e.get("ph"), e.get("pid")
        pname = process.get(pid, "")
        host = pname.rsplit(" ", 1)[0]
        if irqs:
            if ph == "i":
                rows.append({"host": host, "cpu": e["tid"], "name": e["name"], "start_ns": _ns(e["ts"])})
            continue
        if ph != "X" or e.get("cat") in ("request", "stage"):
            continue
        args = e.get("args", {})
        row = {"host": host, "kind": e["cat"] if e["cat"] != "sched" else "task", "cpu": e["tid"], "task": None,
               "tid": None, "name": e["name"], "start_ns": _ns(e["ts"]), "dur_ns": _ns(e["dur"])}
        if e["cat"] == "cpu":
            row["task"], row["tid"] = args.get("task"), args.get("tid")
        elif e["cat"] == "napi":
            row["cpu"] = e["tid"] - ncpus.get(pid, 0)
            row.update(napi=args.get("napi"), work=args.get("work"), budget=args.get("budget"))
        else:
            row.update(task=thread.get((pid, e["tid"])), tid=e["tid"], cpu=args.get("cpu"))
        rows.append(row)
    if irqs:
        return pd.DataFrame(rows, columns=["host", "cpu", "name", "start_ns"])
    cols = ["host", "kind", "cpu", "task", "tid", "name", "start_ns", "dur_ns", "napi", "work", "budget"]
    return pd.DataFrame(rows, columns=cols)
