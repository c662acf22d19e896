"""Validation suite (CTest label `validation`): every published direction of validation/datasets.json
at reduced sizes (napisim.validation.QUICK_OVERRIDES, seeds 1-3). A direction holds when the 95%
interval of napisim's per-seed paired change lies on the published side of zero (or, for `similar`,
the means are within the tolerance).
Directions the model does not reproduce yet carry a `suspect` sentence in datasets.json and are
xfail(strict=True): they stay visible, and turn into a failure the day they start to hold, so the
sentence (and VALIDATION.md) must then be updated. Rows whose scenario file does not exist yet are
skipped, and start running as soon as the file lands."""

import json
import math

import pytest

from napisim import validation as v

DATASETS = v.load_datasets()
SEEDS = v.QUICK_SEEDS


def _cases():
    for ds in DATASETS:
        for d in ds.get("directions", []):
            marks = []
            if d.get("suspect"):
                marks.append(pytest.mark.xfail(strict=True, reason=d["suspect"]))
            yield pytest.param(ds["id"], d["id"], id=f"{ds['id']}.{d['id']}", marks=marks)


@pytest.fixture(scope="module")
def results():
    res = v.run_datasets(DATASETS, SEEDS, dict(v.QUICK_OVERRIDES), workers=2)
    return {r.dataset["id"]: r for r in res}


@pytest.mark.parametrize("dataset,direction", list(_cases()))
def test_direction(results, dataset, direction):
    r = results[dataset]
    d = next(x for x in r.directions if x["id"] == direction)
    missing = [lab for lab in (d["a"], d["b"]) if r.rows[lab].status == "scenario missing"]
    if missing:
        pytest.skip(f"scenario missing for {', '.join(missing)}")
    assert d["holds"], f"{d['claim']}: napisim {d['text']}"


def test_every_row_runs_or_is_missing(results):
    """A row either runs or its scenario file does not exist yet; an existing scenario that fails to
    run (bad overrides after a parameter rename, a crash) is a failure."""
    bad = [(ds_id, lab, rr.status) for ds_id, r in results.items() for lab, rr in r.rows.items()
           if rr.status not in ("ok", "scenario missing")]
    assert not bad, bad


def test_every_assumption_row_runs(results):
    """Each assumption's rows run with its overrides (a renamed parameter fails here, not silently)."""
    bad = [(ds_id, a.assumption["name"], lab, rr.status) for ds_id, r in results.items() for a in r.assumptions
           for lab, rr in a.rows.items() if rr.status != "ok"]
    assert not bad, bad
    for ds_id, r in results.items():
        assert len(r.assumptions) == len(r.dataset.get("assumptions", [])), ds_id


def test_every_published_cell_has_a_simulated_value(results):
    for ds_id, r in results.items():
        for row in r.dataset["rows"]:
            if r.rows[row["label"]].status != "ok":
                continue
            for key in row.get("published", {}):
                s = r.values[row["label"]][key]
                assert s is not None and math.isfinite(s.mean), (ds_id, row["label"], key)


# ---- the statistics the directions rest on (hand-computed) ----

def test_stat_is_mean_and_student_t_interval():
    s = v.stat([1.0, 2.0, 3.0])
    assert s.mean == pytest.approx(2.0)
    assert s.ci == pytest.approx(4.303 * 1.0 / math.sqrt(3), rel=1e-4)
    assert v.stat([5.0]).ci == 0.0
    assert v.stat([]) is None


def _rows(*labels):
    return {lab: v.RowResult(lab, "ok") for lab in labels}


def test_judge_calls_a_direction_only_when_intervals_separate():
    d = {"a": "x", "b": "y", "column": "m", "kind": "lower"}
    sep = {"x": {"m": v.Stat(10, 1, 3)}, "y": {"m": v.Stat(13, 1, 3)}}
    assert v.judge(d, sep, _rows("x", "y"))["holds"]
    overlap = {"x": {"m": v.Stat(10, 2, 3)}, "y": {"m": v.Stat(13, 2, 3)}}
    out = v.judge(d, overlap, _rows("x", "y"))
    assert not out["holds"] and not out["called"]
    opposite = {"x": {"m": v.Stat(13, 1, 3)}, "y": {"m": v.Stat(10, 1, 3)}}
    out = v.judge(d, opposite, _rows("x", "y"))
    assert not out["holds"] and out["called"]
    sim = {"kind": "similar", "tolerance": 0.05, "a": "x", "b": "y", "column": "m"}
    assert v.judge(sim, {"x": {"m": v.Stat(104, 9, 3)}, "y": {"m": v.Stat(100, 9, 3)}}, _rows("x", "y"))["holds"]
    assert not v.judge(sim, {"x": {"m": v.Stat(107, 1, 3)}, "y": {"m": v.Stat(100, 1, 3)}}, _rows("x", "y"))["holds"]


def test_judge_pairs_seeds_when_per_seed_values_are_given():
    # Three seeds whose levels differ a lot (10, 20, 30) but where x is always 1/11 below y: the
    # intervals of x and y overlap, the paired change (-1/11 at every seed, CI 0) is called.
    d = {"a": "x", "b": "y", "column": "m", "kind": "lower"}
    xs, ys = [10.0, 20.0, 30.0], [11.0, 22.0, 33.0]
    vals = {"x": {"m": v.stat(xs)}, "y": {"m": v.stat(ys)}}
    assert not v.judge(d, vals, _rows("x", "y"))["called"]  # unpaired: the intervals overlap
    out = v.judge(d, vals, _rows("x", "y"), series={"x": xs, "y": ys})
    assert out["holds"] and out["called"] and out["text"] == "-9.1%"
    up = v.judge({**d, "kind": "higher"}, vals, _rows("x", "y"), series={"x": xs, "y": ys})
    assert not up["holds"] and up["called"] and up["text"] == "-9.1% (opposite)"
    # A change that flips sign between seeds: -9.1%, +9.1%, -9.1% -> mean -3.0%, t(2) * sd / sqrt(3)
    # = 4.303 * 0.105 / 1.732 = 0.261 > 0.030: not called.
    noisy = v.judge(d, vals, _rows("x", "y"), series={"x": [10.0, 24.0, 30.0], "y": [11.0, 22.0, 33.0]})
    assert not noisy["holds"] and not noisy["called"] and "paired 95% interval spans 0" in noisy["text"]
    # Relative datasets: the values are % changes, paired as differences in pp.
    ch = v.paired_change([5.0, 7.0, 9.0], [1.0, 2.0, 3.0], relative=True)
    assert ch.mean == pytest.approx(5.0) and ch.ci == pytest.approx(4.303 * 1.0 / math.sqrt(3), rel=1e-4)


def test_missing_scenario_is_reported_not_hidden():
    rows = {"x": v.RowResult("x", "scenario missing"), "y": v.RowResult("y", "ok")}
    out = v.judge({"a": "x", "b": "y", "column": "m", "kind": "lower"}, {"x": {}, "y": {"m": v.Stat(1, 0, 1)}}, rows)
    assert not out["holds"] and "scenario missing" in out["text"]


def test_metric_paths_with_dotted_keys():
    s = {"latency_ns": {"p99.9": 5, "p50": 1}, "mutilate": {"read": {"avg": 3}}, "throughput": 7}
    assert v.metric_value(s, "latency_ns.p99.9") == 5
    assert v.metric_value(s, "mutilate.read.avg") == 3
    assert v.metric_value(s, "throughput") == 7
    assert v.metric_value(s, "latency_ns.p42") is None


# ---- unpublished assumptions (hand-computed) ----

def _per_seed(label, **cols):
    return v.RowResult(label, "ok", per_seed={k: list(xs) for k, xs in cols.items()})


def test_assumption_rows_add_their_overrides_to_the_rows():
    ds = {"id": "d", "rows": [{"label": "x", "scenario": "s", "overrides": {"a": 1, "b": 2}}]}
    a = {"name": "T", "overrides": {"b": 3, "c": 4}, "rows": ["x"]}
    assert v.assumption_rows(ds, a) == [{"label": "x", "scenario": "s", "overrides": {"a": 1, "b": 3, "c": 4}}]
    with pytest.raises(ValueError, match="no row 'y'"):
        v.assumption_rows(ds, {**a, "rows": ["y"]})


def test_assumption_changes_are_paired_and_its_directions_judged_on_its_rows():
    ds = {"id": "d", "columns": [{"key": "m", "title": "m", "metric": "m"}],
          "rows": [{"label": "x"}, {"label": "y"}, {"label": "z"}],
          "directions": [{"id": "xy", "claim": "x below y", "a": "x", "b": "y", "column": "m", "kind": "lower"},
                         {"id": "xz", "claim": "x below z", "a": "x", "b": "z", "column": "m", "kind": "lower"}]}
    a = {"name": "T", "overrides": {}, "rows": ["x", "y"]}
    ds["assumptions"] = [a]
    rows = {"x": _per_seed("x", m=[10.0, 20.0, 30.0]), "y": _per_seed("y", m=[11.0, 22.0, 33.0]),
            "z": _per_seed("z", m=[50.0, 50.0, 50.0])}
    # Under T, x doubles at every seed (a paired change of +100%, CI 0) and y does not move: x is now
    # above y at every seed, so "x below y" is called the other way; "x below z" involves a row T
    # does not rerun and is left out.
    varied = {"x": _per_seed("x", m=[20.0, 40.0, 60.0]), "y": _per_seed("y", m=[11.0, 22.0, 33.0])}
    res = v.assemble(ds, rows, [varied])
    (ar,) = res.assumptions
    assert ar.changes["x"]["m"].mean == pytest.approx(1.0) and ar.changes["x"]["m"].ci == pytest.approx(0.0)
    assert ar.changes["y"]["m"].mean == pytest.approx(0.0)
    assert ar.values["x"]["m"].mean == pytest.approx(40.0)
    assert [d["id"] for d in ar.directions] == ["xy"]
    assert not ar.directions[0]["holds"] and ar.directions[0]["called"]
    assert all(d["holds"] for d in res.directions)  # the rows as published are untouched
    text = "\n".join(v._render_assumptions(res))
    assert "| T | x | 40 (+100%) |" in text and "✗ x below y: +81.8% (opposite)" in text


def test_assumption_on_a_relative_dataset_compares_with_its_rerun_reference():
    # Published as % vs "base": under T, base and x both double, so x stays +10% against base and
    # moves 0 pp; base itself (0% by definition) is left out of the table.
    ds = {"id": "d", "relative_to": "base", "columns": [{"key": "m", "title": "m", "metric": "m"}],
          "rows": [{"label": "base"}, {"label": "x"}], "directions": []}
    a = {"name": "T", "overrides": {}, "rows": ["base", "x"]}
    ds["assumptions"] = [a]
    rows = {"base": _per_seed("base", m=[10.0, 20.0]), "x": _per_seed("x", m=[11.0, 22.0])}
    varied = {"base": _per_seed("base", m=[20.0, 40.0]), "x": _per_seed("x", m=[22.0, 44.0])}
    (ar,) = v.assemble(ds, rows, [varied]).assumptions
    assert ar.values["x"]["m"].mean == pytest.approx(10.0)
    assert ar.changes["x"]["m"].mean == pytest.approx(0.0)
    text = "\n".join(v._render_assumptions(v.assemble(ds, rows, [varied])))
    assert "| T | x | +10.0% (+0.0 pp) |" in text and "| T | base |" not in text


def test_ratio_column_divides_seed_by_seed_and_its_published_cells():
    # p90/p50 per seed: 300/100 and 500/250 -> 3.0 and 2.0, mean 2.5; the published 987/284.
    ds = {"id": "d", "columns": [{"key": "p50", "title": "p50", "metric": "latency_ns.p50", "scale": 0.001},
                                 {"key": "p90", "title": "p90", "metric": "latency_ns.p90", "scale": 0.001},
                                 {"key": "p90/p50", "title": "p90/p50", "ratio": ["p90", "p50"]}],
          "rows": [{"label": "x", "published": {"p50": 284, "p90": 987}}]}
    rows = {"x": _per_seed("x", p50=[100e3, 250e3], p90=[300e3, 500e3])}
    assert v._series(ds, rows, "x", "p90/p50") == pytest.approx([3.0, 2.0])
    assert v._values(v._series_table(ds, rows))["x"]["p90/p50"].mean == pytest.approx(2.5)
    assert v.published_value(ds, ds["rows"][0], "p90/p50") == pytest.approx(987 / 284)
    assert v.published_value(ds, {"label": "y", "published": {"p50": 284}}, "p90/p50") is None



def test_named_override_sets_resolve_and_an_unknown_one_is_an_error(tmp_path):
    doc = {"override_sets": {"s": {"a": 1}},
           "datasets": [{"id": "d", "rows": [], "assumptions": [{"name": "T", "overrides": "s", "rows": []}]}]}
    p = tmp_path / "d.json"
    p.write_text(json.dumps(doc))
    assert v.load_datasets(p)[0]["assumptions"][0]["overrides"] == {"a": 1}
    doc["datasets"][0]["assumptions"][0]["overrides"] = "t"
    p.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="no override set 't'"):
        v.load_datasets(p)
