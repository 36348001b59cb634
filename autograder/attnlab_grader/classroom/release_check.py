"""Detect a stale or hand-edited exercises/ folder by regenerating into a temp dir."""
from __future__ import annotations

import tempfile
from pathlib import Path

from attnlab_grader.records.course import EXERCISES, assignments, notebook_signature, release


def stale(names: list[str] | None = None, solutions=None) -> list[str]:
    """Human-readable differences between exercises/ and a fresh release from the solutions folder
    (:func:`attnlab_grader.records.course.solutions_dir` of ``solutions``) (empty = in sync)."""
    names = names or assignments(solutions)
    with tempfile.TemporaryDirectory(prefix="attnlab-check-") as tmp:
        release(names, dest=Path(tmp), solutions=solutions)
        return compare(Path(tmp), names)


def compare(fresh_dir: Path, names: list[str]) -> list[str]:
    """Differences between ``exercises/<name>`` and ``fresh_dir/<name>``, a release generated from
    ``solutions/`` (by :func:`release`, or nbgrader's ``release/`` folder of a course that staged
    the same sources, as the QA tests do to avoid generating twice)."""
    problems = []
    for name in names:
        fresh, committed = Path(fresh_dir) / name, EXERCISES / name
        f_files = sorted(p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file())
        c_files = sorted(p.relative_to(committed).as_posix() for p in committed.rglob("*")
                         if p.is_file()) if committed.exists() else []
        if f_files != c_files:
            problems.append(f"{name}: files differ: generated {f_files}, committed {c_files}")
            continue
        for rel in f_files:
            a, b = fresh / rel, committed / rel
            if rel.endswith(".ipynb"):
                sa, sb = notebook_signature(a), notebook_signature(b)
                if sa != sb:
                    idx = next((i for i, (x, y) in enumerate(zip(sa["cells"], sb["cells"])) if x != y),
                               min(len(sa["cells"]), len(sb["cells"])))
                    problems.append(f"{name}/{rel}: differs from the generated version at cell {idx} "
                                    "(edited by hand or stale); run `make exercises`")
            elif a.read_bytes() != b.read_bytes():
                problems.append(f"{name}/{rel}: differs from solutions/; run `make exercises`")
    return problems
