"""napisim.run / validate / describe / list_models / schema, errors, determinism, plots."""

import json
import subprocess
import sys

import pandas as pd
import pytest

import napisim
from conftest import SMALL


def test_list_models_sorted_and_has_softirq_napi():
    models = napisim.list_models()
    assert "napi_irq" in models
    assert models == sorted(models)
    assert napisim.model_summaries()["napi_irq"]
    assert napisim.has_model("napi_irq") and not napisim.has_model("no_such_model")
    assert napisim.model_spec("napi_threaded", cpumask="0-3") == {"name": "napi_threaded", "params": {"cpumask": "0-3"}}
    assert napisim.model_spec("napi_irq") == {"name": "napi_irq"}


def test_describe_lists_every_knob():
    d = napisim.describe("napi_irq")
    assert d["name"] == "napi_irq"
    names = d.param_names()
    assert "ksoftirqd_nice" in names
    row = next(p for p in d["params"] if p["name"] == "ksoftirqd_nice")
    assert row["default"] == 0 and row["type"] == "int64"
    assert "NAME" in d["text"] and "ksoftirqd_nice" in repr(d)
    assert list(d.params["name"]) == names


def test_describe_a_workload_as_its_model_siblings():
    assert napisim.list_workloads() == sorted(napisim.schema()["$defs"]["workload_params"])
    d = napisim.describe("tcp_rr")
    assert d["kind"] == "workload" and d["name"] == "tcp_rr"
    assert {"num_flows", "num_threads", "client_threads"} <= set(d.param_names())
    assert napisim.describe("napi_irq")["kind"] == "model"


def test_describe_unknown_model_is_value_error_naming_the_models():
    with pytest.raises(ValueError, match="napi_irq"):
        napisim.describe("napi_iqr")


def test_schema_describes_a_scenario():
    s = napisim.schema()
    assert "workload" in s["properties"] and "models" in s["properties"]


def test_a_run_validates_against_the_results_schema():
    import jsonschema

    rs = napisim.schema(results=True)
    r = napisim.run("quickstart", duration_s=0.002, warmup_s=0.001).raw
    jsonschema.validate(r["summary"], rs["host"])
    for cpu in r["per_cpu"]:
        jsonschema.validate(cpu, {**rs["per_cpu"], "required": list(rs["per_cpu"]["properties"])})
    for host in r["clients"].values():
        jsonschema.validate(host, {**rs["host"], "required": list(rs["host"]["properties"])})
    assert rs["host"]["properties"]["cpu"]["properties"]["busy_pct"]["x-unit"] == "%"


def test_validate_spells_out_defaults_and_applies_overrides():
    r = napisim.validate("quickstart", duration_s=0.03, workload__params__num_flows=16)
    assert r["duration_s"] == 0.03
    assert r["workload"]["params"]["num_flows"] == 16
    assert r["kernel"]["net"]["dev_weight"] == 64  # a default the file does not spell out
    same = napisim.validate("quickstart", overrides={"/duration_s": 0.03, "workload.params.num_flows": 16})
    assert same == r
    assert napisim.validate("quickstart", seed=7)["seed"] == 7


@pytest.mark.parametrize("override,pointer", [
    ({"workload.params.num_flowz": 3}, "/workload/params/num_flowz"),
    ({"nics.0.queues": 0}, "/nics/0/queues"),
    ({"duration_s": "long"}, "/duration_s"),
    ({"models": [{"name": "napi_iqr"}]}, "/models/0/name"),
])
def test_bad_input_is_value_error_with_json_pointer(override, pointer):
    with pytest.raises(ValueError) as e:
        napisim.validate("quickstart", overrides=override)
    assert str(e.value).startswith(pointer), str(e.value)


def test_run_error_in_the_worker_arrives_as_value_error_with_pointer():
    with pytest.raises(ValueError) as e:
        napisim.run("quickstart", **SMALL, **{"workload.params.num_flowz": 3})
    assert str(e.value).startswith("/workload/params/num_flowz"), str(e.value)


def test_unknown_scenario_name_is_value_error():
    with pytest.raises(ValueError, match="no scenario file or scenario name 'nope/nothing'"):
        napisim.run("nope/nothing")
    with pytest.raises(ValueError, match="not valid JSON"):
        napisim.validate(__file__)  # a file, but not JSON


def test_scenario_names_resolve_to_files_under_scenarios():
    names = napisim.list_scenarios()
    assert "quickstart" in names
    for name in names:
        if name.startswith("wei2020/"):
            assert napisim.validate(name)["name"] == name


def test_run_returns_pandas_views():
    r = napisim.run("quickstart", **SMALL)
    assert isinstance(r, napisim.Result)
    s = r.summary
    assert isinstance(s, pd.Series)
    for key in ("throughput", "latency_ns.p50", "latency_ns.p99", "cpu.busy_pct", "cpu.cpu_us_per_op",
                "cpu.by_class_pct.softirq", "irqs"):
        assert key in s.index, key
    assert s["throughput"] > 0 and s["latency_ns.p99"] >= s["latency_ns.p50"] > 0
    assert r["throughput"] == s["throughput"]
    assert len(r.per_cpu) == r.raw["scenario"]["topology"]["cores_per_llc"]
    assert "busy_pct" in r.per_cpu.columns and "by_class_pct.softirq" in r.per_cpu.columns
    h = r.histogram
    assert list(h.columns) == ["lo", "hi", "count", "cdf"]
    assert h["count"].sum() == r.raw["histogram"]["count"]
    assert h["cdf"].iloc[-1] == pytest.approx(1.0) and h["cdf"].is_monotonic_increasing
    c = r.latency_cdf()
    assert c["cdf"].iloc[0] == 0.0 and c["latency_us"].is_monotonic_increasing
    assert r.raw["scenario"]["duration_s"] == SMALL["duration_s"]
    assert r.context["scenario"] == "quickstart" and r.label == "napi_irq"
    assert "qps=" in repr(r)
    assert set(r.percentiles().index).issuperset({"p50", "p99"})
    # The client is a Linux host like the server: its figures are there too, per host.
    assert set(r.clients) == {"client0"}
    c0 = r.clients["client0"]
    assert c0["cpu.busy_pct"] > 0 and c0["rx_packets"] > 0 and "cpu.by_class_pct.softirq" in c0.index
    assert len(r.client_per_cpu("client0")) == len(r.per_cpu)


def test_idealised_client_has_no_client_host():
    r = napisim.run("quickstart", **SMALL, overrides={"platform.clients": [{"stack": "idealised"}]})
    assert r.clients == {} and r.client_per_cpu().empty
    assert r.summary["throughput"] > 0


def test_run_accepts_dict_path_and_name_alike(tmp_path):
    doc = napisim.default_scenario()
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    a = napisim.run("quickstart", **SMALL)
    b = napisim.run(doc, **SMALL)
    c = napisim.run(str(path), **SMALL)
    assert a.fingerprint == b.fingerprint == c.fingerprint
    assert a.raw["summary"] == c.raw["summary"]


def test_keyword_dotted_and_dict_overrides_are_the_same():
    a = napisim.run("quickstart", **SMALL, workload__params__num_flows=16)
    b = napisim.run("quickstart", overrides={**SMALL, "workload.params.num_flows": 16})
    assert a.raw["scenario"]["workload"]["params"]["num_flows"] == 16
    assert a.fingerprint == b.fingerprint


def test_same_seed_same_result_many_runs_in_one_process():
    runs = [napisim.run("quickstart", seed=3, **SMALL) for _ in range(3)]
    assert runs[0].raw == runs[1].raw == runs[2].raw
    pd.testing.assert_series_equal(runs[0].summary, runs[2].summary)
    pd.testing.assert_frame_equal(runs[0].per_cpu, runs[2].per_cpu)
    other = napisim.run("quickstart", seed=4, **SMALL)
    assert other.context["seed"] == 4


def test_native_module_refuses_a_second_run_in_one_process():
    code = (
        "import json, napisim\n"
        "from napisim import _napisim\n"
        "doc = json.dumps(napisim.default_scenario())\n"
        "_napisim.run_json(doc, ['duration_s=0.005', 'warmup_s=0.001'])\n"
        "try:\n"
        "    _napisim.run_json(doc, ['duration_s=0.005', 'warmup_s=0.001'])\n"
        "except RuntimeError as e:\n"
        "    print('refused:', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "refused:" in out.stdout and "one simulation per process" in out.stdout


def test_plot_helpers_draw(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from napisim import plots

    a = napisim.run("quickstart", **SMALL, label="64 flows")
    b = napisim.run("quickstart", **SMALL, workload__params__num_flows=16, label="16 flows")
    assert plots.latency_cdf({"a": a, "b": b}).get_legend() is not None
    assert plots.latency_cdf([a, b], tail=True).get_yscale() == "log"
    assert len(plots.percentile_bars([a, b]).patches) == 8
    ax = plots.cpu_by_class(a)
    assert len(ax.patches) > 0
    df = pd.DataFrame({"model": ["x", "x", "y", "y"], "flows": [1, 2, 1, 2], "seed": [1] * 4,
                       "latency_ns.p99": [1e3, 2e3, 3e3, 4e3], "cpu.busy_pct": [10, 20, 15, 30]})
    ax = plots.sweep_curve(df, x="flows")
    assert "p99" in ax.get_ylabel() and len(ax.get_lines()) >= 2
    ax = plots.frontier(df, by="flows", annotate="flows")
    assert "CPU" in ax.get_xlabel()
    ax.figure.savefig(tmp_path / "f.png")
    plt.close("all")


# ---- bad input is ValueError naming the JSON pointer, never TypeError/AttributeError/RecursionError ----
# (each of these fails before a worker process starts, so nothing is simulated)


@pytest.mark.parametrize("seed,got", [("abc", 'string "abc"'), (1.5, "number 1.5"), (2**70, str(2**70)),
                                      (-1, "-1"), (True, "boolean true"), (float("nan"), "NaN")])
def test_bad_seed_is_value_error_naming_seed_and_its_range(seed, got):
    for call in (napisim.validate, napisim.run):
        with pytest.raises(ValueError) as e:
            call("quickstart", seed=seed, **SMALL)
        assert str(e.value) == f"/seed: expected integer in [0, 9e+15], got {got}"


def test_seed_accepts_numpy_integers_and_the_whole_range():
    np = pytest.importorskip("numpy")
    assert napisim.validate("quickstart", seed=np.int64(3))["seed"] == 3
    assert napisim.validate("quickstart", seed=9 * 10**15)["seed"] == 9 * 10**15
    assert napisim.validate("quickstart", seed=0)["seed"] == 0


def test_overrides_that_are_not_a_mapping_are_value_error():
    for call in (napisim.validate, napisim.run):
        with pytest.raises(ValueError, match=r"^overrides: expected a mapping \{path: value\}.*got list"):
            call("quickstart", overrides=[1, 2])


@pytest.mark.parametrize("bad,pointer,got", [(float("nan"), "/duration_s", "NaN"),
                                             (float("inf"), "/duration_s", "Infinity"),
                                             ([1, float("-inf")], "/duration_s/1", "-Infinity")])
def test_nan_or_infinity_in_a_scenario_dict_names_its_pointer(bad, pointer, got):
    doc = napisim.default_scenario()
    doc["duration_s"] = bad
    for call in (napisim.validate, napisim.run):
        with pytest.raises(ValueError) as e:
            call(doc)
        assert str(e.value) == f"{pointer}: expected a finite number, got {got}"
    with pytest.raises(ValueError, match=r"^/duration_s: expected a finite number, got NaN"):
        napisim.validate("quickstart", duration_s=float("nan"))  # an override too


def test_nan_in_a_scenario_file_names_its_pointer(tmp_path):
    path = tmp_path / "nan.json"
    path.write_text(json.dumps({**napisim.default_scenario(), "warmup_s": float("nan")}))  # writes NaN
    with pytest.raises(ValueError, match=r"^/warmup_s: expected a finite number, got NaN"):
        napisim.validate(str(path))


def test_deeply_nested_scenario_dict_is_value_error_not_recursion_error():
    deep = 1
    for _ in range(900):
        deep = [deep]
    doc = {**napisim.default_scenario(), "x": deep}
    for call in (napisim.validate, napisim.run):
        with pytest.raises(ValueError) as e:
            call(doc)
        pointer, msg = str(e.value).split(": ", 1)
        assert msg.startswith("nesting deeper than 256 levels")
        assert pointer == "/x" + "/0" * 255  # the first container 257 levels down
    cycle: dict = {}
    cycle["self"] = cycle
    with pytest.raises(ValueError, match="nesting deeper than 256 levels"):
        napisim.validate({**napisim.default_scenario(), "x": cycle})


def test_nesting_limit_is_256_levels():
    def nested(levels):  # the document is level 1, doc["x"] level 2, ...
        v = 1
        for _ in range(levels - 1):
            v = {"a": v}
        return {**napisim.default_scenario(), "x": v}

    with pytest.raises(ValueError, match=r"^/x: unknown key"):  # deep but allowed: the scenario check answers
        napisim.validate(nested(256))
    with pytest.raises(ValueError, match=r"^/x(/a){255}: nesting deeper than 256 levels"):
        napisim.validate(nested(257))


@pytest.mark.parametrize("levels", [300, 100000])
def test_deeply_nested_scenario_file_is_value_error_not_recursion_error(tmp_path, levels):
    path = tmp_path / "deep.json"
    path.write_text('{"name": "deep", "x": [0, ' + '{"k": ' * levels + "1" + "}" * levels + "]}")
    with pytest.raises(ValueError) as e:
        napisim.validate(str(path))
    pointer, msg = str(e.value).split(": ", 1)
    assert msg.startswith("nesting deeper than 256 levels")
    assert pointer == "/x/1" + "/k" * 254


def test_duplicate_key_in_a_scenario_file_is_value_error_naming_it(tmp_path):
    path = tmp_path / "dup.json"
    path.write_text('{"seed": 1, "seed": 2}')
    for call in (napisim.validate, napisim.run):
        with pytest.raises(ValueError, match=r"^/seed: duplicate key in .*dup\.json"):
            call(str(path))
    text = json.dumps(napisim.default_scenario()).replace('"workload": {', '"workload": {"type": "x", ', 1)
    path.write_text(text)
    with pytest.raises(ValueError, match=r"^/workload/type: duplicate key"):
        napisim.validate(str(path))


def test_a_scenario_of_the_wrong_type_is_value_error():
    with pytest.raises(ValueError, match=r"^/: scenario must be a dict, a path or a scenario name, not int"):
        napisim.validate(5)


def test_a_scenario_file_over_the_size_limit_is_value_error(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b"{}" + b" " * (napisim._napisim.MAX_JSON_FILE_BYTES - 1))
    with pytest.raises(ValueError, match=r"^/: scenario file '.*big\.json' is larger than the limit of 8 MiB"):
        napisim.validate(str(path))


def test_a_null_scenario_file_is_value_error_with_or_without_overrides(tmp_path):
    path = tmp_path / "null.json"
    path.write_text("null")
    for overrides in ({}, {"seed": 3}):
        with pytest.raises(ValueError, match=r"^/: expected a scenario object, got null"):
            napisim.validate(str(path), **overrides)


def test_run_writes_a_perfetto_trace_of_both_hosts(tmp_path):
    path = tmp_path / "t.json"
    r = napisim.run("quickstart", **SMALL, trace=str(path), trace_for=0.002)
    t = json.loads(path.read_text())
    procs = {e["args"]["name"] for e in t["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"}
    assert procs == {"server CPUs", "server tasks", "client0 CPUs", "client0 tasks", "requests (sampled)"}
    start = int(r.summary["time_start_ns"])
    assert t["otherData"]["napisim_window_ns"] == [start, start + 2_000_000]
    assert any(e["ph"] == "X" and e["cat"] == "napi" for e in t["traceEvents"])


def test_run_trace_errors_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="--trace-for"):
        napisim.run("quickstart", **SMALL, trace=str(tmp_path / "t.json"), trace_for=0)
    with pytest.raises(ValueError, match="trace"):
        napisim.run("quickstart", **SMALL, trace=str(tmp_path / "no" / "such" / "t.json"))
    assert not (tmp_path / "t.json").exists()


def test_read_trace_gives_slices_that_add_up_to_the_runs_cpu_time(tmp_path):
    path = tmp_path / "t.json"
    r = napisim.run("quickstart", **SMALL, trace=str(path), trace_for=SMALL["duration_s"])
    t = napisim.read_trace(path)
    assert set(t["kind"]) == {"cpu", "napi", "task"}
    assert set(t["host"]) == {"server", "client0"}
    cpu = t[(t["kind"] == "cpu") & (t["host"] == "server")]
    window = SMALL["duration_s"] * 1e9 * cpu["cpu"].nunique()
    for cls, ns in cpu.groupby("name")["dur_ns"].sum().items():
        assert abs(100.0 * ns / window - r.summary[f"cpu.by_class_pct.{cls}"]) < 1e-6, cls
    napi = t[t["kind"] == "napi"]
    assert ((napi["work"] >= 0) & (napi["work"] <= napi["budget"])).all()
    waits = t[(t["kind"] == "task") & (t["name"] == "runnable")]
    assert (waits["dur_ns"] > 0).all() and waits["task"].notna().all()
    # Sampled requests: each one's stages tile it exactly, and every traced request is a measured one
    # of at most 16 flows.
    req = napisim.read_trace(path, requests=True)
    lo, hi = json.loads(path.read_text())["otherData"]["napisim_window_ns"]
    assert len(req) > 0 and req["flow"].nunique() <= 16
    for (flow, start), g in req.groupby(["flow", "request_ns"]):
        g = g.sort_values("start_ns")
        assert (g["start_ns"].iloc[1:].to_numpy() == (g["start_ns"] + g["dur_ns"]).iloc[:-1].to_numpy()).all()
        if start >= lo and start + g["latency_ns"].iloc[0] <= hi:  # not clipped by the window
            assert g["dur_ns"].sum() == g["latency_ns"].iloc[0], (flow, start)
    assert {"client.send", "server.napi", "client.app"} <= set(req["name"])
    irqs = napisim.read_trace(path, irqs=True)
    assert "irq:nic" in set(irqs["name"])
    with pytest.raises(ValueError, match="not a napisim trace"):
        bad = tmp_path / "x.json"
        bad.write_text("{}")
        napisim.read_trace(bad)


def test_run_with_interval_reports(tmp_path):
    r = napisim.run("quickstart", **SMALL, interval=0.005)
    iv = r.intervals
    assert len(iv) == 4
    assert list(iv["t_end_s"].round(9)) == [0.01, 0.015, 0.02, 0.025]
    assert iv["transactions"].sum() == r.summary["transactions"]
    assert "cpu.by_class_pct.softirq" in iv.columns and "latency_ns.p99" in iv.columns
    assert napisim.run("quickstart", **SMALL).intervals.empty
    with pytest.raises(ValueError, match="interval"):
        napisim.run("quickstart", **SMALL, interval=0)


def test_run_with_explain_breakdown():
    import matplotlib

    matplotlib.use("Agg")
    r = napisim.run("quickstart", **SMALL, explain=True)
    b = r.breakdown
    assert list(b.index) == ["p0-p50", "p50-p90", "p90-p95", "p95-p99", "p99-p99.9", "p99.9-p99.99",
                             "p99.99-p100", "all"]
    stages = [c for c in b.columns[2:] if "[" not in c]
    assert stages[:3] == ["client.send", "wire.request", "server.irq"] and stages[-1] == "client.app"
    # Each band's stages sum to its mean latency; "all" is the histogram's mean over every request.
    assert ((b[stages].sum(axis=1) - b["latency_ns"]).abs() <= 1e-6 * b["latency_ns"]).all()  # an empty band: 0
    # The waiting stages' splits by what their CPU did (who was running instead) sum to them.
    for stage in ("server.net_rx_wait", "server.socket_queue", "server.runq", "client.socket_queue"):
        split = [c for c in b.columns if c.startswith(stage + "[")]
        assert split[-1] == stage + "[self]" and stage + "[softirq]" in split
        assert ((b[split].sum(axis=1) - b[stage]).abs() <= 1e-6 * b["latency_ns"]).all()
    assert list(b.columns[2 + len(stages):]) == r.raw["latency_breakdown"]["splits"]
    assert b.loc["all", "requests"] == r.raw["histogram"]["count"] == b["requests"].iloc[:-1].sum()
    assert abs(b.loc["all", "latency_ns"] - r.summary["latency_ns.mean"]) < 1e-6 * r.summary["latency_ns.mean"]
    ax = napisim.plots.breakdown_bars(r)
    assert len(ax.patches) > 0
    assert napisim.run("quickstart", **SMALL).breakdown.empty
    with pytest.raises(ValueError, match="explain"):
        napisim.run("quickstart", **SMALL, explain="yes")
    with pytest.raises(ValueError, match="--explain"):
        napisim.run({"workload": {"type": "stream", "params": {}}, "duration_s": 0.01}, explain=True)
