"""Every lesson notebook executes top to bottom, headless, without an error."""
from __future__ import annotations

import base64
import os
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from attnlab.fast.timing import CLAIM_MIME

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
#: Lessons whose timing demonstrations and measured claims are checked in the cells (claims per run, at least).
CLAIMING = {"01_routing_problem": 1, "02_scaled_dot_product_attention": 1, "09_capstone_gpt": 3}


def test_lessons_exist_in_order():
    names = [p.stem for p in LESSONS]
    assert names, "no lesson notebooks found in lessons/"
    prefixes = [int(n[:2]) for n in names]
    assert prefixes == list(range(len(prefixes))), f"lesson numbering has gaps: {names}"


def run_notebook(path: Path, tmp_path: Path, timeout: int = 120) -> tuple[nbformat.NotebookNode, float]:
    nb = nbformat.read(path, as_version=4)
    env = {**os.environ, "ATTNLAB_CI": "1", "ATTNLAB_HOME": str(tmp_path / "home")}
    env.pop("MPLBACKEND", None)  # the kernel uses matplotlib-inline, so figures become outputs
    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    client.execute(env=env)  # the kernel's environment; this process's own is left as it is
    return nb, time.perf_counter() - start


@pytest.mark.slow
@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_lesson_executes(path, tmp_path):
    try:
        nb, seconds = run_notebook(path, tmp_path)
    except CellExecutionError as err:
        pytest.fail(f"{path.name} failed while executing:\n{str(err)[-3000:]}")
    errors = [
        out for cell in nb.cells if cell.cell_type == "code"
        for out in cell.get("outputs", []) if out.get("output_type") == "error"
    ]
    assert not errors, f"{path.name} produced error outputs: {errors[:1]}"
    # every claim a lesson's text makes about a measurement is checked by the cell that measures it
    # (attnlab.fast.timing.claim): each must hold in this run
    claims = [out["data"][CLAIM_MIME] for cell in nb.cells if cell.cell_type == "code"
              for out in cell.get("outputs", []) if CLAIM_MIME in out.get("data", {})]
    failed = [c for c in claims if not c["holds"]]
    assert not failed, f"{path.name}: claims of the text that did not hold: {failed}"
    if path.stem in CLAIMING:
        assert len(claims) >= CLAIMING[path.stem], f"{path.name} checked {len(claims)} claims, expected {CLAIMING[path.stem]}"
    images = [
        out["data"]["image/png"] for cell in nb.cells if cell.cell_type == "code"
        for out in cell.get("outputs", []) if "image/png" in out.get("data", {})
    ]
    assert images, f"{path.name} drew no figure (every lesson has at least one)"
    # keep the figures for a human look: artifacts/lessons/<lesson>_<n>.png (gitignored)
    out_dir = ROOT / "artifacts" / "lessons"
    out_dir.mkdir(parents=True, exist_ok=True)
    for i, png in enumerate(images):
        (out_dir / f"{path.stem}_{i:02d}.png").write_bytes(base64.b64decode(png))
    # Wall time is recorded, not asserted (speed targets live in benchmarks): the per-cell
    # timeout above catches a hang; artifacts/lessons/timings.txt shows what each lesson took.
    with open(out_dir / "timings.txt", "a") as log:
        log.write(f"{path.stem}\t{seconds:.1f} s\n")
