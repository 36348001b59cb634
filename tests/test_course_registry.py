"""The course registry (attnlab.course) is the one home of lessons, prerequisites, exercise sets and
times: every other place reads it, and the files it names agree with it."""
from __future__ import annotations

import dataclasses
import difflib
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from attnlab import course
from attnlab.practice import gate, get_skill, mastery
from attnlab.practice import all_skills
from attnlab.practice.store import ProgressStore

ROOT = Path(__file__).resolve().parents[1]


def _render_script():
    spec = importlib.util.spec_from_file_location("render_tables", ROOT / "scripts" / "render_tables.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("render_tables", module)  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------------------- the registry itself
def test_lessons_are_numbered_from_00_without_gaps():
    ids = [entry.id for entry in course.lessons()]
    assert ids == [f"{n:02d}" for n in range(len(ids))] and len(ids) == 11, ids


@pytest.mark.parametrize("spelling", [3, "3", "03", " 03 ", "03_masks"])
def test_lesson_accepts_every_spelling_of_an_id(spelling):
    assert course.lesson(spelling) is course.lessons()[3]


@pytest.mark.parametrize("bad, shown", [(11, "no lesson 11 "), ("42", "no lesson 42 "), ("banana", "no lesson 'banana' ")])
def test_an_unknown_lesson_says_what_was_asked_and_the_valid_range(bad, shown):
    with pytest.raises(course.UnknownLesson) as info:
        course.lesson(bad)
    assert shown in str(info.value) and "the lessons are 00 to 10" in str(info.value)
    assert isinstance(info.value, ValueError) and info.value.requested == bad


def test_registry_entries_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        course.lesson(3).minutes = 1  # type: ignore[misc]


def test_times_are_positive_and_every_exercise_has_one():
    for entry in course.lessons():
        assert entry.minutes > 0, entry.id
        assert (entry.exercise is None) == (entry.exercise_minutes is None), entry.id
        assert entry.exercise_minutes is None or entry.exercise_minutes > 0, entry.id


def test_each_exercise_set_follows_the_lesson_of_its_number():
    for entry in course.lessons():
        if entry.exercise:
            assert entry.exercise.startswith(entry.id + "_"), (entry.id, entry.exercise)
    assert course.exercise_sets() == tuple(e.exercise for e in course.lessons() if e.exercise)


# ----------------------------------------------------------------------------- the files agree with it
def test_every_lesson_notebook_and_its_source_are_in_the_registry():
    on_disk = sorted(p.name for p in (ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
    assert on_disk == [entry.notebook for entry in course.lessons()]
    for entry in course.lessons():
        assert (ROOT / entry.source_path).is_file(), entry.source_path


def _notebook_title(path: Path) -> tuple[str, str] | None:
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        found = re.search(r"^# Lesson (\d\d) · (.+)$", source, re.MULTILINE) if cell["cell_type"] == "markdown" else None
        if found:
            return found.group(1), found.group(2).strip()
    return None


@pytest.mark.parametrize("entry", course.lessons(), ids=lambda e: e.id)
def test_the_lesson_notebook_title_is_the_registry_title(entry):
    found = _notebook_title(ROOT / entry.notebook_path)
    assert found == (entry.id, entry.title), (
        f"{entry.notebook_path} is headed {found}, the registry (src/attnlab/course.py) says "
        f"{(entry.id, entry.title)}: change one of them")


def test_exercise_sets_are_exactly_the_solution_and_exercise_folders():
    sets = set(course.exercise_sets())
    for folder in ("solutions", "exercises"):
        found = {p.name for p in (ROOT / folder).iterdir() if p.is_dir() and (p / f"{p.name}.ipynb").is_file()}
        assert found == sets, (f"{folder}/ has sets {sorted(found - sets)} that the registry (src/attnlab/course.py) "
                               f"lacks, and lacks its {sorted(sets - found)}")


# ----------------------------------------------------------------------------- the readers read it
def test_autograder_assignments_are_the_registry_exercise_sets():
    from attnlab_grader.records.course import assignments

    assert assignments() == list(course.exercise_sets())


def test_mastery_names_are_derived_from_the_registry():
    assert mastery.LESSONS == tuple(entry.id for entry in course.lessons())
    assert mastery.LAST_LESSON == course.lessons()[-1].id
    assert dict(mastery.PREREQUISITES) == {entry.id: entry.prerequisites for entry in course.lessons()}
    with pytest.raises(TypeError):  # read-only: a changed copy would silently disagree with the registry
        mastery.PREREQUISITES["03"] = ()  # type: ignore[index]
    assert mastery.prerequisites(5) == course.lesson("05").prerequisites
    assert mastery.prerequisites("42") == () and not mastery.is_lesson("42") and mastery.is_lesson(10)


def test_prerequisites_are_skills_of_earlier_lessons():
    for entry in course.lessons():
        for name in entry.prerequisites:
            assert get_skill(name).lesson < entry.id, (entry.id, name, get_skill(name).lesson)


def test_every_skill_belongs_to_a_lesson_of_the_registry():
    ids = {entry.id for entry in course.lessons()}
    assert {skill.lesson for skill in all_skills()} <= ids


def test_gate_checks_the_prerequisites_the_registry_holds(monkeypatch, tmp_path, capsys):
    changed = dataclasses.replace(course.lesson("03"), prerequisites=("warmup_softmax",))
    monkeypatch.setitem(course._BY_ID, "03", changed)
    result = gate("03", store=ProgressStore("reg", tmp_path))
    assert result.missing == ("warmup_softmax",)
    assert "warmup_softmax" in capsys.readouterr().out


def test_gate_for_an_unknown_lesson_uses_the_registry_message(tmp_path, capsys):
    result = gate(11, store=ProgressStore("reg", tmp_path))
    assert not result.known
    assert "There is no lesson 11 in this course: the lessons are 00 to 10." in capsys.readouterr().out


# ----------------------------------------------------------------------------- the README's table
def test_readme_course_table_is_the_rendered_one():
    script = _render_script()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    fresh = script.TABLES["course"].splice(readme, course.course_table_markdown())
    if fresh != readme:
        diff = difflib.unified_diff(readme.splitlines(), fresh.splitlines(), "README.md", "rendered", lineterm="", n=0)
        pytest.fail(f"README.md's course table is not what src/attnlab/course.py renders: run `{script.COMMAND}`\n"
                    + "\n".join(list(diff)[:12]), pytrace=False)


def test_the_table_has_a_row_per_lesson_with_its_link_gate_time_and_exercise():
    rows = [line for line in course.course_table_markdown().splitlines() if re.match(r"^\| \d\d \|", line)]
    assert len(rows) == len(course.lessons())
    for row, entry in zip(rows, course.lessons()):
        assert row.startswith(f"| {entry.id} | [{entry.title}]({entry.notebook_path}) |")
        assert f"| {entry.minutes} min" in row
        for name in entry.prerequisites:
            assert f"`{name}`" in row
        if entry.exercise:
            assert f"[{entry.exercise}]({entry.exercise_path}), about {entry.exercise_minutes} min |" in row
    capstone = course.lessons()[9]
    assert capstone.time_note and f"({capstone.time_note})" in rows[9], rows[9]  # the registry's note, as written


def test_splice_rewrites_only_the_marked_block_and_refuses_without_markers():
    table = _render_script().TABLES["course"]
    text = f"before\n{table.start}\nold table\n{table.end}\nafter\n"
    assert table.splice(text, "NEW\n") == f"before\n{table.start}\nNEW\n{table.end}\nafter\n"
    for broken in ("no markers at all\n", f"{table.end}\n{table.start}\n", text + table.start):
        with pytest.raises(ValueError, match="course-table:start"):
            table.splice(broken, "NEW\n")


def test_render_script_check_fails_on_a_stale_readme_and_names_the_command(tmp_path, monkeypatch, capsys):
    script = _render_script()
    table = script.TABLES["course"]
    stale = tmp_path / "README.md"
    stale.write_text(f"x\n{table.start}\nold\n{table.end}\n", encoding="utf-8")
    assert script.main(["--check", "course"], root=tmp_path) == 1
    assert script.COMMAND in capsys.readouterr().err
    assert script.main(["--write", "course"], root=tmp_path) == 0 and script.main(["--check", "course"], root=tmp_path) == 0
    assert course.course_table_markdown() in stale.read_text(encoding="utf-8")
    with pytest.raises(SystemExit):
        script.main(["--check", "courses"], root=tmp_path)
    assert "no table 'courses'; the tables are course, settings" in capsys.readouterr().err


def test_an_instructors_own_set_is_listed_after_the_course_sets(tmp_path, monkeypatch):
    import attnlab_grader.records.course as ac
    for name in ("03_masks", "01_routing_and_soft_lookup", "99_my_quiz"):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.ipynb").write_text("{}")
    (tmp_path / "notes").mkdir()  # a folder without a notebook is not a set
    assert ac.assignments(tmp_path) == ["01_routing_and_soft_lookup", "03_masks", "99_my_quiz"]
    monkeypatch.setenv("ATTNLAB_SOLUTIONS", str(tmp_path))  # the variable, read when asked
    assert ac.assignments() == ["01_routing_and_soft_lookup", "03_masks", "99_my_quiz"]


# ----------------------------------------------------------------------------- the data file
def test_the_data_file_is_read_into_the_registry_and_checked():
    """course.toml is what the registry serves; a broken file is refused with the lesson and the field named."""
    from importlib import resources
    text = resources.files("attnlab").joinpath(course.DATA_FILE).read_text(encoding="utf-8")
    assert course.load_lessons(text) == course.lessons()
    one = '[[lesson]]\nid = "00"\ntitle = "T"\nnotebook = "00_t.ipynb"\noutcomes = "o"\nprerequisites = []\nminutes = 5\n'
    assert course.load_lessons(one)[0] == course.Lesson("00", "T", "00_t.ipynb", "o", (), 5)
    for broken, said in [
        (one.replace("minutes = 5", 'minutes = "5"'), "lesson 0 (00): minutes must be int, got '5'"),
        (one.replace("minutes = 5", "minutes = true"), "minutes must be int, got True"),
        (one.replace("prerequisites = []", "prerequisites = [3]"), "prerequisites must be list of skill names"),
        (one.replace('id = "00"', 'id = "01"'), "expected 00"),
        (one.replace("minutes = 5", "minute = 5"), "unknown fields ['minute'], missing fields ['minutes']"),
        (one + 'exercise = "00_x"\n', "give exercise and exercise_minutes together"),
        (one.replace("[[lesson]]", "[[lesson]"), "not valid TOML"),
        ("", "no [[lesson]] tables"),
    ]:
        with pytest.raises(ValueError, match=re.escape(said)):
            course.load_lessons(broken, "course.toml")
