"""napisim's notebooks (notebooks/*.ipynb): their shared setup, and executing them with nbclient for
the CI check and the rendered copies.

    SMALL = napisim.notebook_setup()                                        # a notebook's first cell
    /usr/bin/python3 -m napisim._notebooks run NB.ipynb...                  # execute, fail on any error
    /usr/bin/python3 -m napisim._notebooks render --out DIR NB.ipynb...     # execute, write DIR/NB.ipynb

The notebooks read NAPISIM_NOTEBOOK_SMALL=1 to shrink their scenarios (CI); `run --small` sets it.
The kernel is "python3"; tools/render_notebooks.sh and CTest point JUPYTER_PATH at the build tree's
kernelspec, which runs the interpreter the package was built for (/usr/bin/python3).
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
from pathlib import Path


def notebook_setup() -> bool:
    """The notebooks' common first step: pandas display options for their tables, a line saying which
    napisim runs them, and whether to run at reduced size. Returns SMALL: True when
    NAPISIM_NOTEBOOK_SMALL=1 (CI executes every notebook so, with tiny durations and loads)."""
    import pandas as pd

    from . import __version__, list_models

    small = os.environ.get("NAPISIM_NOTEBOOK_SMALL") == "1"
    pd.set_option("display.precision", 3)
    pd.set_option("display.width", 140)
    print("napisim", __version__, "| models:", ", ".join(list_models()), "| small:", small)
    return small


def execute(path, small: bool = True, timeout: int = 900, kernel_name: str = "python3"):
    """Executes the notebook in its own directory and returns the executed nbformat node. Raises
    nbclient's CellExecutionError on the first failing cell."""
    import nbformat
    from nbclient import NotebookClient

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    old = os.environ.get("NAPISIM_NOTEBOOK_SMALL")
    os.environ["NAPISIM_NOTEBOOK_SMALL"] = "1" if small else "0"
    # The kernel must show figures inline (for render), whatever backend the caller uses.
    backend = os.environ.pop("MPLBACKEND", None)
    try:
        # No timing metadata: a rendered copy changes only where its outputs do.
        client = NotebookClient(nb, timeout=timeout, kernel_name=kernel_name, record_timing=False,
                                resources={"metadata": {"path": str(path.parent)}})
        client.execute()
    finally:
        if old is None:
            os.environ.pop("NAPISIM_NOTEBOOK_SMALL", None)
        else:
            os.environ["NAPISIM_NOTEBOOK_SMALL"] = old
        if backend is not None:
            os.environ["MPLBACKEND"] = backend
    return nb


def extract_pngs(nb, out_dir, stem: str) -> list[Path]:
    """Writes every image/png output as <stem>_<cell>_<n>.png (cell = 1-based code-cell index)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    code_index = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        code_index += 1
        n = 0
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" in data:
                n += 1
                f = out_dir / f"{stem}_{code_index:02d}_{n}.png"
                f.write_bytes(base64.b64decode(data["image/png"]))
                written.append(f)
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m napisim._notebooks")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="execute notebooks, fail on any error")
    r.add_argument("--small", action="store_true", help="NAPISIM_NOTEBOOK_SMALL=1 (CI sizes)")
    r.add_argument("notebooks", nargs="+")
    g = sub.add_parser("render", help="execute notebooks at full size and write each, with its outputs, to --out")
    g.add_argument("--out", required=True)
    g.add_argument("--small", action="store_true")
    g.add_argument("notebooks", nargs="+")
    a = ap.parse_args(argv)
    for nb_path in a.notebooks:
        print(f"executing {nb_path} ...", file=sys.stderr, flush=True)
        nb = execute(nb_path, small=a.small)
        if a.cmd == "render":
            write_rendered(nb, Path(a.out) / Path(nb_path).name)
    return 0


def _coalesce_streams(cell) -> None:
    """A progress bar prints one stream output per update, each starting with a carriage return:
    keep what a terminal shows, one output per stream and the last state of each line."""
    outputs = []
    for out in cell.get("outputs", []):
        prev = outputs[-1] if outputs else None
        if out.output_type == "stream" and prev is not None and prev.output_type == "stream" and prev.name == out.name:
            prev.text += out.text
        else:
            outputs.append(out)
    for out in outputs:
        if out.output_type == "stream":
            out.text = "\n".join(line.rsplit("\r", 1)[-1] for line in out.text.split("\n"))
    cell.outputs = outputs


def write_rendered(nb, out: Path) -> None:
    """Writes an executed notebook as its rendered copy: written whole under a temporary name, then
    renamed, so a failed or interrupted render leaves the previous copy."""
    import nbformat

    out.parent.mkdir(parents=True, exist_ok=True)
    nb.metadata.pop("widgets", None)  # progress-bar widget state: not viewable outside a live kernel
    for cell in nb.cells:
        if cell.cell_type == "code":
            _coalesce_streams(cell)
    tmp = out.with_name(f".{out.name}.tmp")
    nbformat.write(nb, tmp)
    tmp.replace(out)
    print(f"  wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
