#!/usr/bin/python3
"""Writes notebooks/*.ipynb (without outputs) from the cell sources below.

The notebooks are committed without outputs; edit them here or in Jupyter (then clear outputs with
`jupyter nbconvert --clear-output --inplace notebooks/*.ipynb`). Regenerate:
    /usr/bin/python3 notebooks/make_notebooks.py
"""

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

SETUP = '''\
import os, sys
try:
    import napisim
except ImportError:  # a source checkout: use the build tree (README, "Python")
    sys.path.insert(0, os.path.abspath(os.path.join("..", "build", "python")))
    import napisim
import matplotlib.pyplot as plt
import pandas as pd
from napisim import plots

# CI executes every notebook with NAPISIM_NOTEBOOK_SMALL=1: tiny durations and loads, same story.
SMALL = os.environ.get("NAPISIM_NOTEBOOK_SMALL") == "1"
pd.set_option("display.precision", 3)
pd.set_option("display.width", 140)
print("napisim", napisim.__version__, "| models:", ", ".join(napisim.list_models()), "| small:", SMALL)'''

USES = '''\
def uses(*models):
    """A variant that sets the scenario's model list, or None when a model is missing in this build."""
    return None if any(m is None for m in models) else {"models": list(models)}'''


MODELS_OF = '''\
def models_of(name, fallback):
    """The model list of a published-comparison scenario file as a variant, or `fallback` when this
    checkout has no such file."""
    if napisim.has_scenario(name):
        return {"models": napisim.load_scenario(name)[0]["models"]}
    return fallback'''


def md(text):
    return new_markdown_cell(text.strip("\n"))


def code(text):
    return new_code_cell(text.strip("\n"))


def write(name, cells):
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    nbformat.write(nb, HERE / f"{name}.ipynb")


# ------------------------------------------------------------------------------------------------
write("01_quickstart", [
    md("""
# napisim quickstart

napisim simulates how Linux schedules network receive processing — NIC queues and interrupts, NAPI
polling, softirqs and ksoftirqd, kernel threads, the CFS/EEVDF scheduler — under a neper-style
`tcp_rr` workload, and reports what kernel developers measure: transactions per second, latency
percentiles, CPU busy by class, CPU cost per transaction, interrupt counts.

This notebook shows the Python side:

* `napisim.run()` runs one scenario and returns a `Result` with pandas views;
* `napisim.sweep()` runs a grid of configurations in parallel and returns a tidy DataFrame;
* `napisim.plots` draws the usual pictures.

SimGrid, the simulation engine, allows one simulation per process, so every run happens in a fresh
worker process: call `run()` as often as you like from one notebook.
"""),
    code(SETUP),
    md("""
## Models and scenarios

A *model* is one receive-path strategy from the kernel debate (classic softirq NAPI, threaded NAPI,
workqueue NAPI, busy polling, IRQ deferral...). A *scenario* is a JSON document: topology, NICs,
kernel sysctls, cost parameters, the models, the workload. `describe()` lists a model's knobs with
units and allowed values, as `napisim describe` does.
"""),
    code('''\
pd.Series(napisim.model_summaries(), name="summary").to_frame()'''),
    code('''\
napisim.describe("napi_irq")'''),
    md("""
`validate()` applies overrides and spells out every default — exactly what a run will use. Named
scenarios are files under `scenarios/` (`napisim.list_scenarios()`); a dict or a path works too.
"""),
    code('''\
print(napisim.list_scenarios())
sc = napisim.validate("quickstart")
print(sc["description"])
pd.DataFrame({"nic": sc["nics"][0]}).T'''),
    md("""
## One run

Overrides use the CLI's `--set` semantics: dotted paths (or `__` in keyword names) into the scenario.
The quickstart is a small host: 8 CPUs, one 4-queue NIC whose IRQs land on CPUs 0–3, 64 flows of
1-byte requests served by 4 threads.
"""),
    code('''\
DURATION = 0.02 if SMALL else 0.2
r = napisim.run("quickstart", duration_s=DURATION)
r'''),
    code('''\
r.summary[["throughput", "latency_ns.p50", "latency_ns.p90", "latency_ns.p99", "latency_ns.p99.9",
           "cpu.busy_pct", "cpu.cpu_us_per_op", "irqs", "packets_per_irq"]]'''),
    md("""
Per CPU: the IRQ CPUs (0–3) carry the hard-IRQ and NET_RX softirq time; the server threads' user and
system time lands wherever the scheduler put them.
"""),
    code('''\
r.per_cpu[[c for c in r.per_cpu.columns if c == "busy_pct" or c.startswith("by_class_pct.")]]'''),
    code('''\
fig, axes = plt.subplots(1, 2, figsize=(12, 4))
plots.cpu_by_class(r, ax=axes[0])
plots.latency_cdf(r, ax=axes[1])
fig.tight_layout()'''),
    md("""
Bad input never falls back to a default: the error names the JSON pointer of the offending value.
"""),
    code('''\
try:
    napisim.run("quickstart", workload__params__num_flowz=10)
except ValueError as e:
    print("ValueError:", e)'''),
    md("""
## A sweep

Closed-loop `tcp_rr` load grows with the number of flows. `sweep()` runs the grid × seeds on a
process pool (one simulation per process), shows a progress bar, and caches each finished point
(keyed by the hash of the resolved scenario) so re-running a notebook, or resuming an interrupted
sweep, only computes what is missing.
"""),
    code('''\
FLOWS = [8, 32] if SMALL else [4, 8, 16, 32, 64, 128, 256]
SEEDS = [1] if SMALL else [1, 2, 3]
df = napisim.sweep("quickstart", grid={"workload.params.num_flows": FLOWS}, seeds=SEEDS, duration_s=DURATION)
df[["workload.params.num_flows", "seed", "throughput", "latency_ns.p50", "latency_ns.p99", "cpu.busy_pct"]]'''),
    code('''\
print(df.attrs["napisim"])
again = napisim.sweep("quickstart", grid={"workload.params.num_flows": FLOWS}, seeds=SEEDS, duration_s=DURATION,
                      progress=False)
print("second time:", again.attrs["napisim"]["computed"], "computed,", again.attrs["napisim"]["cached"], "from the cache")'''),
    code('''\
fig, axes = plt.subplots(1, 3, figsize=(15, 4))
x = "workload.params.num_flows"
plots.sweep_curve(df, x=x, y="throughput", ax=axes[0], logx=True)
plots.sweep_curve(df, x=x, y="latency_ns.p99", ax=axes[1], logx=True)
plots.frontier(df, x="cpu.busy_pct", y="latency_ns.p99", by=x, annotate=x, ax=axes[2])
fig.tight_layout()'''),
    md("""
Throughput grows with the offered load until the IRQ CPUs saturate; past that point more flows only
queue up and the tail latency climbs. The other notebooks compare receive-path strategies on this
kind of trade-off.
"""),
])

# ------------------------------------------------------------------------------------------------
write("02_softirq_vs_threaded", [
    md("""
# Softirq NAPI vs threaded NAPI (Wei Wang, 2020)

In September 2020 Wei Wang (Google) posted "implement kthread based napi poll", merged in Linux 5.12 as
threaded NAPI: instead of raising the NET_RX softirq on the CPU that took the interrupt, each NAPI
instance gets a kernel thread (`napi/<dev>-<id>`) that the scheduler places like any other task.

His cover letter compared the two on neper `tcp_rr` with 1000 flows, RPS/RFS off, on a host with 56
hyperthreads and a 100 Gb/s NIC, at three message sizes:

| mode | req/resp | QPS | p50 | p90 | p99 | p99.9 |
|---|---|---|---|---|---|---|
| softirq | 1B/1B | 2.19M | 284us | 987us | 1.1ms | 1.56ms |
| kthread | 1B/1B | 2.14M | 295us | 987us | 1.0ms | 1.17ms |
| softirq | 5KB/5KB | 1.31M | 869us | 1.06ms | 1.28ms | 2.38ms |
| kthread | 5KB/5KB | 1.32M | 878us | 1.06ms | 1.26ms | 1.66ms |
| softirq | 1MB/1MB | 10.78K | 84ms | 166ms | 234ms | 294ms |
| kthread | 1MB/1MB | 10.83K | 82ms | 173ms | 262ms | 320ms |

The story: for small and medium messages the two are within a few percent on throughput and median,
but the kthread cuts the extreme tail (p99.9) by a quarter to a third — softirq work that overruns its
budget lands in ksoftirqd or delays whatever runs on the IRQ CPU, while a kthread is scheduled
fairly. At 1 MB the link is the bottleneck and no mode wins. In napisim the difference must come only
from *where and when* NAPI work runs, with the same cost parameters for both modes.

Wei's later application benchmark restricted the kthreads to the 8 CPUs taking the RX interrupts;
that configuration is included as a third variant.
"""),
    code(SETUP),
    code(USES),
    md("""
## Scenarios and variants

`scenarios/wei2020/tcp_rr_{1B,5KB,1MB}.json` describe Wei's setup (their `description` lists the
assumptions). In CI-sized runs the flows and the duration shrink; the 1 MB case also needs fewer flows
to finish transactions within a short run.
"""),
    code(MODELS_OF),
    code('''\
SIZES = {"1B": 1, "5KB": 5120, "1MB": 1048576}

def base_for(size):
    name = f"wei2020/tcp_rr_{size}"
    if napisim.has_scenario(name):
        return name, {}
    print(f"note: scenario {name} not found; using quickstart with {SIZES[size]}-byte messages")
    return "quickstart", {"workload.params.request_size": SIZES[size], "workload.params.response_size": SIZES[size]}

def size_overrides(size):
    if SMALL:
        flows = 32 if size == "1MB" else 200
        return {"duration_s": 0.02, "warmup_s": 0.005, "workload.params.num_flows": flows}
    return {"duration_s": 2.0, "warmup_s": 0.5} if size == "1MB" else {}

irq_cpus = napisim.validate(base_for("1B")[0])["nics"][0]["irq_affinity"]
SEEDS = [1] if SMALL else [1, 2]

def variants_for(size):
    base, over = base_for(size)
    return napisim.valid_variants(base, {
        "softirq": models_of(f"wei2020/tcp_rr_{size}", uses(napisim.model_spec("napi_irq"))),
        "kthread": models_of(f"wei2020/tcp_rr_{size}_kthread", uses(napisim.model_spec("napi_threaded"))),
        f"kthread on IRQ CPUs {irq_cpus}": uses(napisim.model_spec("napi_threaded", cpumask=irq_cpus)),
    }, **over, **size_overrides(size))

list(variants_for("1B"))'''),
    code('''\
frames = []
for size in SIZES:
    base, over = base_for(size)
    d = napisim.sweep(base, variants=variants_for(size), seeds=SEEDS, overrides={**over, **size_overrides(size)})
    d.insert(0, "size", size)
    frames.append(d)
df = pd.concat(frames, ignore_index=True)
US = ["latency_ns.p50", "latency_ns.p90", "latency_ns.p99", "latency_ns.p99.9"]
table = df.groupby(["size", "variant"], sort=False)[["throughput"] + US + ["cpu.busy_pct"]].mean()
table[US] = table[US] / 1e3  # µs
table.rename(columns=lambda c: c.replace("latency_ns.", "") + (" (us)" if c.startswith("latency") else ""))'''),
    md("""
## Against the published numbers

The relative change of the kthread over softirq, per size and metric, next to Wei's. Absolute values
depend on hardware napisim does not model in detail; the directions are what should hold.
"""),
    code('''\
published = pd.DataFrame(
    [("1B", "softirq", 2.19e6, 284, 987, 1100, 1560), ("1B", "kthread", 2.14e6, 295, 987, 1000, 1170),
     ("5KB", "softirq", 1.31e6, 869, 1060, 1280, 2380), ("5KB", "kthread", 1.32e6, 878, 1060, 1260, 1660),
     ("1MB", "softirq", 10.78e3, 84e3, 166e3, 234e3, 294e3), ("1MB", "kthread", 10.83e3, 82e3, 173e3, 262e3, 320e3)],
    columns=["size", "variant", "throughput", "p50", "p90", "p99", "p99.9"]).set_index(["size", "variant"])

sim = table.rename(columns=lambda c: c.replace("latency_ns.", ""))[published.columns]
rows = []
if "kthread" in set(df["variant"]):
    for size in SIZES:
        for metric in published.columns:
            rows.append({"size": size, "metric": metric,
                         "published %": 100 * (published.loc[(size, "kthread"), metric] / published.loc[(size, "softirq"), metric] - 1),
                         "napisim %": 100 * (sim.loc[(size, "kthread"), metric] / sim.loc[(size, "softirq"), metric] - 1)})
    rel = pd.DataFrame(rows).set_index(["size", "metric"])
    display(rel.round(1))
else:
    print("note: no threaded NAPI model in this build: only the softirq rows are simulated")
    display(sim)'''),
    code('''\
if "kthread" in set(df["variant"]):
    fig, axes = plt.subplots(1, 3, figsize=(15, 4), sharey=False)
    for ax, size in zip(axes, SIZES):
        rel.loc[size].plot.bar(ax=ax, rot=0)
        ax.axhline(0, color="k", lw=0.8)
        ax.set_title(f"kthread vs softirq, {size}")
        ax.set_ylabel("change (%)")
    fig.tight_layout()'''),
    md("""
## Paired on the same seeds: `napisim.compare`

Means of a few seeds hide how much of a difference is noise. `napisim.compare` (the CLI's
`napisim compare A B`) runs both scenarios on the same seeds, so seed *s* of the kthread run sees the
arrivals and cost draws of seed *s* of the softirq run, and gives each metric's per-seed change with
its 95% interval: a change is *called* when the interval excludes zero.
"""),
    code('''\
if napisim.has_scenario("wei2020/tcp_rr_1B_kthread") and napisim.has_model("napi_threaded"):
    cmp = napisim.compare("wei2020/tcp_rr_1B", "wei2020/tcp_rr_1B_kthread", seeds=[1, 2, 3],
                          overrides=size_overrides("1B"))
    display(cmp[["metric", "unit", "mean_0", "mean_1", "change_1", "change_ci95_1", "called_1"]].round(3))
else:
    print("note: no threaded NAPI scenario or model in this build")'''),
    md("""
## Latency percentiles and where the CPU time goes

Each sweep point's full result stays in the cache; `napisim.sweep_result(key)` loads it back as a
`Result`, with the per-CPU breakdown and the latency histogram.
"""),
    code('''\
one = df[df["seed"] == SEEDS[0]]
fig, axes = plt.subplots(1, 3, figsize=(15, 4))
for ax, size in zip(axes, SIZES):
    res = {row.variant: napisim.sweep_result(row.key) for row in one[one["size"] == size].itertuples()}
    plots.percentile_bars(res, ax=ax, unit="ms" if size == "1MB" else "us")
    ax.set_title(size)
fig.tight_layout()'''),
    code('''\
res_1b = {row.variant: napisim.sweep_result(row.key) for row in one[one["size"] == "1B"].itertuples()}
fig, axes = plt.subplots(len(res_1b), 1, figsize=(14, 3.2 * len(res_1b)), squeeze=False)
for ax, (label, res) in zip(axes[:, 0], res_1b.items()):
    plots.cpu_by_class(res, ax=ax, title=f"1B, {label}")
fig.tight_layout()'''),
    code('''\
plots.latency_cdf(res_1b, tail=True, logx=True).set_title("1B: 1 - CDF (the tail)");'''),
    md("""
## Looking inside one run: the timeline

A result is an average over the measured window. `napisim run --trace FILE` (here
`napisim.run(..., trace=FILE)`) also writes what every CPU of both hosts ran, slice by slice, the
NAPI polls, and each thread's running and runnable time, as a trace that
[ui.perfetto.dev](https://ui.perfetto.dev) opens. `napisim.read_trace` gives it back as a DataFrame:
below, the CPU time of each class in 2 ms of the 1B softirq run, and how long threads waited between
their wakeup and the CPU (the `runnable` slices)."""),
    code('''\
import tempfile
trace_file = os.path.join(tempfile.gettempdir(), "napisim_wei_1b_trace.json")
base, over = base_for("1B")
napisim.run(base, overrides={**over, **size_overrides("1B")}, trace=trace_file, trace_for=0.002)
tl = napisim.read_trace(trace_file)
cpu = tl[tl["kind"] == "cpu"]
display((cpu.groupby(["host", "name"])["dur_ns"].sum().unstack(fill_value=0) / 1e3).round(1))  # µs per class
waits = tl[(tl["kind"] == "task") & (tl["name"] == "runnable")]
display(waits.groupby("host")["dur_ns"].describe(percentiles=[0.5, 0.9, 0.99]).round(0))
print(f"open {trace_file} in https://ui.perfetto.dev for the timeline")'''),
    md("""
With softirq NAPI the NET_RX work shows up as `softirq` (and `ksoftirqd` when it overruns) time on
the IRQ CPUs; with threaded NAPI it becomes `kthread` time that the scheduler can move and preempt —
spread over all CPUs when unpinned, concentrated on the IRQ CPUs in Wei's application setup.

## Why the tails differ: where each band's latency went

`napisim run --explain` (here `napisim.run(..., explain=True)`) cuts every measured request's
latency into the stages of its path on both hosts — the wire, the NIC ring, waiting for NET_RX (a
pending softirq, a runnable ksoftirqd or NAPI kthread), the poll, the socket queue, the wakeup and
run-queue wait of the neper thread, its epoll batch, the syscalls — and reports the mean of each
stage for the requests of each percentile band. The stages of each request sum exactly to its
latency, so the bands' bars below are their mean latencies. Below: the 1B softirq and kthread runs,
the stages that hold each band's requests longest, and the stages where the two modes differ most
in the tail.
"""),
    code('''\
explained = {}
for label, name in [("softirq", "wei2020/tcp_rr_1B"), ("kthread", "wei2020/tcp_rr_1B_kthread")]:
    if napisim.has_scenario(name):
        explained[label] = napisim.run(name, overrides=size_overrides("1B"), explain=True, label=label)
bd = pd.concat({label: r.breakdown for label, r in explained.items()}, names=["variant", "band"])
stages = [c for c in bd.columns if c not in ("requests", "latency_ns")]
for (label, band), row in bd.iterrows():
    if band in ("p0-p50", "p99-p99.9", "p99.9-p99.99"):
        top = row[stages].sort_values(ascending=False).head(3)
        print(f"{label:8s} {band:13s} {row.latency_ns / 1e3:8.1f} us: "
              + ", ".join(f"{s} {v / 1e3:.1f}" for s, v in top.items()))'''),
    code('''\
fig, axes = plt.subplots(1, len(explained), figsize=(7 * len(explained), 4.5), squeeze=False, sharey=True)
for ax, (label, r) in zip(axes[0], explained.items()):
    plots.breakdown_bars(r, ax=ax, title=f"1B, {label}")
fig.tight_layout()
if {"softirq", "kthread"} <= set(explained):
    tail = "p99-p99.9"
    diff = (bd.loc[("kthread", tail), stages] - bd.loc[("softirq", tail), stages]) / 1e3
    display(diff[diff.abs().sort_values(ascending=False).index].head(6).round(1).to_frame(f"kthread - softirq, {tail} (us)"))'''),
    md("""
Read the tables for what differs, not only by how much: a stage that grows in one mode names the
mechanism (time on the client's or the server's ring, a NAPI kthread waiting for a CPU, a neper
thread busy or preempted while its responses wait), and `--trace` shows the same moment on the
CPUs' timeline.

## Wei's application benchmark: base vs kthread vs workqueue

On 1 October 2020 Wei reported one representative result of a Google application benchmark with
the NAPI threads (kthreads, or Felix Fietkau's workqueue workers) restricted to the 8 IRQ CPUs of 56,
application threads unpinned:

| mode | cpu/op | p50 | p95 | p99 |
|---|---|---|---|---|
| base (softirq) | 71.47 | 417us | 1.01ms | 2.9ms |
| kthread | 67.84 | 396us | 976us | 2.4ms |
| workqueue | 69.68 | 386us | 791us | 1.9ms |

"It does seem workqueue is doing better on latencies. But cpu/op wise, kthread seems to be a bit
better." `scenarios/wei2020/app_*.json` give a `tcp_rr` stand-in for the application; a list of
scenarios is one sweep, told apart by the `scenario` column.
"""),
    code('''\
APPS = {"base (softirq)": "wei2020/app_base", "kthread": "wei2020/app_kthread", "workqueue": "wei2020/app_workqueue"}
APP_OVER = {"duration_s": 0.02, "warmup_s": 0.005} if SMALL else {}
present = {}
for label, name in APPS.items():
    try:
        napisim.validate(name, **APP_OVER)
        present[label] = name
    except ValueError as e:
        print(f"note: {label} skipped: {e}")
if "base (softirq)" in present and len(present) > 1:
    app = napisim.sweep(list(present.values()), seeds=SEEDS, overrides=APP_OVER)
    app["mode"] = app["scenario"].map({v: k for k, v in present.items()})
    cols = {"cpu.cpu_us_per_op": "cpu/op", "latency_ns.p50": "p50", "latency_ns.p95": "p95", "latency_ns.p99": "p99"}
    m = app.groupby("mode", sort=False)[list(cols)].mean().rename(columns=cols)
    app_rel = (100 * (m / m.loc["base (softirq)"] - 1)).drop(index="base (softirq)")
    pub = pd.DataFrame({"cpu/op": [-5.1, -2.5], "p50": [-5.0, -7.4], "p95": [-3.4, -22.0], "p99": [-17.0, -34.0]},
                       index=["kthread", "workqueue"])
    display(m)
    fig, axes = plt.subplots(1, 2, figsize=(14, 4), sharey=True)
    pub.loc[[i for i in pub.index if i in app_rel.index]].T.plot.bar(ax=axes[0], rot=0, title="published (Wei Wang 2020)")
    app_rel.T.plot.bar(ax=axes[1], rot=0, title="napisim")
    for ax in axes:
        ax.axhline(0, color="k", lw=0.8)
        ax.set_ylabel("change vs base (%)")
    fig.tight_layout()
else:
    print("note: the wei2020/app_* scenarios are not all available in this checkout")'''),
    md("""
Both threaded variants are confined to the IRQ CPUs here, which is the configuration Jakub Kicinski
questioned ("you pin the NAPI threads and hand-tune their number"); notebook 05 varies exactly that.
"""),
])

# ------------------------------------------------------------------------------------------------
write("03_thread_wq_tapi_deferral", [
    md("""
# Threads vs workqueue vs TAPI, with IRQ deferral (Jakub Kicinski, 2020)

Replying to Wei Wang's threaded-NAPI RFC, Jakub Kicinski compared three ways of moving NAPI polling
out of softirq on a real Facebook workload — "thread is this code, 'work q' is Felix's code, TAPI is
my hacks" — all relative to normal softirq NAPI:

| variant | RPS | lat AVG | P50 | P99 | P999 | CPU busy | PSI |
|---|---|---|---|---|---|---|---|
| thread (Wei Wang's kthreads) | +1.1% | −15.6% | −0.3% | −42.5% | −8.1% | −2.3% | +60.6% |
| work q (Felix Fietkau's workqueue) | +4.3% | −13.1% | +0.1% | −44.4% | −1.1% | −1.2% | +90.1% |
| TAPI (Jakub's prototype) | +4.4% | −17.1% | −1.4% | −43.8% | −11.0% | −2.3% | +46.7% |

Two details matter. First: "In all cases (but not the baseline) I configured timer-based polling
(defer_hard_irqs), with around 100us timeout. Without deferring hard IRQs threaded NAPI is actually
slower for this app." Second, niceness: raising the NAPI threads to nice −20 (as the workqueue's
`WQ_HIGHPRI` does) made things *worse*:

| config | RPS change vs normal NAPI |
|---|---|
| threaded | −1.50% |
| threaded, nice −20 | −5.67% |
| thr poll | +2.93% |
| thr poll, nice −20 | +2.22% |

The expected shape: with deferral, every threaded variant gains a few percent of throughput and cuts
p99 by ~40%, while CPU pressure (PSI) rises sharply because NAPI work becomes runnable tasks that
wait; nice −20 costs the application CPU. Jakub noted differences of ~2% were noise day to day.
"""),
    code(SETUP),
    code(USES),
    md("""
## Setup

Jakub's host had one NUMA node and 18 NAPI instances each around 25% of a CPU; the application is not
public. napisim uses `scenarios/kicinski2020/` when present, otherwise a quickstart-sized `tcp_rr`
where the server threads compete with NAPI processing for the CPUs. Deferral: `napi_defer_irq` with
`gro_flush_timeout` 100 µs. The variants are the model lists of `scenarios/kicinski2020/*.json`
(their `description` states the assumptions, e.g. `defer_hard_irqs` 10, which Jakub did not give),
plus two derived ones: the kthreads without deferral ("without deferring hard IRQs threaded NAPI is
actually slower for this app") and thr poll at nice −20.
"""),
    code(MODELS_OF),
    code('''\
K = "kicinski2020/"
BASE = K + "base" if napisim.has_scenario(K + "base") else "quickstart"
print("base scenario:", BASE)
OVER = {"duration_s": 0.02, "warmup_s": 0.005} if SMALL else {}
if BASE == "quickstart":
    OVER.update({"workload.params.num_threads": 8, "workload.params.num_flows": 64 if SMALL else 256,
                 "duration_s": OVER.get("duration_s", 0.3)})

DEFER = napisim.model_spec("napi_defer_irq", defer_hard_irqs=10, gro_flush_timeout_ns=100_000)

def without(variant, model):
    return None if variant is None else {"models": [m for m in variant["models"] if m["name"] != model]}

def with_params(variant, **params):
    if variant is None:
        return None
    models = [dict(m) for m in variant["models"]]
    models[0] = {**models[0], "params": {**models[0].get("params", {}), **params}}
    return {"models": models}

thread = models_of(K + "thread", uses(napisim.model_spec("napi_threaded"), DEFER))
thr_poll = models_of(K + "thr_poll", uses(napisim.model_spec("napi_tapi", thr_poll=True), DEFER))
VARIANTS = {
    "normal NAPI": models_of(K + "base", uses(napisim.model_spec("napi_irq"))),
    "thread": thread,
    "work q": models_of(K + "workq", uses(napisim.model_spec("napi_workqueue"), DEFER)),
    "TAPI": models_of(K + "tapi", uses(napisim.model_spec("napi_tapi"), DEFER)),
    "thread, no deferral": without(thread, "napi_defer_irq"),
    "thread, nice -20": models_of(K + "thread_nice-20", with_params(thread, nice=-20)),
    "thr poll": thr_poll,
    "thr poll, nice -20": with_params(thr_poll, nice=-20),
}
VARIANTS = napisim.valid_variants(BASE, VARIANTS, **OVER)
for label, v in VARIANTS.items():
    print(f"{label:22s}", v["models"])
SEEDS = [1] if SMALL else [1, 2, 3]
df = napisim.sweep(BASE, variants=VARIANTS, seeds=SEEDS, overrides=OVER)'''),
    code('''\
METRICS = {"throughput": "RPS", "latency_ns.mean": "lat AVG", "latency_ns.p50": "P50", "latency_ns.p99": "P99",
           "latency_ns.p99.9": "P999", "cpu.busy_pct": "CPU busy", "psi_cpu_some_pct": "PSI"}
mean = df.groupby("variant", sort=False)[list(METRICS)].mean().rename(columns=METRICS)
base_row = mean.loc["normal NAPI"]
rel = (100 * (mean / base_row - 1)).drop(index="normal NAPI")
print("absolute (latency in ns, CPU and PSI in %):")
display(mean)
print("change vs normal NAPI (%):")
display(rel.round(1))'''),
    code('''\
published = pd.DataFrame({
    "RPS": [1.1, 4.3, 4.4], "lat AVG": [-15.6, -13.1, -17.1], "P50": [-0.3, 0.1, -1.4], "P99": [-42.5, -44.4, -43.8],
    "P999": [-8.1, -1.1, -11.0], "CPU busy": [-2.3, -1.2, -2.3], "PSI": [60.6, 90.1, 46.7]},
    index=["thread", "work q", "TAPI"])
main = [v for v in published.index if v in rel.index]
if main:
    fig, axes = plt.subplots(1, 2, figsize=(14, 4), sharey=True)
    published.loc[main].T.plot.bar(ax=axes[0], rot=0, title="published (Kicinski 2020)")
    rel.loc[main, published.columns].T.plot.bar(ax=axes[1], rot=0, title="napisim")
    for ax in axes:
        ax.axhline(0, color="k", lw=0.8)
        ax.set_ylabel("change vs normal NAPI (%)")
    fig.tight_layout()
else:
    print("note: none of thread / work q / TAPI is available in this build")'''),
    md("""
## Niceness

Jakub's second table: RPS relative to normal NAPI for the threaded variants with and without
nice −20 (read here, as in the scenario files, as the variants with deferral).
"""),
    code('''\
pub_nice = pd.Series({"thread": -1.50, "thread, nice -20": -5.67, "thr poll": 2.93, "thr poll, nice -20": 2.22})
nice = [v for v in pub_nice.index if v in rel.index]
if nice:
    cmp = pd.DataFrame({"published": pub_nice[nice], "napisim": rel.loc[nice, "RPS"]})
    ax = cmp.plot.bar(rot=0, figsize=(9, 4))
    ax.axhline(0, color="k", lw=0.8)
    ax.set_ylabel("RPS change vs normal NAPI (%)")
    display(cmp.round(2))'''),
    code('''\
one = df[df["seed"] == SEEDS[0]]
res = {row.variant: napisim.sweep_result(row.key) for row in one.itertuples()
       if row.variant in ("normal NAPI", "thread", "work q", "TAPI")}
fig, axes = plt.subplots(1, 2, figsize=(14, 4))
plots.percentile_bars(res, percentiles=("p50", "p90", "p99", "p99.9"), ax=axes[0])
plots.latency_cdf(res, tail=True, ax=axes[1])
fig.tight_layout()'''),
    md("""
Reading the results: the deferral timer batches packets (far fewer interrupts), and moving polling to
threads lets the scheduler interleave it with the application — which is where the p99 gain comes
from — at the cost of runnable NAPI work waiting for a CPU (PSI). Higher NAPI priority (nice −20)
takes CPU from the application threads, which is why it lowers throughput.
"""),
])

# ------------------------------------------------------------------------------------------------
write("04_busypoll_deferral_suspension", [
    md("""
# Busy polling vs IRQ deferral vs IRQ suspension: latency against CPU across load

Three ways to stop paying one interrupt per packet, each a different point on the latency/CPU
trade-off (`Documentation/networking/napi.rst` calls them the three loops: hardirq → softirq → poll;
timer → softirq → poll; epoll → busy poll → poll):

* **IRQ deferral** (`napi_defer_hard_irqs` + `gro_flush_timeout`): after a poll that found work, keep
  the IRQ masked and re-poll from an hrtimer. Fewer interrupts, a bounded added delay.
* **Busy polling** (epoll `busy_poll_usecs`, `prefer_busy_poll`): the application thread polls the NAPI
  itself from `epoll_wait`. Lowest latency, but a CPU spins.
* **IRQ suspension** (`irq_suspend_timeout`, Linux 6.13, Martin Karsten and Joe Damato): while
  `epoll_wait` keeps returning events the IRQs stay suspended and the application's own loop does the
  polling; when it runs dry, IRQs come back. Busy-poll latency at load, interrupt-driven CPU cost when
  idle.

Karsten's v7 cover letter measured memcached (avg / p99 latency in µs, CPU %):

| case | 200K qps | 600K qps | 800K qps |
|---|---|---|---|
| base | 112 / 416 / 26 | 149 / 574 / 61 | 181 / 536 / 87 |
| defer20 | 60 / 153 / 26 | 76 / 203 / 66 | 112 / 329 / 90 |
| defer200 | 164 / 309 / 19 | 200 / 357 / 46 | 227 / 401 / 63 |
| fullbusy | 46 / 133 / 100 | 55 / 177 / 100 | 61 / 190 / 100 |
| napibusy | 100 / 277 / 56 | 63 / 250 / 96 | 64 / 214 / 99 |
| suspend20 | 58 / 151 / 30 | 66 / 194 / 65 | 74 / 207 / 78 |

The shape to look for: busy polling buys latency with a CPU pinned at 100% regardless of load;
deferral trades latency for CPU through its timeout; suspension tracks busy polling's latency while
its CPU cost follows the load.
"""),
    code(SETUP),
    code(USES),
    md("""
## Variants

Configurations follow the cover letter: `deferX` = defer_hard_irqs 100, gro_flush_timeout X µs;
`napibusy` = defer 100 / 200 µs + epoll busy_poll_usecs 64, budget 64, prefer_busy_poll;
`suspend20` = defer 100 / 20 µs + irq_suspend_timeout 20 ms, busy_poll_usecs 0, budget 64;
`threaded busy poll` = a pinned kthread spinning on each NAPI (2025). Load is the number of
closed-loop `tcp_rr` flows.
"""),
    code('''\
BASE = "quickstart"
OVER = {"duration_s": 0.02, "warmup_s": 0.005} if SMALL else {"duration_s": 0.2}
LOADS = [8, 64] if SMALL else [4, 8, 16, 32, 64, 128, 256]
SEEDS = [1] if SMALL else [1, 2]
irq_cpus = napisim.validate(BASE)["nics"][0]["irq_affinity"]

def defer(us):
    return napisim.model_spec("napi_defer_irq", defer_hard_irqs=100, gro_flush_timeout_ns=us * 1000)

softirq = napisim.model_spec("napi_irq")
VARIANTS = {
    "base": uses(softirq),
    "defer20": uses(softirq, defer(20)),
    "defer200": uses(softirq, defer(200)),
    "napibusy": uses(softirq, defer(200), napisim.model_spec("epoll_busy_poll", busy_poll_usecs=64,
                                                             busy_poll_budget=64, prefer_busy_poll=True)),
    "suspend20": uses(softirq, defer(20), napisim.model_spec("irq_suspend", irq_suspend_timeout_ns=20_000_000,
                                                             busy_poll_usecs=0, busy_poll_budget=64)),
    "threaded busy poll": uses(napisim.model_spec("threaded_busy_poll", cpus=irq_cpus)),
}
VARIANTS = napisim.valid_variants(BASE, VARIANTS, **OVER)
df = napisim.sweep(BASE, variants=VARIANTS, grid={"workload.params.num_flows": LOADS}, seeds=SEEDS, overrides=OVER)
df["irqs_per_op"] = (df["irqs"] / df["transactions"].clip(lower=1)).clip(lower=1e-5)  # log axis below
df.groupby(["variant", "workload.params.num_flows"], sort=False)[
    ["throughput", "latency_ns.mean", "latency_ns.p99", "cpu.busy_pct", "irqs_per_op"]].mean()'''),
    md("""
## The frontier

Each line is one strategy, each point one load level (flows); lower-left is better. A strategy whose
points sit at the right edge whatever the load is paying for spinning CPUs.
"""),
    code('''\
x = "workload.params.num_flows"
fig, axes = plt.subplots(1, 2, figsize=(15, 5))
plots.frontier(df, x="cpu.busy_pct", y="latency_ns.p99", hue="variant", by=x, annotate=x, ax=axes[0], logy=True)
plots.frontier(df, x="cpu.busy_pct", y="latency_ns.mean", hue="variant", by=x, ax=axes[1], logy=True)
fig.tight_layout()'''),
    code('''\
fig, axes = plt.subplots(1, 3, figsize=(16, 4))
plots.sweep_curve(df, x=x, y="throughput", hue="variant", ax=axes[0], logx=True)
plots.sweep_curve(df, x=x, y="cpu.busy_pct", hue="variant", ax=axes[1], logx=True)
plots.sweep_curve(df, x=x, y="irqs_per_op", hue="variant", ax=axes[2], logx=True, logy=True)
axes[2].set_ylabel("interrupts per transaction")
fig.tight_layout()'''),
    code('''\
top = df[(df[x] == max(LOADS)) & (df["seed"] == SEEDS[0])]
res = {row.variant: napisim.sweep_result(row.key) for row in top.itertuples()}
n = len(res)
fig, axes = plt.subplots((n + 1) // 2, 2, figsize=(15, 3.2 * ((n + 1) // 2)), squeeze=False)
for ax, (label, r) in zip(axes.flat, res.items()):
    plots.cpu_by_class(r, ax=ax, title=f"{label}, {max(LOADS)} flows")
for ax in list(axes.flat)[n:]:
    ax.set_visible(False)
fig.tight_layout()'''),
    md("""
What to read off: deferral collapses the interrupt count by orders of magnitude and its timeout sets
the latency floor (defer200 is cheap but slow at low load); busy polling shows up as user/system time
on the application CPUs at every load; suspension keeps IRQs off while the application is busy, so its
CPU cost falls back towards the interrupt-driven baseline as the load drops.

## Busy-looping for events only (Naman Gulati, 2024)

A 2024 proposal added `event_poll_only` to epoll's busy loop: spin on the ready list (filled by IRQ
and softirq on other CPUs) without calling `napi_poll`. Published (neper tcp_rr, 5 threads):

| type | flows | throughput | P50 µs | P99 µs | P99.99 µs |
|---|---|---|---|---|---|
| baseline | 15 | 272145 | 57.2 | 91.4 | 111.6 |
| epoll busyloop | 15 | 301751 | 44.7 | 84.3 | 106.5 |
| userspace busyloop (timeout 0) | 15 | 279202 | 55.4 | 85.2 | 109.6 |
| baseline | 60 | 695920 | 80.9 | 143.4 | 174.6 |
| epoll busyloop | 60 | 745731 | 77.4 | 127.5 | 155.9 |

`scenarios/gulati2024/` has the three types at 15, 30 and 60 flows; the whole list is one sweep.
"""),
    code('''\
G_OVER = {"duration_s": 0.02, "warmup_s": 0.005} if SMALL else {}
gul = []
for name in (s for s in napisim.list_scenarios() if s.startswith("gulati2024/")):
    try:
        napisim.validate(name, **G_OVER)
        gul.append(name)
    except ValueError as e:
        print(f"note: {name} skipped: {e}")
if gul:
    g = napisim.sweep(gul, seeds=SEEDS, overrides=G_OVER)
    g["type"] = g["scenario"].str.split("/").str[1].str.rsplit("_", n=1).str[0]
    g["flows"] = g["scenario"].str.rsplit("_", n=1).str[1].astype(int)
    cols = ["throughput", "latency_ns.p50", "latency_ns.p99", "latency_ns.p99.99", "cpu.busy_pct"]
    gt = g.groupby(["type", "flows"])[cols].mean()
    gt[cols[1:4]] = gt[cols[1:4]] / 1e3
    display(gt.rename(columns=lambda c: c.replace("latency_ns.", "") + (" (us)" if c.startswith("latency") else "")))
    fig, axes = plt.subplots(1, 3, figsize=(16, 4))
    plots.sweep_curve(g, x="flows", y="throughput", hue="type", ax=axes[0])
    plots.sweep_curve(g, x="flows", y="latency_ns.p50", hue="type", ax=axes[1])
    plots.frontier(g, x="cpu.busy_pct", y="latency_ns.p99", hue="type", by="flows", annotate="flows", ax=axes[2])
    fig.tight_layout()
else:
    print("note: no gulati2024 scenarios in this checkout")'''),
    md("""
The event-only busy loop keeps the application thread on-CPU between events, saving the wakeup and
context switch on every transaction, which is where the median gain comes from; it pays in CPU time
spent spinning, the same trade-off as above at a smaller scale.
"""),
])

# ------------------------------------------------------------------------------------------------
write("05_config_sweep", [
    md("""
# Configuration sweep: how many NAPI threads, where, and at which priority

Threaded NAPI hands the receive path to the scheduler, and with it a set of knobs the softirq world
never had: how many poller threads, which CPUs they may run on, and their scheduling class. The 2020
discussion turned on exactly these: Wei Wang restricted the kthreads to the 8 IRQ CPUs of a 56-CPU host
and got lower latency and CPU cost; Jakub Kicinski objected that "you pin the NAPI threads and
hand-tune their number so the load of the NAPI CPUs is always higher. If the workload changes the
system will get very unhappy", and found nice −20 hurt the application.

This notebook sweeps those knobs on one `tcp_rr` workload where NAPI processing and the application
compete for CPUs:

1. placement × scheduling class of the per-NAPI kthreads (`napi_threaded`): unpinned, restricted to
   the IRQ CPUs, pinned each to its IRQ's CPU; SCHED_NORMAL nice 0, nice −20, SCHED_FIFO;
2. the number of NAPI instances (NIC queues), which is the number of kthreads;
3. the size of a shared poller pool (TAPI), which decouples threads from NAPIs.
"""),
    code(SETUP),
    code(USES),
    code('''\
BASE = "quickstart"
OVER = {"duration_s": 0.02, "warmup_s": 0.005} if SMALL else {"duration_s": 0.2}
OVER.update({"workload.params.num_threads": 8, "workload.params.num_flows": 64 if SMALL else 256})
SEEDS = [1] if SMALL else [1, 2, 3]
sc = napisim.validate(BASE, **OVER)
irq_cpus = sc["nics"][0]["irq_affinity"]
print(f'{sc["topology"]["cores_per_llc"]} CPUs, {sc["nics"][0]["queues"]} queues, IRQs on CPUs {irq_cpus}, '
      f'{sc["workload"]["params"]["num_threads"]} server threads')
napisim.describe("napi_threaded") if napisim.has_model("napi_threaded") else print("note: no napi_threaded model")'''),
    md("""
## 1. Placement × scheduling class

Nine configurations plus the softirq baseline. `pin_to_irq_cpu` follows `napi.rst`'s advice ("pin
each kernel thread to a single CPU, the same CPU as the CPU which services the interrupt").
"""),
    code('''\
PLACEMENT = {"unpinned": {}, "IRQ CPUs": {"cpumask": irq_cpus}, "own IRQ CPU": {"pin_to_irq_cpu": True}}
SCHED = {"nice 0": {}, "nice -20": {"nice": -20}, "FIFO 50": {"policy": "fifo", "rt_priority": 50}}
if SMALL:  # CI: a corner of the grid
    PLACEMENT = {k: PLACEMENT[k] for k in ("unpinned", "IRQ CPUs")}
    SCHED = {k: SCHED[k] for k in ("nice 0", "FIFO 50")}
VARIANTS = {"softirq": uses(napisim.model_spec("napi_irq"))}
for p, pp in PLACEMENT.items():
    for s, sp in SCHED.items():
        VARIANTS[f"{p} / {s}"] = uses(napisim.model_spec("napi_threaded", **pp, **sp))
VARIANTS = napisim.valid_variants(BASE, VARIANTS, **OVER)
df1 = napisim.sweep(BASE, variants=VARIANTS, seeds=SEEDS, overrides=OVER)
t1 = df1.groupby("variant", sort=False)[["throughput", "latency_ns.p50", "latency_ns.p99", "latency_ns.p99.9",
                                          "cpu.busy_pct", "cpu.cpu_us_per_op", "psi_cpu_some_pct"]].mean()
t1'''),
    code('''\
if len(t1) > 1:
    fig, axes = plt.subplots(1, 2, figsize=(15, 4.5))
    (t1["latency_ns.p99"] / 1e3).plot.barh(ax=axes[0], title="p99 latency (µs)")
    (t1["throughput"] / 1e3).plot.barh(ax=axes[1], title="throughput (k transactions/s)")
    for ax in axes:
        ax.invert_yaxis()
        ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()'''),
    code('''\
if len(t1) > 1:
    d = df1.copy()
    d["placement"] = d["variant"].str.split(" / ").str[0]
    d["sched"] = d["variant"].str.split(" / ").str[-1]
    ax = plots.frontier(d[d["variant"] != "softirq"], x="cpu.cpu_us_per_op", y="latency_ns.p99", hue="placement",
                        by="sched", annotate="sched")
    sb = d[d["variant"] == "softirq"]
    ax.scatter(sb["cpu.cpu_us_per_op"].mean(), sb["latency_ns.p99"].mean() / 1e3, marker="*", s=200, color="k",
               label="softirq", zorder=5)
    ax.legend()'''),
    md("""
## 2. Number of NAPI instances (queues)

With threaded NAPI, one kthread per NAPI instance: more queues means more, smaller pollers. The IRQs
are spread over the first CPUs; the kthreads stay unpinned (nice 0) or confined to the IRQ CPUs.
"""),
    code('''\
QUEUES = [2, 4] if SMALL else [1, 2, 4, 8]
V2 = {"softirq": uses(napisim.model_spec("napi_irq")),
      "kthreads unpinned": uses(napisim.model_spec("napi_threaded")),
      "kthreads on IRQ CPUs": uses(napisim.model_spec("napi_threaded", cpumask=irq_cpus))}
V2 = napisim.valid_variants(BASE, V2, **OVER)
df2 = napisim.sweep(BASE, variants=V2, grid={"nics.0.queues": QUEUES}, seeds=SEEDS, overrides=OVER)
fig, axes = plt.subplots(1, 3, figsize=(16, 4))
for ax, y in zip(axes, ["throughput", "latency_ns.p99", "cpu.cpu_us_per_op"]):
    plots.sweep_curve(df2, x="nics.0.queues", y=y, hue="variant", ax=ax)
fig.tight_layout()'''),
    md("""
## 3. A shared poller pool (TAPI)

Jakub's TAPI prototype decouples threads from NAPI instances: a pool of pollers picks up whichever
NAPI is ready. Sweeping the pool size shows how many threads the load actually needs; with
`thr_poll` a poller keeps a busy NAPI until it runs dry.
"""),
    code('''\
THREADS = [1, 4] if SMALL else [1, 2, 3, 4, 6, 8]
tapi = napisim.model_spec("napi_tapi")
if tapi is not None:
    V3 = napisim.valid_variants(BASE, {
        "TAPI": uses(tapi),
        "TAPI thr poll": uses(napisim.model_spec("napi_tapi", thr_poll=True))}, **OVER)
    df3 = napisim.sweep(BASE, variants=V3, grid={"models.0.params.threads": THREADS}, seeds=SEEDS, overrides=OVER)
    fig, axes = plt.subplots(1, 2, figsize=(14, 4))
    plots.sweep_curve(df3, x="models.0.params.threads", y="latency_ns.p99", hue="variant", ax=axes[0])
    plots.frontier(df3, x="cpu.busy_pct", y="latency_ns.p99", hue="variant", by="models.0.params.threads",
                   annotate="models.0.params.threads", ax=axes[1])
    fig.tight_layout()'''),
    md("""
Reading the sweeps: confining the kthreads to the IRQ CPUs keeps NAPI work off the application's CPUs
(Wei's gain) but only while those CPUs have headroom; SCHED_FIFO and nice −20 let NAPI preempt the
application immediately, which helps the receive path and costs the application. The right number of
pollers depends on the load — Jakub's point that hand-tuned counts break when the workload changes.
"""),
])



write("06_workloads", [
    md("""
# Beyond tcp_rr: application work, trace replay, memcached and the loopback stream

The debate was not only about `tcp_rr`. This notebook drives the other workloads napisim ships with
(`sim/workloads/`), each with the receive-path strategies it was argued over:

1. **Application work** (`app`): Jakub Kicinski's production comparison reported *application
   overload* and PSI next to RPS and latency. Here: softirq NAPI vs threaded NAPI with ~100 µs
   deferral (`scenarios/kicinski2020/`).
2. **Trace replay** (`trace`, open loop): Wei Wang's trace-based application case, replayed at
   increasing rates (`rate_scale`) until the open loop's queues grow.
3. **memcached + mutilate** (`mutilate`): the IRQ-suspension benchmark, base vs `suspend20` across
   offered load (`scenarios/karsten2024/`).
4. **Loopback stream** (`stream` over `lo`): Kirill Tkhai's idle-sibling RFS steering
   (`scenarios/tkhai2018/`).

Every number comes from the same default cost set (`sim/kernel/costs.hpp`); `VALIDATION.md` puts the
published tables beside napisim's.
"""),
    code(SETUP),
    md("""
## 1. Application work: what the NAPI strategy does to the application

`app_overload_pct` is the share of requests that waited longer than `overload_threshold_us` between
becoming readable on their socket and a worker starting them (the workload's header defines it).
"""),
    code('''\
OVER = {"duration_s": 0.01, "warmup_s": 0.005} if SMALL else {"duration_s": 0.2, "warmup_s": 0.05}
SEEDS = [1] if SMALL else [1, 2, 3]
names = [n for n in ["kicinski2020/base", "kicinski2020/thread", "kicinski2020/workq", "kicinski2020/tapi"]
         if napisim.has_scenario(n)]
app = napisim.sweep(names, seeds=SEEDS, overrides=OVER, progress=False)
cols = ["throughput", "latency_ns.mean", "latency_ns.p99", "app_overload_pct", "cpu.busy_pct", "psi_cpu_some_pct"]
table = app.groupby("scenario")[cols].mean()
table'''),
    code('''\
base = table.loc["kicinski2020/base"]
(table / base - 1).drop(index="kicinski2020/base").mul(100).round(1).add_suffix(" %")'''),
    md("""
Kicinski's table (changes vs normal NAPI): P99 about −43%, app overload −60…−83% (thread, TAPI),
PSI +47…+90%, RPS +1…+4%, average latency −13…−17%. The 100 µs deferral timer delays every request
of this stand-in (its RTT is ~60 µs), so average latency and RPS move the other way; VALIDATION.md
says why.

## 2. Trace replay: an open loop does not slow down when the server does
"""),
    code('''\
TRACE = "wei2020/app_trace_base"
SCALES = [2, 10] if SMALL else [2, 5, 10, 15, 20, 25]
tr = napisim.sweep(TRACE, grid={"workload.params.rate_scale": SCALES}, seeds=SEEDS[:1] if SMALL else SEEDS[:2],
                   overrides=OVER, progress=False)
tr_mean = tr.groupby("workload.params.rate_scale")[["offered_rps", "throughput", "latency_ns.p50",
                                                     "latency_ns.p99", "cpu.busy_pct"]].mean()
tr_mean'''),
    code('''\
ax = (tr_mean["latency_ns.p99"] / 1e3).plot(marker="o", logy=True)
ax.set_xlabel("rate_scale (x the trace's arrival rate)")
ax.set_ylabel("p99 latency [µs]")
ax.set_title("trace replay: the open loop keeps offering load")
plt.show()'''),
    md("""
## 3. memcached + mutilate: base vs IRQ suspension across offered load

Karsten & Damato (v7 cover letter): at 600K qps base 149 / 574 µs at 61% CPU, `suspend20`
66 / 194 µs at 65% CPU.
"""),
    code('''\
KV = [n for n in ["karsten2024/base", "karsten2024/suspend20"] if napisim.has_scenario(n)]
QPS = [200000] if SMALL else [200000, 400000, 600000, 800000]
kv_over = {"duration_s": 0.01, "warmup_s": 0.005} if SMALL else {}
kv = napisim.sweep(KV, grid={"workload.params.qps": QPS}, seeds=[1], overrides=kv_over, progress=False)
kv.pivot_table(index="workload.params.qps", columns="scenario",
               values=["mutilate.read.avg", "mutilate.read.p99", "mutilate.cpu_pct"]).round(1)'''),
    md("""
## 4. Loopback stream: steering RPS work to an idle sibling

Tkhai measured +7% (best runs) for netperf TCP_STREAM over `lo` with RPS, when backlog processing
moves to an idle CPU of the consumer's LLC.
"""),
    code('''\
LO = [n for n in ["tkhai2018/lo_stream_rfs", "tkhai2018/lo_stream_idle_sibling"] if napisim.has_scenario(n)]
lo = napisim.sweep(LO, seeds=SEEDS, overrides={"duration_s": 0.01, "warmup_s": 0.005} if SMALL else {},
                   progress=False)
lo_mean = lo.groupby("scenario")["throughput"].mean()
print(lo_mean.round(0).to_string())
if len(lo_mean) == 2:
    print(f"idle-sibling gain: {lo_mean.iloc[0] / lo_mean.iloc[1] * 100 - 100:+.1f}%")'''),
])

print("wrote", ", ".join(sorted(p.name for p in HERE.glob("*.ipynb"))))
