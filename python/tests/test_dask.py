"""The same sweep through a Dask distributed LocalCluster (worker processes) as locally."""

import pandas as pd
import pytest

import napisim
from conftest import SMALL

distributed = pytest.importorskip("distributed")


def test_sweep_through_dask_local_cluster_matches_local(tmp_path):
    grid = {"workload.params.num_flows": [8, 16]}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        remote = napisim.sweep("quickstart", grid=grid, seeds=[1, 2], executor=client, cache_dir=tmp_path / "d",
                               progress=False, **SMALL)
        # two tasks per worker process: each point still gets its own simulation process
        assert remote.attrs["napisim"]["computed"] == 4
    local = napisim.sweep("quickstart", grid=grid, seeds=[1, 2], workers=2, cache_dir=tmp_path / "l",
                          progress=False, **SMALL)
    pd.testing.assert_frame_equal(remote, local)
