"""The built course website for the tests: ``scripts/build_site.py`` (what ``make site`` runs), once per run.

The build executes every lesson (``ATTNLAB_CI=1``, as site/conf.py sets) into jupyter-cache's store, so an
unchanged lesson is not executed again; a file lock keeps two test processes from building at once (the
second then finds nothing to do). The build's wall time is appended to ``artifacts/site/build_times.txt``.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from filelock import FileLock

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "site"
HTML = SITE / "_build" / "html"
EXECUTED = SITE / "_build" / "jupyter_execute"
ARTIFACTS = ROOT / "artifacts" / "site"
BUILD_TIMEOUT_S = 3600  # the first build executes all eleven lessons (lesson 09 trains a model)

_done: dict[str, Path] = {}


def build_site() -> Path:
    """Build (or bring up to date) the site; return ``site/_build/html``.

    Raises:
        AssertionError: the build failed (the message holds the end of its output).
    """
    if "html" in _done:
        return _done["html"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (SITE / "_build").mkdir(parents=True, exist_ok=True)
    with FileLock(str(SITE / "_build" / ".tests-build.lock")):
        start = time.perf_counter()
        out = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_site.py")], cwd=ROOT,
                             capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        seconds = time.perf_counter() - start
    with open(ARTIFACTS / "build_times.txt", "a") as log:
        log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')}\t{seconds:.1f} s\trc={out.returncode}\n")
    assert out.returncode == 0, (f"make site failed (rc {out.returncode}, {seconds:.0f} s):\n"
                                 f"{out.stdout[-3000:]}\n{out.stderr[-6000:]}")
    _done["html"] = HTML
    return HTML


def executed_notebook(stem: str):
    """The executed notebook of lesson ``stem`` as the execution cache holds it for the lesson's current
    source ``lessons/src/<stem>.py`` (the site's page is made from it), or None when there is no such run."""
    import jupytext
    from jupyter_cache import get_cache

    cache = get_cache(str(SITE / "_build" / ".jupyter_cache"))
    source = jupytext.read(ROOT / "lessons" / "src" / f"{stem}.py", fmt="py:percent")
    try:
        record = cache.match_cache_notebook(source)
    except KeyError:
        return None
    return cache.get_cache_bundle(record.pk).nb


def pages(html: Path) -> list[Path]:
    """Every HTML page of the built site (not the theme's static files)."""
    return sorted(p for p in html.rglob("*.html") if "_static" not in p.relative_to(html).parts)
