"""Every lesson executes top to bottom, headless, without an error, and draws at least one figure.

The lessons are executed once per run, by the course website's build (``make site``: myst-nb executes each
lesson's text source ``lessons/src/NN_*.py`` with ``ATTNLAB_CI=1`` into jupyter-cache's store, so an
unchanged lesson is not executed again); these tests read the executed notebooks from that cache
(``site/_build/.jupyter_cache``), from which the site's lesson pages are made. A lesson cell's error fails the build itself (the build is
strict) and so these tests, naming the build's message. The figures are kept in ``artifacts/lessons/``
for a human look, and the executed lesson's cell times (from the notebook's execution metadata) in
``artifacts/lessons/timings.txt``.
"""
from __future__ import annotations

import base64
import sys
from datetime import datetime
from pathlib import Path

import nbformat
import pytest

from attnlab.fast.timing import CLAIM_MIME

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "site"))
from site_build import build_site, executed_notebook  # noqa: E402 - the site's build executes the lessons

SOURCES = sorted((ROOT / "lessons" / "src").glob("[0-9][0-9]_*.py"))
#: Lessons whose timing demonstrations and measured claims are checked in the cells (claims per run, at least).
CLAIMING = {"01_routing_problem": 1, "02_scaled_dot_product_attention": 1, "09_capstone_gpt": 3}


def test_lessons_exist_in_order():
    names = [p.stem for p in SOURCES]
    assert names, "no lesson sources found in lessons/src/"
    prefixes = [int(n[:2]) for n in names]
    assert prefixes == list(range(len(prefixes))), f"lesson numbering has gaps: {names}"


def _figures(nb: nbformat.NotebookNode) -> list[str]:
    """Every PNG the lesson drew: cell outputs and outputs kept inside widgets' saved state."""
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    states = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    for model in states.values():
        outputs += model.get("state", {}).get("outputs", []) or []
    return [o["data"]["image/png"] for o in outputs if "image/png" in o.get("data", {})]


def _seconds(nb: nbformat.NotebookNode) -> float:
    total = 0.0
    for cell in nb.cells:
        ex = cell.get("metadata", {}).get("execution", {})
        start, end = ex.get("iopub.execute_input"), ex.get("shell.execute_reply")
        if start and end:
            total += (datetime.fromisoformat(end.replace("Z", "+00:00"))
                      - datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds()
    return total


@pytest.mark.slow
@pytest.mark.xdist_group("site")
@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_lesson_executes(source):
    build_site()
    nb = executed_notebook(source.stem)
    assert nb is not None, f"{source.name}: the site build's execution cache holds no run of this lesson"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert sum(bool(c.get("outputs")) for c in code) >= len(code) // 2, \
        f"{source.name}: most code cells have no output (was the lesson executed?)"
    errors = [out for c in code for out in c.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors, f"{source.name} produced error outputs: {errors[:1]}"
    # every claim a lesson's text makes about a measurement is checked by the cell that measures it
    # (attnlab.fast.timing.claim): each must hold in this run
    claims = [out["data"][CLAIM_MIME] for c in code for out in c.get("outputs", []) if CLAIM_MIME in out.get("data", {})]
    failed = [c for c in claims if not c["holds"]]
    assert not failed, f"{source.name}: claims of the text that did not hold: {failed}"
    if source.stem in CLAIMING:
        assert len(claims) >= CLAIMING[source.stem], \
            f"{source.name} checked {len(claims)} claims, expected {CLAIMING[source.stem]}"
    images = _figures(nb)
    assert images, f"{source.name} drew no figure (every lesson has at least one)"
    out_dir = ROOT / "artifacts" / "lessons"
    out_dir.mkdir(parents=True, exist_ok=True)
    for i, png in enumerate(images):
        (out_dir / f"{source.stem}_{i:02d}.png").write_bytes(base64.b64decode(png))
    # Wall time is recorded, not asserted (speed targets live in benchmarks).
    with open(out_dir / "timings.txt", "a") as log:
        log.write(f"{source.stem}\t{_seconds(nb):.1f} s (cells, as executed by the site build)\n")
