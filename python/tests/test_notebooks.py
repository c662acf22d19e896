"""Every notebook in notebooks/ executes without error on reduced sizes (NAPISIM_NOTEBOOK_SMALL=1).

The notebooks are the sources a user edits: committed without outputs, every cell with a stable id.
Their rendered copies (notebooks/rendered/, tools/render_notebooks.sh) play no part here."""

from pathlib import Path

import pytest

from napisim import _notebooks

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path, monkeypatch):
    import nbformat

    monkeypatch.setenv("NAPISIM_CACHE", str(tmp_path / "cache"))  # really run, never reuse results
    src = nbformat.read(path, as_version=4)
    nbformat.validate(src)
    ids = [cell.get("id") for cell in src.cells]
    assert all(ids) and len(set(ids)) == len(ids), f"{path.name}: cell ids missing or repeated"
    for cell in src.cells:  # committed without outputs
        assert not cell.get("outputs") and not cell.get("execution_count"), \
            f"{path.name}: committed with outputs; clear them (jupyter nbconvert --clear-output --inplace)"
    nb = _notebooks.execute(path, small=True, timeout=600)
    images = _notebooks.extract_pngs(nb, tmp_path / "png", path.stem)
    assert images, f"{path.name} drew no plot"
    rendered = tmp_path / "rendered" / path.name
    _notebooks.write_rendered(nb, rendered)
    again = nbformat.read(rendered, as_version=4)
    assert [c.id for c in again.cells] == ids, "rendering changed the cell ids"
    streams = [o.text for c in again.cells for o in c.get("outputs", []) if o.output_type == "stream"]
    assert not any("\r" in t for t in streams), "a progress bar's updates were kept one by one"
