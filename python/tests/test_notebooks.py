"""Every notebook in notebooks/ executes without error on reduced sizes (NAPISIM_NOTEBOOK_SMALL=1)."""

from pathlib import Path

import pytest

from napisim import _notebooks

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path, monkeypatch):
    import nbformat

    monkeypatch.setenv("NAPISIM_CACHE", str(tmp_path / "cache"))  # really run, never reuse results
    src = nbformat.read(path, as_version=4)
    for cell in src.cells:  # committed without outputs
        assert not cell.get("outputs"), f"{path.name}: committed with outputs; clear them"
    nb = _notebooks.execute(path, small=True, timeout=600)
    images = _notebooks.extract_pngs(nb, tmp_path / "png", path.stem)
    assert images, f"{path.name} drew no plot"
