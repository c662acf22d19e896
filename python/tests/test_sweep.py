"""napisim.sweep: tidy DataFrame, determinism across worker counts, the result cache and resuming."""

import os
import sys

import pandas as pd
import pytest

import napisim
from conftest import SMALL

FLOWS = "workload.params.num_flows"


def small_sweep(cache_dir, **kw):
    args = dict(grid={FLOWS: [8, 16]}, seeds=[1, 2], workers=2, cache_dir=cache_dir, progress=False)
    args.update(kw)
    return napisim.sweep("quickstart", **args, **SMALL)


def test_sweep_is_tidy_one_row_per_point_and_seed(tmp_path):
    df = small_sweep(tmp_path)
    assert len(df) == 4
    assert list(df[FLOWS]) == [8, 8, 16, 16] and list(df["seed"]) == [1, 2, 1, 2]
    for col in ("model", "scenario", "throughput", "latency_ns.p50", "latency_ns.p99", "cpu.busy_pct",
                "cpu.cpu_us_per_op", "cpu.by_class_pct.softirq", "irqs", "fingerprint", "key"):
        assert col in df.columns, col
    assert (df["model"] == "napi_irq").all() and (df["throughput"] > 0).all()
    assert df.attrs["napisim"]["computed"] == 4 and df.attrs["napisim"]["cached"] == 0
    # a point's full result is in the cache under its key
    r = napisim.sweep_result(df["key"][0], cache_dir=tmp_path)
    assert r.raw["scenario"]["workload"]["params"]["num_flows"] == 8
    assert r.fingerprint == df["fingerprint"][0]


def test_sweep_point_equals_run(tmp_path):
    df = small_sweep(tmp_path, grid={FLOWS: [16]}, seeds=[2])
    r = napisim.run("quickstart", seed=2, **SMALL, **{FLOWS: 16})
    assert df["fingerprint"][0] == r.fingerprint
    assert df["latency_ns.p99"][0] == r.summary["latency_ns.p99"]


def test_one_and_two_workers_give_the_same_dataframe(tmp_path):
    one = small_sweep(tmp_path / "a", workers=1)
    two = small_sweep(tmp_path / "b", workers=2)
    pd.testing.assert_frame_equal(one, two)
    again = small_sweep(tmp_path / "c", workers=2)
    pd.testing.assert_frame_equal(two, again)


def test_cache_resume_recomputes_only_missing_points(tmp_path):
    first = small_sweep(tmp_path)
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 4 and {f.stem for f in files} == set(first["key"])
    mtimes = {f: f.stat().st_mtime_ns for f in files}
    for f in files[:2]:
        f.unlink()
    seen = []
    second = small_sweep(tmp_path, on_result=lambda row: seen.append(row["key"]))
    assert second.attrs["napisim"]["computed"] == 2 and second.attrs["napisim"]["cached"] == 2
    assert sorted(seen) == sorted(f.stem for f in files[:2])
    for f in files[2:]:
        assert f.stat().st_mtime_ns == mtimes[f]  # untouched
    for f in files[:2]:
        assert f.exists()  # recomputed and written back
    pd.testing.assert_frame_equal(first, second)
    third = small_sweep(tmp_path)
    assert third.attrs["napisim"]["computed"] == 0
    pd.testing.assert_frame_equal(first, third)


class Interrupt(Exception):
    pass


def test_interrupted_sweep_keeps_finished_points_and_resumes(tmp_path):
    grid = {FLOWS: [4, 8, 12, 16, 20, 24]}

    def stop_after_two(row, done=[]):
        done.append(row)
        if len(done) == 2:
            raise Interrupt()

    with pytest.raises(Interrupt):
        small_sweep(tmp_path, grid=grid, seeds=[1], workers=1, on_result=stop_after_two)
    kept = len(list(tmp_path.glob("*.json")))
    assert 2 <= kept < 6
    assert not list(tmp_path.glob(".*.tmp"))  # no torn files
    resumed = small_sweep(tmp_path, grid=grid, seeds=[1])
    assert resumed.attrs["napisim"]["cached"] == kept
    assert resumed.attrs["napisim"]["computed"] == 6 - kept
    full = small_sweep(tmp_path / "fresh", grid=grid, seeds=[1])
    pd.testing.assert_frame_equal(resumed, full)


def test_a_corrupt_cache_file_is_recomputed(tmp_path):
    first = small_sweep(tmp_path, seeds=[1])
    victim = tmp_path / f"{first['key'][0]}.json"
    victim.write_text("{not json")
    second = small_sweep(tmp_path, seeds=[1])
    assert second.attrs["napisim"]["computed"] == 1
    pd.testing.assert_frame_equal(first, second)


def test_cache_false_writes_nothing(tmp_path):
    df = small_sweep(tmp_path, cache=False, grid={FLOWS: [8]}, seeds=[1])
    assert len(df) == 1 and not list(tmp_path.glob("*.json"))


def test_default_cache_dir_follows_env(tmp_path, monkeypatch):
    monkeypatch.setenv("NAPISIM_CACHE", str(tmp_path / "env-cache"))
    assert napisim.default_cache_dir() == tmp_path / "env-cache"
    napisim.sweep("quickstart", grid={FLOWS: [8]}, progress=False, **SMALL)
    assert len(list((tmp_path / "env-cache").glob("*.json"))) == 1


def test_bad_grid_value_fails_before_running_with_the_pointer(tmp_path):
    with pytest.raises(ValueError) as e:
        small_sweep(tmp_path, grid={FLOWS: [8, -1]})
    msg = str(e.value)
    assert msg.startswith("/workload/params/num_flows") and "sweep point" in msg
    assert not list(tmp_path.glob("*.json"))


def test_variants_and_structured_grid_values(tmp_path):
    df = napisim.sweep("quickstart", variants={"nice0": {}, "nice5": {"models": [{"name": "napi_irq",
                       "params": {"ksoftirqd_nice": 5}}]}},
                       grid={"nics.0.irq_affinity": ["0-1", "0-3"]}, seeds=[1], cache_dir=tmp_path,
                       progress=False, **SMALL)
    assert list(df["variant"]) == ["nice0", "nice0", "nice5", "nice5"]
    assert list(df["nics.0.irq_affinity"]) == ["0-1", "0-3", "0-1", "0-3"]
    df2 = napisim.sweep("quickstart", grid={"models": [[{"name": "napi_irq"}]]}, seeds=[1], cache_dir=tmp_path,
                        progress=False, **SMALL)
    assert df2["models"][0] == '[{"name": "napi_irq"}]'


def test_identical_points_run_once(tmp_path):
    df = small_sweep(tmp_path, grid={FLOWS: [8, 8]}, seeds=[1])
    assert len(df) == 2 and df.attrs["napisim"]["computed"] == 1
    assert df["fingerprint"][0] == df["fingerprint"][1]


def test_any_concurrent_futures_executor_works(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as ex:
        threaded = small_sweep(tmp_path / "t", executor=ex)
    local = small_sweep(tmp_path / "l")
    pd.testing.assert_frame_equal(threaded, local)


def test_progress_bar_goes_to_stderr(tmp_path, capsys):
    small_sweep(tmp_path, grid={FLOWS: [8]}, seeds=[1], progress=True)
    assert "napisim sweep" in capsys.readouterr().err


def test_a_list_of_base_scenarios(tmp_path):
    doc = napisim.default_scenario()
    doc["name"] = "other"
    df = napisim.sweep(["quickstart", doc], grid={FLOWS: [8]}, seeds=[1, 2], cache_dir=tmp_path, progress=False,
                       **SMALL)
    assert list(df["scenario"]) == ["quickstart", "quickstart", "other", "other"]
    assert list(df["seed"]) == [1, 2, 1, 2]


# ---- bad arguments are ValueError naming the argument, before anything runs ----


@pytest.mark.parametrize("grid,got", [({"seed": 5}, "number 5"),
                                      ({"workload.params.flow_steering": "rx_queue"}, 'string "rx_queue"'),
                                      ({FLOWS: {"a": 8}}, "dict")])
def test_a_grid_value_must_be_a_list_of_values(tmp_path, grid, got):
    key = next(iter(grid))
    with pytest.raises(ValueError) as e:
        small_sweep(tmp_path, grid=grid)
    assert str(e.value) == (f"sweep: grid['{key}'] must be a list, tuple, range or numpy array of values, "
                            f"got {got}")
    with pytest.raises(ValueError, match=r"^sweep: grid must be a dict"):
        small_sweep(tmp_path, grid=[(FLOWS, [8])])


def test_grid_values_may_be_a_tuple_range_or_numpy_array(tmp_path, monkeypatch):
    np = pytest.importorskip("numpy")
    sweep_mod = sys.modules["napisim.sweep"]  # the module (napisim.sweep is the function)

    def no_runs(todo, finished, workers, executor):
        raise Interrupt(sorted(p["columns"][FLOWS] for p in todo.values()))

    monkeypatch.setattr(sweep_mod, "_execute", no_runs)  # check the points, run nothing
    for values in ((8, 16), range(8, 17, 8), np.array([8, 16])):
        with pytest.raises(Interrupt) as e:
            small_sweep(tmp_path, grid={FLOWS: values}, seeds=[1])
        assert e.value.args[0] == [8, 16]


@pytest.mark.parametrize("seeds,msg", [
    ("12", r"^sweep: seeds must be a list, tuple, range or numpy array of seeds .*got string \"12\""),
    (5, r"^sweep: seeds must be a list, tuple, range or numpy array of seeds .*got number 5"),
    ([1, "2"], r"^/seed: expected integer in \[0, 9e\+15\], got string \"2\" \(sweep: seeds\[1\]\)"),
    ([2**70], r"^/seed: expected integer in \[0, 9e\+15\], got 1180591620717411303424"),
])
def test_bad_seeds_are_value_error(tmp_path, seeds, msg):
    with pytest.raises(ValueError, match=msg):
        small_sweep(tmp_path, seeds=seeds)


def test_a_variant_must_be_a_mapping_of_overrides(tmp_path):
    with pytest.raises(ValueError, match=r"^sweep: variants\['a'\]: expected a mapping \{path: value\}.*got int"):
        small_sweep(tmp_path, variants={"a": 5})
    with pytest.raises(ValueError, match=r"^sweep: variants must be a dict"):
        small_sweep(tmp_path, variants=[{"a": {}}])
    with pytest.raises(ValueError, match=r"^overrides: expected a mapping"):
        small_sweep(tmp_path, overrides=[1, 2])


def test_a_cache_dir_that_is_a_file_is_value_error(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    for cdir in (f, f / "sub"):
        with pytest.raises(ValueError, match=r"^sweep: cache_dir must be a directory, but '.*file.*' .*is a file"):
            small_sweep(cdir)
    assert f.read_text() == "x"


@pytest.mark.parametrize("workers", [0, -1, 1.5, True])
def test_workers_must_be_a_positive_integer(tmp_path, workers):
    with pytest.raises(ValueError, match=r"^sweep: workers must be a positive integer \(or None"):
        small_sweep(tmp_path, workers=workers)


def test_cache_key_follows_the_trace_content_not_its_location(tmp_path):
    trace = "timestamp,flow\n0,1\n0.0001,2\n"
    scenario = '{"warmup_s": 0, "duration_s": 0.002, "workload": {"type": "trace", "params": {"file": "t.csv"}}}'
    keys = []
    for d in ("a", "b/c", "d"):
        (tmp_path / d).mkdir(parents=True)
        (tmp_path / d / "t.csv").write_text(trace if d != "d" else trace + "0.0002,1\n")
        (tmp_path / d / "s.json").write_text(scenario)
        df = napisim.sweep(str(tmp_path / d / "s.json"), seeds=[1], workers=1, cache_dir=tmp_path / "cache",
                           progress=False)
        keys.append(df["key"][0])
    assert keys[0] == keys[1], "a copy of the scenario and its trace elsewhere misses the cache"
    assert keys[2] != keys[0], "another trace hits the old trace's cache entry"


# The same sweep from a script without a main guard, from stdin and from -c: no point is pickled
# and __main__ is never re-imported (each point is its own `python -m napisim._worker` process).
SCRIPT = (
    "import napisim\n"
    "df = napisim.sweep('quickstart', grid={'workload.params.num_flows': [8, 16]}, seeds=[1], workers=2,\n"
    "                   cache=False, progress=False, duration_s=0.01, warmup_s=0.002)\n"
    "print('rows', len(df), int((df['throughput'] > 0).sum()))\n"
    "r = napisim.run('quickstart', duration_s=0.01, warmup_s=0.002)\n"
    "print('run', r.summary['throughput'] > 0)\n"
)


@pytest.mark.parametrize("how", ["script", "stdin", "-c"])
def test_sweep_and_run_work_from_any_script(tmp_path, how):
    import subprocess

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    if how == "script":
        f = tmp_path / "no_main_guard.py"
        f.write_text(SCRIPT)
        cmd, stdin = [sys.executable, str(f)], None
    elif how == "stdin":
        cmd, stdin = [sys.executable, "-"], SCRIPT
    else:
        cmd, stdin = [sys.executable, "-c", SCRIPT], None
    out = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "rows 2 2" in out.stdout and "run True" in out.stdout
    assert "Traceback" not in out.stderr


def test_a_failing_point_raises_the_simulators_message(tmp_path):
    # A value only the built host can reject (a cpulist naming a CPU it lacks): the point's own
    # error, as ValueError, not a pool traceback.
    with pytest.raises(ValueError, match=r"/workload/params/server_cpus"):
        small_sweep(tmp_path, grid={"workload.params.server_cpus": ["0", "900"]}, seeds=[1])


def test_compare_pairs_the_same_seeds_against_the_first(tmp_path):
    base = napisim.default_scenario()
    dear = napisim.default_scenario()
    dear.setdefault("costs", {})["rx_skb_ns"] = 4000
    df = napisim.compare(base, dict(base), dear, seeds=[1, 2, 3], workers=2, cache_dir=tmp_path, **SMALL)
    rows = df.set_index("metric")
    # A copy of the baseline changes nothing, exactly; dearer packets cost throughput and CPU.
    assert (rows["change_1"] == 0).all() and not rows["called_1"].any()
    assert rows.loc["throughput", "change_2"] < 0 and rows.loc["throughput", "called_2"]
    assert rows.loc["CPU per op", "change_2"] > 0 and rows.loc["CPU per op", "called_2"]
    assert rows.loc["latency p50", "unit"] == "us"
    with pytest.raises(ValueError, match="at least two scenarios"):
        napisim.compare(base)


def test_compare_explain_pairs_each_bands_stages(tmp_path):
    base = napisim.default_scenario()
    dear = napisim.default_scenario()
    dear.setdefault("costs", {})["rx_skb_ns"] = 4000
    df = napisim.compare(base, dear, seeds=[1, 2, 3], workers=2, cache_dir=tmp_path, explain=True, **SMALL)
    rows = df[df["stage"].fillna(False).astype(bool)].set_index("metric")
    assert "all server.napi" in rows.index and "p99-p99.9 client.app" in rows.index
    # The stages' changes add up to the band latency's; dearer skbs show in the server's napi stage.
    for band in ("p0-p50", "p99-p99.9", "all"):
        stages = rows[[m.startswith(band + " ") and not m.endswith(" latency") for m in rows.index]]
        assert abs(stages["change_1"].sum() - rows.loc[f"{band} latency", "change_1"]) < 1e-6
    assert rows.loc["all server.napi", "change_1"] > 0 and rows.loc["all server.napi", "called_1"]
    # Runs with and without explain are cached apart; the plain compare has no stage rows.
    plain = napisim.compare(base, dear, seeds=[1, 2, 3], workers=2, cache_dir=tmp_path, **SMALL)
    assert "stage" not in plain.columns
