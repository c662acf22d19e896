"""napisim.tune() and napisim.import_host(): the CLI's search and import, from Python."""

import json
import os
import subprocess

import pytest

import napisim
from napisim import _paths

HOST = os.path.join(_paths.SOURCE_DIR, "tests", "hostimport", "two_socket")
# A tiny search: quickstart for 4 ms, three strategies, two seeds, two rungs.
TINY = dict(seeds=[1, 2], strategies=["softirq", "defer", "busy_poll"], rungs=2)
SETS = {"duration_s": 0.004, "warmup_s": 0.004}


def test_tune_is_the_clis_search(tmp_path):
    # One implementation: Python's runs (through sweep) give the CLI's report, byte for byte.
    r = napisim.tune("quickstart", cpu_budget="50%", cache_dir=tmp_path, workers=2, overrides=SETS, **TINY)
    cli = subprocess.run([os.path.join(_paths.BUILD_DIR, "napisim"), "tune", "quickstart", "--cpu-budget", "50%",
                          "--seeds", "1,2", "--strategies", "softirq,defer,busy_poll", "--rungs", "2",
                          "--set", "duration_s=0.004", "--set", "warmup_s=0.004", "--format", "json", "-j", "2"],
                         capture_output=True, text=True, check=True)
    assert r.report == json.loads(cli.stdout)
    assert r.recommended["id"] in list(r.front["id"])
    assert r.commands and r.commands[0].startswith("sysctl -w net.core.netdev_budget=")
    assert sorted(r.what_if["load_factor"].unique()) == [0.5, 2.0]
    # Again: every run comes from sweep's cache, and the report is the same.
    again = napisim.tune("quickstart", cpu_budget="50%", cache_dir=tmp_path, workers=2, overrides=SETS, **TINY)
    assert json.dumps(again.report) == json.dumps(r.report)


def test_tune_bad_options():
    with pytest.raises(ValueError, match="--objective: expected p50"):
        napisim.tune("quickstart", objective="p42", cache=False, overrides=SETS, **TINY)
    with pytest.raises(ValueError, match="--cpu-budget"):
        napisim.tune("quickstart", cpu_budget="150%", cache=False, overrides=SETS, **TINY)
    with pytest.raises(ValueError, match="--strategies: unknown strategy"):
        napisim.tune("quickstart", strategies=["turbo"], cache=False, overrides=SETS)
    with pytest.raises(ValueError, match="/workload/params/num_flows"):
        napisim.tune("quickstart", cache=False, overrides=dict(SETS, **{"workload.params.num_flows": -1}), **TINY)


def test_import_host_two_socket():
    s, notes = napisim.import_host(HOST, rate_rps=200000, with_notes=True)
    assert [n["irq_affinity"] for n in s["nics"]] == ["0-3", "8-15"]
    assert s["topology"]["numa_distance"] == [10, 21, 21, 10]
    assert any("CPUs renumbered" in n for n in notes)
    napisim.validate(s)
    with pytest.raises(ValueError, match="--dev: no device 'eth9'"):
        napisim.import_host(HOST, devices=["eth9"])
