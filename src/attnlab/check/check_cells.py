"""What the notebook's own check cells say about the items the grader could not name a mistake for.

The grader compares values with the reference on fresh inputs; when the values match no catalogued
mistake it can only say how they differ ("values differ ... max abs error 1").  The visible check
cell of the same item often says more ("is the mask inverted or off by one?").  So that
``attnlab check`` never says less than the check cell did, :func:`check_cell_messages` runs the
learner's notebook in a fresh Jupyter kernel -- its code cells in order up to the last check cell
asked for, the check cells as released (a check cell edited in the learner's copy is not trusted),
the other check cells left out -- and returns what each asked-for check cell raised.

This runs the learner's own code on the learner's own machine, as *Run all* in Jupyter would; the
points still come from the grader's sandboxed judgement only.
"""
from __future__ import annotations

import os
import shutil
import tempfile

from .cells import _gid, _nbg, _source

#: Longest time one cell may run in the probe, in seconds (a capstone training cell: about a minute on a
#: loaded 2-core machine).
PROBE_CELL_TIMEOUT = 300
#: The longest check-cell message shown, in characters.
MAX_MESSAGE = 400


def _is_check_cell(cell: dict) -> bool:
    meta = _nbg(cell)
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def probe_notebook(learner_nb: dict, released: dict, wanted: set[str]) -> dict | None:
    """The notebook to run: ``learner_nb``'s code cells up to the last check cell in ``wanted``
    (grade ids), with check cells not in ``wanted`` left out and the wanted ones' sources taken from
    ``released`` where it has them.  ``None`` when no wanted check cell is in ``learner_nb``."""
    released_src = {_gid(c): _source(c) for c in released.get("cells", []) if _is_check_cell(c)}
    cells: list[dict] = []
    last = -1
    for cell in learner_nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        if _is_check_cell(cell):
            gid = _gid(cell)
            if gid not in wanted:
                continue
            cell = dict(cell, source=released_src.get(gid, _source(cell)))
            last = len(cells)
        cells.append(dict(cell, outputs=[], execution_count=None))
    if last < 0:
        return None
    return dict(learner_nb, cells=cells[:last + 1])


def _said(cell) -> str | None:
    """What an executed check cell raised, as one line (``None`` when it raised nothing)."""
    for out in cell.get("outputs", []) or []:
        if out.get("output_type") == "error":
            ename, evalue = str(out.get("ename", "")), " ".join(str(out.get("evalue", "")).split())
            text = evalue if ename == "AssertionError" and evalue else f"{ename}: {evalue}".rstrip(": ")
            return text[:MAX_MESSAGE] if text else None
    return None


def check_cell_messages(learner_nb: dict, released: dict, wanted: set[str], learner: str) -> dict[str, str]:
    """``{grade id: what its check cell raised}`` for the check cells in ``wanted`` that raised
    when run after the learner's code (see the module docstring); cells that passed are absent.

    ``learner_nb``/``released``: notebook JSON (dicts); ``learner``: the id the kernel draws the
    by-hand variants for (``ATTNLAB_LEARNER`` in the kernel's environment only; the kernel gets a
    temporary ``ATTNLAB_HOME``, so nothing of the learner's progress changes).  Never raises: a
    kernel that cannot start or a run that stops early gives the messages found so far.
    """
    if not wanted:
        return {}
    nb_json = probe_notebook(learner_nb, released, wanted)
    if nb_json is None:
        return {}
    try:
        import json

        import nbformat
        from nbclient import NotebookClient
        nb = nbformat.reads(json.dumps(nb_json), as_version=4)  # joins list sources as Jupyter does
    except Exception:  # noqa: BLE001 - no Jupyter here, or a damaged notebook: nothing to add
        return {}
    here = os.getcwd()
    tmp = tempfile.mkdtemp(prefix="attnlab-check-cells-")
    try:
        os.chdir(tmp)
        client = NotebookClient(nb, timeout=PROBE_CELL_TIMEOUT, kernel_name="python3", allow_errors=True,
                                resources={"metadata": {"path": tmp}})
        try:
            # a home of its own: the run leaves the learner's progress and time on task as they were
            client.execute(env={**os.environ, "ATTNLAB_LEARNER": learner, "ATTNLAB_HOME": os.path.join(tmp, "home")})
        except Exception:  # noqa: BLE001 - a timeout or a dead kernel: keep what ran
            pass
    finally:
        os.chdir(here)
        shutil.rmtree(tmp, ignore_errors=True)
    out = {}
    for cell in nb.cells:
        if _is_check_cell(cell) and _gid(cell) in wanted:
            said = _said(cell)
            if said:
                out[_gid(cell)] = said
    return out
