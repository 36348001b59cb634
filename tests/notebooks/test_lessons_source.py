"""The lesson notebooks are built from their text source (lessons/src/NN_*.py, jupytext py:percent).

Fast: reads and compares, executes nothing. Fix a failure with `python scripts/build_lessons.py`
(or `make lessons`) after editing the .py file.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("build_lessons", ROOT / "scripts" / "build_lessons.py")
build_lessons = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_lessons)


def test_every_lesson_has_a_text_source():
    notebooks = sorted(p.stem for p in (ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
    sources = sorted(p.stem for p in (ROOT / "lessons" / "src").glob("[0-9][0-9]_*.py"))
    assert notebooks and notebooks == sources


def test_notebooks_are_what_their_sources_build():
    problems = build_lessons.stale()
    assert not problems, "\n".join(problems) + "\nrun: python scripts/build_lessons.py (or make lessons)"


def test_an_edited_source_is_detected(tmp_path):
    src = ROOT / "lessons" / "src" / "03_masks.py"
    built = build_lessons.notebook_text(build_lessons.notebook_from_source(src))
    edited = tmp_path / src.name
    edited.write_text(src.read_text(encoding="utf-8").replace("causal", "casual", 1), encoding="utf-8")
    assert build_lessons.notebook_text(build_lessons.notebook_from_source(edited)) != built



def test_coverage_table_points_at_the_cells_that_teach_each_topic():
    rows = build_lessons.coverage_rows()
    assert len(rows) >= 60, "docs/coverage.md lost its table"
    problems = build_lessons.coverage_problems()
    assert not problems, "\n".join(problems) + "\nrun: python scripts/build_lessons.py --coverage"


def test_no_lesson_or_exercise_cites_notes_a_learner_does_not_have():
    """A learner has the lessons, the exercises and the library's docstrings, nothing else: no text
    sends them to "the course notes" (or "the notes"), which they cannot open."""
    import re
    pattern = re.compile(r"\b(course|source|lecture)\s+notes\b|\bfrom the notes\b|\bin the notes\b", re.I)
    texts = [*(ROOT / "lessons" / "src").glob("*.py"), *(ROOT / "solutions").glob("*/*.pct.py"),
             *(ROOT / "src" / "attnlab" / "nn").glob("*.py")]
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in texts
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert texts and not found, "\n".join(found)
