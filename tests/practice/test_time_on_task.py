"""Time on task per lesson and exercise set: counted in the learner's kernel, kept locally, seen by an
instructor only through submitted practice summaries, and shown in the course table once measured.

Proves: the counting rule (a cell's run time always counts, pauses count up to IDLE_GAP and not
beyond); the unit (lesson or exercise set) comes from the notebook's ASSIGNMENT; the real IPython
event hooks mark each cell; a damaged file is kept and counting starts afresh, an unwritable home
never raises; the class view's distribution (learners, quartiles, median) from submitted notebooks;
the medians file round-trips into the course table, which says so while nothing is measured.
"""
from __future__ import annotations

import itertools
import json

import nbformat
import pytest

from attnlab import course
from attnlab.practice.time_on_task import IDLE_GAP, TimeLog, minutes_by_unit, track, unit_of


class Clock:
    def __init__(self, t: float = 1_000_000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_cell_time_always_counts_and_pauses_only_up_to_the_idle_gap(tmp_path):
    clock = Clock()
    log = TimeLog(learner="ada", home=tmp_path, clock=clock)
    t0 = clock.t
    for offset, starting in ((0, True), (30, False),          # a 30 s cell
                             (90, True), (100, False),        # 60 s of thinking, then a 10 s cell
                             (100 + IDLE_GAP + 1, True),      # away for longer than IDLE_GAP: not counted
                             (100 + IDLE_GAP + 1 + 900, False)):  # a 15 min training cell: counted
        clock.t = t0 + offset
        assert log.mark("lesson 09", starting)
    assert log.units()["lesson 09"]["seconds"] == pytest.approx(30 + 60 + 10 + 900)
    assert minutes_by_unit(log) == {"lesson 09": round(1000 / 60, 1)}
    assert log.path.parent == tmp_path / "progress" and log.path.name == "ada.time.json"


def test_the_unit_is_the_exercise_set_only_where_the_notebook_names_that_lessons_set():
    assert unit_of("03", "03_masks") == "exercise 03_masks"
    assert unit_of("03", None) == "lesson 03"
    assert unit_of("03", "02_scaled_dot_product_attention") == "lesson 03"
    assert unit_of("00", "anything") == "lesson 00"  # lesson 00 has no exercise set


def test_real_ipython_hooks_mark_every_cell_under_the_notebooks_unit(tmp_path):
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    ticks = itertools.count(start=2_000_000, step=5)
    log = TimeLog(learner="bo", home=tmp_path, clock=lambda: float(next(ticks)))
    shell.user_ns["ASSIGNMENT"] = "03_masks"
    try:
        assert track("03", shell=shell, log=log) == "exercise 03_masks"
        shell.run_cell("x = 1")
        shell.run_cell("y = x + 1")
        rec = log.units()["exercise 03_masks"]
        # marks: track (start), then start/end of two cells, each 5 s after the last
        assert rec["seconds"] == pytest.approx(4 * 5) and rec["busy"] is False
        assert track("03", shell=shell, log=log) == "exercise 03_masks"  # a second call replaces the hooks
        shell.run_cell("z = 2")
        assert log.units()["exercise 03_masks"]["seconds"] == pytest.approx(7 * 5)
    finally:
        shell.user_ns.pop("ASSIGNMENT", None)
        from attnlab.practice import time_on_task
        for event, callback in list(time_on_task._HOOKS.items()):
            shell.events.unregister(event, callback)
        time_on_task._HOOKS.clear()


def test_a_damaged_file_is_kept_and_an_unwritable_home_never_raises(tmp_path):
    log = TimeLog(learner="cy", home=tmp_path, clock=Clock())
    log.path.parent.mkdir(parents=True)
    log.path.write_text("{not json")
    assert log.mark("lesson 01", True) and log.units()["lesson 01"]["seconds"] == 0
    assert [p.name.split("-")[0] for p in log.path.parent.glob("cy.time.json.corrupt-*")] == ["cy.time.json.corrupt"]
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert TimeLog(learner="cy", home=blocker, clock=Clock()).mark("lesson 01", True) is False


def _submit(root, student, minutes):
    from attnlab.practice.submission import KEY, summarise
    nb = nbformat.v4.new_notebook()
    nb.metadata[KEY] = summarise({}, student, now=1.0, minutes=minutes)
    folder = root / "autograded" / student / "03_masks"
    folder.mkdir(parents=True)
    nbformat.write(nb, str(folder / "03_masks.ipynb"))


def test_class_view_shows_the_distribution_and_the_course_table_the_published_medians(tmp_path):
    from attnlab_grader.classroom.mastery import class_mastery, medians_document, write
    for student, minutes in (("ann", {"lesson 03": 30.0, "exercise 03_masks": 50.0}), ("ben", {"lesson 03": 40.0}),
                             ("cat", {"lesson 03": 80.0, "exercise 03_masks": 70.0}), ("dan", {})):
        _submit(tmp_path, student, minutes)
    cm = class_mastery(tmp_path, now=2.0)
    assert cm.times["lesson 03"] == {"learners": 3, "p25": 35.0, "median": 40.0, "p75": 60.0}
    assert cm.times["exercise 03_masks"] == {"learners": 2, "p25": 55.0, "median": 60.0, "p75": 65.0}
    page, _ = write(tmp_path, now=2.0)
    assert "Time on task (minutes)" in page.read_text() and "exercise 03_masks" in page.read_text()

    text = json.dumps(medians_document(cm, now=0.0))
    when, units = course.measured_minutes(text)
    assert when == "1970-01-01" and units == {"lesson 03": (40.0, 3), "exercise 03_masks": (60.0, 2)}
    table = course.course_table_markdown((when, units))
    row = next(line for line in table.splitlines() if line.startswith("| 03 "))
    assert "lesson 40 min (3 learners), exercise 60 min (2 learners)" in row
    assert "up to 1970-01-01" in table and "No learner has been timed yet" not in table
    empty = course.course_table_markdown((None, {}))
    assert "No learner has been timed yet" in empty and "| 03 " in empty
    with pytest.raises(ValueError, match="--times-out"):
        course.measured_minutes('{"units": {"lesson 03": {"median": "soon"}}}')


def test_a_summary_with_a_malformed_time_is_not_counted(tmp_path):
    from attnlab.practice.submission import summarise, valid_summary
    good = summarise({}, "eve", now=1.0, minutes={"lesson 01": 12.5})
    assert valid_summary(good) and valid_summary(summarise({}, "eve", now=1.0))
    assert not valid_summary(dict(good, time_on_task={"lesson 01": "ten"}))
    assert not valid_summary(dict(good, time_on_task={"lesson 01": -3}))


def test_attaching_the_practice_summary_carries_this_learners_time_and_nobody_elses(tmp_path):
    from attnlab.practice.submission import KEY, attach
    clock = Clock()
    mine, other = TimeLog("fay", tmp_path, clock), TimeLog("gus", tmp_path, clock)
    for log in (mine, other):
        log.mark("lesson 02", True)
    clock.t += 90
    mine.mark("lesson 02", False)
    clock.t += 30
    other.mark("lesson 02", False)
    path = tmp_path / "02.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), str(path))
    summary = attach(path, home=tmp_path, learner="fay")
    assert summary["time_on_task"] == {"lesson 02": 1.5}
    assert nbformat.read(str(path), as_version=4).metadata[KEY]["time_on_task"] == {"lesson 02": 1.5}


def test_practice_attach_is_the_learners_command_and_the_old_spelling_still_runs_it(tmp_path):
    """``attnlab --learner L practice-attach NB`` attaches L's own summary; ``attnlab-grade practice-attach``
    does the same after one line naming the command it is now; a file that is not a notebook is one sentence."""
    from click.testing import CliRunner

    from attnlab.cli import main
    from attnlab.practice.submission import KEY
    from attnlab_grader.classroom.main import cli
    clock = Clock()
    log = TimeLog("hal", tmp_path, clock)
    log.mark("lesson 04", True)
    clock.t += 120
    log.mark("lesson 04", False)
    path = tmp_path / "04.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), str(path))
    res = CliRunner().invoke(main, ["--learner", "hal", "practice-attach", str(path), "--home", str(tmp_path)])
    assert res.exit_code == 0 and "attached your practice summary" in res.output, res.output
    meta = nbformat.read(str(path), as_version=4).metadata[KEY]
    assert meta["learner"] == "hal" and meta["time_on_task"] == {"lesson 04": 2.0}
    res = CliRunner().invoke(cli, ["practice-attach", str(path), "--home", str(tmp_path)],
                             env={"ATTNLAB_LEARNER": "hal"})
    notice, done = res.output.strip().splitlines()
    assert res.exit_code == 0 and notice.startswith("attnlab-grade practice-attach is now `attnlab practice-attach`")
    assert done.startswith("attached your practice summary"), res.output
    junk = tmp_path / "not-a-notebook.ipynb"
    junk.write_text("{ not json")
    res = CliRunner().invoke(main, ["practice-attach", str(junk), "--home", str(tmp_path)])
    assert res.exit_code == 1 and "cannot read the notebook" in res.output and "Traceback" not in res.output
    assert junk.read_text() == "{ not json"
