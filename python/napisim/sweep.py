"""Running scenarios: napisim.run() and napisim.sweep(), each simulation in its own process.

SimGrid's engine is one per process (docs/design.md), so no simulation ever runs in the
caller's process: every point is a fresh `python -m napisim._worker` subprocess, fed its request
on stdin. run() starts one; sweep() keeps N of them going from a pool of threads, or hands the
points to any other executor (a Dask `distributed.Client`, a concurrent.futures executor). Nothing
is pickled and __main__ is never re-imported, so both work from a script without a main guard,
from `python3 -c` and from stdin. An interrupt or an error terminates the running simulations
(SIGTERM: each stops at its next event).

Sweep results are cached as JSON files named by the SHA-256 of (native build id, scenario fingerprint:
the resolved scenario with the files it names by content, not by path), written atomically as each point finishes, so an interrupted sweep resumes with only the missing
points.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import itertools
import json
import numbers
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Sequence, Union

from . import _core
from ._core import ScenarioLike

_RESULT_MARK = "NAPISIM-RESULT "


# ----------------------------------------------------------------------------------------------
# Worker side


def _run_point(request: dict) -> dict:
    """Runs one scenario in *this* process (which must not have run one before). Returns
    {"ok": True, "result": json_text} or {"ok": False, "error": "ValueError", "message": ...}."""
    from . import _napisim

    try:
        trace = request.get("trace") or {}
        text = _napisim.run_json(request["doc"], list(request["sets"]), request["seed"], request["base_dir"],
                                 trace.get("path", ""), trace.get("from_s"), trace.get("for_s", 0.01),
                                 float(request.get("interval", 0.0)), bool(request.get("explain", False)))
    except ValueError as e:
        return {"ok": False, "error": "ValueError", "message": str(e)}
    return {"ok": True, "result": text}


def _package_parent() -> str:
    return str(Path(__file__).resolve().parent.parent)


def _worker_command() -> tuple[list[str], dict]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([_package_parent()] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return [sys.executable, "-m", "napisim._worker"], env


def _worker_answer(stdout: str, stderr: str, returncode: int) -> dict:
    for line in reversed(stdout.splitlines()):
        if line.startswith(_RESULT_MARK):
            return json.loads(line[len(_RESULT_MARK):])
    raise RuntimeError(f"napisim: the simulation process exited with status {returncode}: "
                       f"{stderr.strip()[-2000:]}")


def _run_point_subprocess(request: dict) -> dict:
    """Runs one scenario in a fresh `python -m napisim._worker` subprocess (what a Dask or
    user-provided executor's workers call)."""
    cmd, env = _worker_command()
    proc = subprocess.run(cmd, input=json.dumps(request), env=env, capture_output=True, text=True)
    return _worker_answer(proc.stdout, proc.stderr, proc.returncode)


class _Simulations:
    """The worker subprocesses of one run() or sweep(): started from any thread, stopped together
    (on an interrupt or an error) by stop()."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen] = set()
        self._stopped = False

    def run(self, request: dict) -> dict:
        cmd, env = _worker_command()
        with self._lock:
            if self._stopped:
                raise cf.CancelledError()
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, env=env)
            self._running.add(proc)
        try:
            out, err = proc.communicate(json.dumps(request))
        finally:
            with self._lock:
                self._running.discard(proc)
        if self._stopped:
            raise cf.CancelledError()
        return _worker_answer(out, err, proc.returncode)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            procs = list(self._running)
        for p in procs:
            p.terminate()  # SIGTERM: the simulation stops at its next event
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def _worker_main() -> int:
    request = json.loads(sys.stdin.read())
    out = _run_point(request)
    sys.stdout.write("\n" + _RESULT_MARK + json.dumps(out) + "\n")
    sys.stdout.flush()
    return 0


def _unwrap(out: dict, where: str = "") -> str:
    if out.get("ok"):
        return out["result"]
    msg = out.get("message", "unknown error")
    raise ValueError(msg + (f" ({where})" if where else ""))


# ----------------------------------------------------------------------------------------------
# run()


def _request(scenario: ScenarioLike, seed: Optional[int], overrides: Optional[Mapping[str, Any]],
             base_dir: Optional[str], kwargs: Mapping[str, Any]) -> dict:
    seed = _core.check_seed(seed)
    doc, bdir = _core.load_scenario(scenario, base_dir)
    sets = _core.to_sets(_core.merge_overrides(overrides, kwargs))
    return {"doc": json.dumps(doc), "sets": sets, "seed": seed, "base_dir": bdir}


def run(scenario: ScenarioLike = "quickstart", seed: Optional[int] = None, *,
        overrides: Optional[Mapping[str, Any]] = None, label: Optional[str] = None,
        base_dir: Optional[str] = None, trace: Optional[str] = None, trace_from: Optional[float] = None,
        trace_for: float = 0.01, interval: Optional[float] = None, explain: bool = False, **kwargs: Any):
    """Runs one scenario in a fresh worker process and returns a napisim.Result.

    scenario   a dict, a path to a scenario JSON file, or a scenario name ("quickstart",
               "wei2020/tcp_rr_1B": a file under scenarios/, see napisim.list_scenarios())
    seed       overrides the scenario's seed
    overrides  {path: value} with the CLI's --set semantics; keyword arguments do the same with `__`
               or dots as separators: run("quickstart", duration_s=0.05, workload__params__num_flows=32)
    label      the name plots use for this result (default: the model names)
    trace      a file to write the run's timeline to (the CLI's --trace: a Chrome JSON trace that
               the Perfetto UI opens), covering trace_for simulated seconds from trace_from
               (default: the measured window's start)
    interval   report every `interval` simulated seconds of the measured window (the CLI's
               --interval): Result.intervals
    explain    latency attribution (the CLI's --explain): each measured request's latency cut into
               the stages of its path on both hosts, per percentile band: Result.breakdown,
               napisim.plots.breakdown_bars()

    Raises ValueError (message starting with the JSON pointer, or naming trace) on bad input.
    """
    from .result import Result

    req = _request(scenario, seed, overrides, base_dir, kwargs)
    if trace is not None:
        if not isinstance(trace, (str, os.PathLike)) or not str(trace):
            raise ValueError(f"trace: expected a file path, got {trace!r}")
        req["trace"] = {"path": os.path.abspath(os.fspath(trace)), "from_s": trace_from, "for_s": trace_for}
    if interval is not None:
        if isinstance(interval, bool) or not isinstance(interval, numbers.Real) or not interval > 0:
            raise ValueError(f"interval: expected a time in s > 0, got {interval!r}")
        req["interval"] = float(interval)
    if not isinstance(explain, bool):
        raise ValueError(f"explain: expected True or False, got {explain!r}")
    if explain:
        req["explain"] = True
    sims = _Simulations()
    try:
        out = sims.run(req)
    except BaseException:  # KeyboardInterrupt in a notebook: stop the simulation too
        sims.stop()
        raise
    return Result.from_json(_unwrap(out), label)


# ----------------------------------------------------------------------------------------------
# Cache


def default_cache_dir() -> Path:
    env = os.environ.get("NAPISIM_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "napisim"


def cache_key(scenario_sha256: str, build: Optional[str] = None) -> str:
    """SHA-256 of the native build id and the scenario's fingerprint (results' scenario_sha256: every
    default spelled out, and the files it names by content, so that a copy elsewhere hits the same key
    and an edited trace does not)."""
    return hashlib.sha256(((build or _core.build_id()) + "\n" + scenario_sha256).encode()).hexdigest()


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _cache_read(path: Path) -> Optional[dict]:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None  # missing or torn: recompute


# ----------------------------------------------------------------------------------------------
# sweep()


def _column_value(v: Any) -> Any:
    v = _core._plain(v)
    if isinstance(v, (list, dict)):
        return json.dumps(v, sort_keys=True)
    return v


def _row(point: dict, result: dict) -> dict:
    from .result import flatten, model_label

    row = dict(point["columns"])
    scenario = result.get("scenario", {})
    row["seed"] = point["seed"] if point["seed"] is not None else result.get("context", {}).get("seed")
    row["model"] = model_label(scenario)
    row["scenario"] = scenario.get("name", "")
    row.update(flatten(result.get("summary", {})))
    for band in result.get("latency_breakdown", {}).get("bands", []):  # explain=True
        row[f"latency_breakdown.{band['band']}.latency"] = band["latency_ns"]
        for stage, ns in band["stage_ns"].items():
            row[f"latency_breakdown.{band['band']}.{stage}"] = ns
    row["fingerprint"] = result.get("fingerprint", "")
    row["key"] = point["key"]
    return row


def _values(v: Any, what: str, expected: str) -> list:
    """A sweep axis (grid values, seeds) as a list: a list, tuple, range, numpy array or iterator.
    A string, a mapping, a set or a scalar is a ValueError (list("rx_queue") would sweep its letters)."""
    if hasattr(v, "tolist") and callable(v.tolist) and getattr(v, "ndim", 1) >= 1:
        return list(v.tolist())
    if isinstance(v, (Sequence, Iterator)) and not isinstance(v, (str, bytes, bytearray)):
        return list(v)
    raise ValueError(f"sweep: {what} must be a list, tuple, range or numpy array of {expected}, "
                     f"got {_core._describe(v)}")


def _check_workers(workers: Any) -> Optional[int]:
    if workers is None:
        return None
    if isinstance(workers, numbers.Integral) and not isinstance(workers, bool) and workers >= 1:
        return int(workers)
    raise ValueError(f"sweep: workers must be a positive integer (or None for os.cpu_count()), "
                     f"got {_core._describe(workers)}")


def _is_dask_client(executor: Any) -> bool:
    return type(executor).__module__.split(".")[0] == "distributed" and hasattr(executor, "gather")


def sweep(base: Union[ScenarioLike, Sequence[ScenarioLike]] = "quickstart", grid: Optional[Mapping[str, Sequence[Any]]] = None,
          seeds: Iterable[Optional[int]] = (1,), workers: Optional[int] = None, executor: Any = None,
          cache_dir: Optional[os.PathLike] = None, progress: bool = True, *,
          variants: Optional[Mapping[str, Mapping[str, Any]]] = None,
          overrides: Optional[Mapping[str, Any]] = None, base_dir: Optional[str] = None,
          cache: bool = True, on_result: Optional[Callable[[dict], None]] = None, explain: bool = False,
          **kwargs: Any):
    """Runs the Cartesian product of base scenarios × `variants` × `grid` × `seeds` and returns a
    tidy DataFrame: one row per point and seed; a column per swept path (named as given, `__` read as `.`), plus
    `variant` when variants are given, `seed`, `model`, `scenario`, every summary metric flattened
    (`throughput`, `latency_ns.p99`, `cpu.busy_pct`, `cpu.by_class_pct.softirq`, ...), `fingerprint`
    and `key` (the cache key; napisim.sweep_result(key) loads that run's full Result).

    base       the scenario (dict, path or name), or a list of them (rows then differ by the
               `scenario` column); `overrides`/keyword overrides apply to every point
    grid       {path: [values]}; values may be any JSON (e.g. models=[[{"name": "napi_irq"}], ...])
    variants   {label: {path: value}}: named configurations compared side by side (e.g. one per model)
    seeds      seeds to replicate every point with (None keeps the scenario's seed)
    workers    local worker processes (default: os.cpu_count())
    executor   a Dask distributed.Client (or any concurrent.futures executor) to run the points on
    cache_dir  where finished points are kept (default $NAPISIM_CACHE or ~/.cache/napisim);
               cache=False disables reading and writing it
    on_result  called in this process with each newly computed point's row (as it finishes)
    explain    every run with latency attribution (the CLI's --explain): columns
               `latency_breakdown.<band>.<stage>` (mean ns of the band's requests; `.latency` their
               mean latency); cached apart from the same points without it

    Every point is validated before anything runs: a bad value raises ValueError naming its JSON
    pointer. Row order is the grid order, whatever order points finish in, so the same sweep gives
    the same DataFrame with any number of workers. df.attrs["napisim"] says how many points were
    computed and how many came from the cache.
    """
    import pandas as pd

    from . import _napisim

    bases = list(base) if isinstance(base, (list, tuple)) else [base]
    if not bases:
        raise ValueError("sweep: no base scenario")
    workers = _check_workers(workers)
    loaded = []
    for b in bases:
        doc, bdir = _core.load_scenario(b, base_dir)
        loaded.append((json.dumps(doc), bdir))
    base_over = _core.merge_overrides(overrides, kwargs)
    for name, arg in (("grid", grid), ("variants", variants)):
        if arg is not None and not isinstance(arg, Mapping):
            raise ValueError(f"sweep: {name} must be a dict {{path: {'[values]' if name == 'grid' else 'overrides'}}}, "
                             f"got {type(arg).__name__}")
    grid = {_core.normalize_path(str(k)): _values(v, f"grid['{k}']", "values")
            for k, v in (grid or {}).items()}
    for k, v in grid.items():
        if not v:
            raise ValueError(f"sweep: grid['{k}'] has no values")
    variant_items = [(label, _core.merge_overrides(vover, {}, f"sweep: variants['{label}']"))
                     for label, vover in (variants or {None: {}}).items()]
    seeds = _values(seeds, "seeds", "seeds (integers, or None for the scenario's)")
    for i, s in enumerate(seeds):
        try:
            seeds[i] = _core.check_seed(s)
        except ValueError as e:
            raise ValueError(f"{e} (sweep: seeds[{i}])") from None
    if not seeds:
        raise ValueError("sweep: seeds is empty")

    if not isinstance(explain, bool):
        raise ValueError(f"sweep: explain: expected True or False, got {explain!r}")
    build = _core.build_id()
    points: list[dict] = []
    for doc_text, bdir in loaded:
        for vlabel, vover in variant_items:
            for combo in itertools.product(*grid.values()):
                assign = dict(zip(grid.keys(), combo))
                over = dict(base_over)
                over.update(vover)
                over.update(assign)
                sets = _core.to_sets(over)
                cols = {}
                if variants is not None:
                    cols["variant"] = vlabel
                cols.update({k: _column_value(v) for k, v in assign.items()})
                for seed in seeds:
                    where = ", ".join(f"{k}={v}" for k, v in list(cols.items()) + [("seed", seed)])
                    if len(loaded) > 1:
                        where = f"{json.loads(doc_text).get('name', '?')}: {where}"
                    try:
                        fingerprint = _napisim.scenario_sha256(doc_text, sets, seed, bdir)
                    except ValueError as e:
                        raise ValueError(f"{e} (sweep point {where})") from None
                    request = {"doc": doc_text, "sets": sets, "seed": seed, "base_dir": bdir}
                    if explain:
                        request["explain"] = True
                    points.append({"columns": cols, "seed": seed, "where": where,
                                   "key": cache_key(fingerprint + ("\nexplain" if explain else ""), build),
                                   "request": request})

    if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
        raise ValueError(f"sweep: cache_dir must be a directory path, got {type(cache_dir).__name__}")
    cdir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if cache:
        try:
            cdir.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise ValueError(f"sweep: cache_dir must be a directory, but '{cdir}' (or a parent) is a file") from None
    results: dict[str, dict] = {}
    todo: dict[str, dict] = {}  # key -> first point with that key
    for p in points:
        if p["key"] in results or p["key"] in todo:
            continue
        hit = _cache_read(cdir / f"{p['key']}.json") if cache else None
        if hit is not None:
            results[p["key"]] = hit
        else:
            todo[p["key"]] = p
    n_cached = len(results)

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=n_cached + len(todo), initial=n_cached, desc="napisim sweep", unit="run",
                   file=sys.stderr, leave=True)

    def finished(key: str, out: dict) -> None:
        p = todo[key]
        text = _unwrap(out, f"sweep point {p['where']}")
        result = json.loads(text)
        if cache:
            _atomic_write(cdir / f"{key}.json", text)
        results[key] = result
        if bar is not None:
            bar.update(1)
        if on_result is not None:
            on_result(_row(p, result))

    try:
        if todo:
            _execute(todo, finished, workers, executor)
    finally:
        if bar is not None:
            bar.close()

    df = pd.DataFrame([_row(p, results[p["key"]]) for p in points])
    df.attrs["napisim"] = {"points": len(points), "unique": len(results), "cached": n_cached,
                           "computed": len(todo), "cache_dir": str(cdir) if cache else None}
    return df


def _execute(todo: dict, finished: Callable[[str, dict], None], workers: Optional[int], executor: Any) -> None:
    if executor is None:
        n = max(1, min(workers or os.cpu_count() or 1, len(todo)))
        sims = _Simulations()
        pool = cf.ThreadPoolExecutor(max_workers=n, thread_name_prefix="napisim-sweep")
        futures = {pool.submit(sims.run, p["request"]): k for k, p in todo.items()}
        try:
            for f in cf.as_completed(futures):
                finished(futures[f], f.result())
        except BaseException:
            for f in futures:
                f.cancel()
            sims.stop()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    elif _is_dask_client(executor):
        from distributed import as_completed as dask_as_completed

        futures = {executor.submit(_run_point_subprocess, p["request"], pure=False): k
                   for k, p in todo.items()}
        try:
            for f in dask_as_completed(list(futures)):
                finished(futures[f], f.result())
        except BaseException:
            executor.cancel(list(futures))
            raise
    else:
        futures = {executor.submit(_run_point_subprocess, p["request"]): k for k, p in todo.items()}
        try:
            for f in cf.as_completed(futures):
                finished(futures[f], f.result())
        except BaseException:
            for f in futures:
                f.cancel()
            raise


def sweep_result(key: str, cache_dir: Optional[os.PathLike] = None, label: Optional[str] = None):
    """The full Result of one sweep point, from the cache (the DataFrame's `key` column)."""
    from .result import Result

    path = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / f"{key}.json"
    raw = _cache_read(path)
    if raw is None:
        raise KeyError(f"no cached result {path}")
    return Result(raw, label)
