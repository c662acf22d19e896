"""pytest setup for napisim's Python tests.

CTest sets PYTHONPATH=<build>/python; run by hand, the build tree is found from $NAPISIM_BUILD_DIR or
<repo>/build:  /usr/bin/python3 -m pytest python/tests
"""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

try:
    import napisim  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(os.environ.get("NAPISIM_BUILD_DIR", ROOT / "build")) / "python"))
    import napisim  # noqa: F401

os.environ.setdefault("MPLBACKEND", "Agg")

# Tiny runs: the quickstart scenario for 20 ms of simulated time.
SMALL = {"duration_s": 0.02, "warmup_s": 0.005}


@pytest.fixture
def small():
    return dict(SMALL)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """Every test gets its own result cache, never the user's ~/.cache/napisim."""
    monkeypatch.setenv("NAPISIM_CACHE", str(tmp_path / "cache"))
