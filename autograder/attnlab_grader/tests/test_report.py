"""The instructor's class report (``python -m attnlab_grader report``), from a class of set 02 that
the real pipeline graded (``fixtures/class_report/``, rebuilt by ``make_report_fixture.py``):
ada, ben right; cam, dee leave out the 1/sqrt(d_k) scale (dee also by hand); eli masks after the
softmax; fay takes the softmax down the columns (code and by hand); gus calls torch.softmax
(flagged); hal submits the stub; jon divides by d_k and transposes A by hand; kim inverts the
mask; lou's softmax raises an exception whose text is HTML; max's file is corrupted (error)."""
from __future__ import annotations

import json
import shutil
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from attnlab_grader.judging.verdict import Verdict
from attnlab_grader.records.grade_report import read_report, read_reports
from attnlab_grader.reports import class_report as report
from attnlab_grader.reports.render import render
from attnlab_grader.classroom.main import cli

A = "02_scaled_dot_product_attention"
FIXTURE = Path(__file__).parent / "fixtures" / "class_report"


@pytest.fixture
def course(tmp_path) -> Path:
    return Path(shutil.copytree(FIXTURE, tmp_path / "course"))


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def _parse(html: str) -> _Tags:
    p = _Tags()
    p.feed(html)
    return p


def _v(**item) -> Verdict:
    """The Verdict of a report item written as ``item`` (read as a report file's item is)."""
    return Verdict.from_json(item)


def test_named_mistake_reads_only_the_verdicts_field():
    """The mistake is a field of the verdict; the message text is never parsed for one."""
    assert report.named_mistake(_v(ok=False, mistake="no_scale", message="whatever")) == \
        "left out the 1/√d_k scale"  # a catalogue name gets its catalogue title
    assert report.named_mistake(_v(ok=False, mistake="mask applied after the softmax")) == \
        "mask applied after the softmax"
    assert report.named_mistake(_v(ok=True, mistake="no_scale")) is None
    # the words an older grader wrote, without the field: no guess
    assert report.named_mistake(_v(ok=False, message="attention_scores: the result matches a known "
                                   "mistake: no 1/√d_k scale")) is None
    assert report.named_mistake(_v(ok=False, message="`scores`: Not quite: it looks like you left out "
                                   "the 1/√d_k scale. Eq. 1 of Vaswani et al. divides")) is None


def test_the_grades_sheet_carries_each_failed_items_verdict(course):
    """``failed_items`` of grades.csv is written from the verdict fields (kind, named mistake), and an
    item of an older grader without a kind says so."""
    from attnlab_grader.judging import verdict as V
    items = read_report(str(course), A, "jon")["items"]
    cell = V.failed_items(items)
    assert "test_attention_scores: named mistake (scale_by_dk)" in cell
    assert "test_sdpa: wrong values (no known mistake)" in cell and "test_softmax" not in cell
    assert V.failed_items({"t": _v(ok=False, message="timed out: 5 s")}) == f"t: {V.UNCLASSIFIED}"
    assert V.failed_items({"t": _v(ok=True)}) == ""


def test_reports_of_an_older_grader_are_not_guessed_from_their_words(course):
    """Items written before verdicts carried their kind are 'not classified', whatever their message
    says, and the page says which reports they are and to grade again."""
    from attnlab_grader.judging import verdict as V
    folder = course / "reports" / A
    for name in ("cam", "hal"):
        rep = json.loads((folder / f"{name}.json").read_text())
        for item in rep["items"].values():
            for key in ("kind", "mistake", "mistakes", "evidence"):
                item.pop(key, None)
        (folder / f"{name}.json").write_text(json.dumps(rep))
    assert report.failure_kind(_v(ok=False, message="timed out: did not finish within 5 s")) == V.UNCLASSIFIED
    rep = report.build(course, A)
    items = {st.grade_id: st for st in rep.items}
    assert "cam" not in [s for who in items["test_attention_scores"].mistakes.values() for s in who]
    assert [s for s, _ in items["test_attention_scores"].failures[V.UNCLASSIFIED]] == ["cam", "hal"]
    assert [s for s, _ in items["test_softmax"].failures[V.UNCLASSIFIED]] == ["hal"]
    assert any("2 report(s) (cam, hal)" in p and "grade the assignment again" in p for p in rep.problems)
    assert "grade the assignment again" in render(rep)


def test_the_class_as_graded(course):
    rep = report.build(course, A)
    assert len(rep.reports) == 12 and rep.max_score == 9
    assert [r["student"] for r in rep.flagged] == ["gus"]
    assert [r["student"] for r in rep.errored] == ["max"]
    items = {st.grade_id: st for st in rep.items}
    assert list(items) == ["test_scores_by_hand", "test_weights_by_hand", "test_output_by_hand",
                           "test_attention_scores", "test_softmax", "test_sdpa"]  # grading.py's order
    for st in rep.items:  # every submission is counted once per item
        assert sorted(s for o in report.OUTCOMES for s in st.outcomes[o]) == sorted(r["student"] for r in rep.reports)
        assert st.outcomes["not graded"] == ["max"]
    # ranked: the most frequent named mistake first, with who made it
    first = rep.ranked_mistakes()[0]
    assert first[1:] == ("left out the 1/√d_k scale", ["cam", "dee"])
    scores = items["test_attention_scores"]
    assert scores.ranked_mistakes() == [("left out the 1/√d_k scale", ["cam", "dee"]),
                                        ("divided by d_k instead of √d_k", ["jon"])]
    assert dict(items["test_sdpa"].mistakes) == {"left out the 1/√d_k scale": ["cam", "dee"],
                                                 "applied the mask after the softmax": ["eli"]}
    assert dict(items["test_scores_by_hand"].mistakes) == {"left out the 1/√d_k scale": ["dee"]}
    assert dict(items["test_weights_by_hand"].mistakes) == {"took the softmax over the wrong axis": ["fay"]}
    assert dict(items["test_output_by_hand"].mistakes) == {"multiplied Aᵀ V instead of A V": ["jon"]}
    softmax = {kind: [s for s, _ in rows] for kind, rows in items["test_softmax"].failures.items()}
    assert softmax == {"not attempted (stub left)": ["hal"], "raised ValueError": ["lou"],
                       "used the library version": ["gus"], "wrong values (no known mistake)": ["fay"]}
    assert items["test_scores_by_hand"].failures.keys() == {"not answered"}
    # skills: by-hand items are attnlab.practice skills, code items the function they ask for
    assert items["test_scores_by_hand"].skill.key == "sdpa_scores"
    assert items["test_softmax"].skill.title == "writes softmax()"


def test_the_page_shows_figures_mistakes_and_reasons(course):
    html = render(report.build(course, A))
    page = _parse(html)
    imgs = [a for t, a in page.tags if t == "img"]
    assert len(imgs) == 4  # scores, items, mistakes, skills
    assert all(a["src"].startswith("data:image/png;base64,") and a.get("alt") and int(a["width"]) > 300
               for a in imgs)
    text = " ".join(page.text)
    for needle in ("left out the 1/√d_k scale", "applied the mask after the softmax", "took the softmax over the wrong axis",
                   "not valid notebook JSON", "reference used", "Scaled scores Q Kᵀ / √d_k"):
        assert needle in text, needle
    assert text.index("left out the 1/√d_k scale") < text.index("applied the mask after the softmax")  # ranked


def test_student_text_is_escaped(course):
    folder = course / "reports" / A
    hostile = '<script>alert("id")</script>'
    rep = json.loads((folder / "gus.json").read_text())
    rep["student"] = hostile
    rep["flags"] = ['<iframe src="javascript:alert(1)"></iframe>']
    (folder / "gus.json").write_text(json.dumps(rep))
    html = render(report.build(course, A))
    page = _parse(html)
    assert {t for t, _ in page.tags} <= {"html", "head", "meta", "title", "style", "body", "main", "h1", "h2",
                                         "h3", "p", "code", "div", "b", "span", "img", "table", "tr", "th",
                                         "td", "ul", "li", "details", "summary"}
    # lou's exception text (from the student's own code, graded for real) and the edited report
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&quot;id&quot;)&lt;/script&gt;" in html
    assert "&lt;iframe" in html


def test_cli_writes_class_html_and_refuses_an_ungraded_assignment(course):
    res = CliRunner().invoke(cli, ["report", str(course), "--assignment", A])
    assert res.exit_code == 0, res.output
    out = course / "reports" / A / "class.html"
    assert out.is_file() and f"wrote {out}" in res.output
    res = CliRunner().invoke(cli, ["report", str(course), "--assignment", "03_masks"])
    assert res.exit_code == 1 and "grade the assignment first" in res.output


def test_unreadable_and_partial_reports_do_not_stop_the_report(course):
    from attnlab_grader.judging import verdict as V
    folder = course / "reports" / A
    (folder / "zed.json").write_text("{ not json")
    (folder / "yan.json").write_text(json.dumps({"status": "graded", "items": {
        "test_softmax": {"ok": False}, "test_sdpa": "garbage"}}))
    rep = report.build(course, A)
    assert rep.problems[0] == "zed.json: not readable (JSONDecodeError)" and "(yan)" in rep.problems[1]
    items = {st.grade_id: st for st in rep.items}
    assert "yan" in items["test_softmax"].failures[V.UNCLASSIFIED][0]  # no kind: not guessed
    assert "yan" in items["test_sdpa"].outcomes["not graded"]
    assert "zed.json: not readable" in render(rep)


def test_course_wide_skills_cover_every_graded_assignment(course):
    shutil.copytree(course / "reports" / A, course / "reports" / "99_extra")
    rep = report.build(course, A)
    assert rep.course_skills["sdpa_scores"]["assignments"] == {A}
    assert rep.course_skills["item:test_softmax"]["assignments"] == {"99_extra"}  # no grading.py: by item
    assert rep.course_skills["sdpa_scores"]["right"] == 9
    html = render(rep)
    assert "Across the course (2 graded assignments)" in html
    assert html.count("<img") == 5


def test_the_report_reads_the_verdicts_kind_not_its_words():
    """The kind is made where the judgement is made; the class report reads it as it is."""
    from attnlab_grader.judging import verdict as V
    from attnlab_grader.judging.engine import _judge

    class Check:
        grade_id, kind, target, forbid_attrs, variable = "test_x", "function", "f", (), None

    raws = [{}]
    cases = {
        "timeout": ({"status": "timeout", "error": "did not finish within 5 s"}, V.TIMED_OUT),
        "raised": ({"status": "ok", "trials": [{"status": "error", "error": "IndexError: shape (2, 3)",
                                                 "exception": "IndexError"}]}, "raised IndexError"),
        "stub": ({"status": "ok", "trials": [{"status": "error", "error": "NotImplementedError: ",
                                               "exception": "NotImplementedError"}]}, V.NOT_ATTEMPTED),
        # the kind comes from the exception's class the sandbox recorded, not from the words
        "words": ({"status": "ok", "trials": [{"status": "error", "error": "KeyError: a ValueError: text"}]}, V.OTHER),
        "library": ({"status": "ok", "trials": [{"status": "ok", "forbidden_ops": [{"kind": "changed",
                                                                                   "op": "torch.tensor"}]}]},
                    V.LIBRARY),
    }
    for name, (res, kind) in cases.items():
        verdict, _ = _judge(Check(), ({}, raws), {"test_x": res}, "s", [], {}, [], None)
        item = replace(verdict, max_points=2.0).to_json()
        assert item["kind"] == kind and not item["ok"] and item["points"] == 0.0, (name, item)
        # words that would have read as another kind to a message parser do not matter
        assert report.failure_kind(replace(verdict, reason="f: values differ from the reference")) == kind
    assert report.named_mistake(_v(ok=False, kind=V.WRONG_VALUES,
                                   message="f: the result matches a known mistake: no 1/√d_k scale")) is None


def test_every_kind_round_trips_through_json():
    """Each kind (and a raised exception) is written as its stored code and read back as the same Verdict."""
    from attnlab_grader.judging import verdict as V
    made = [Verdict(False, f"no credit: {k.value}", k, max_points=2.0, evidence=("call: torch.softmax",))
            for k in V.Kind if k not in (V.PASSED, V.RAISED)]
    made += [Verdict(True, "passes", max_points=1.5), Verdict(False, "error: boom", V.RAISED, exception="KeyError"),
             Verdict(False, "f: named", mistake="no_scale", mistakes=("no_scale", "scale_by_dk"), flag="review",
                     withheld=True, max_points=3.0)]
    for v in made:
        data = v.to_json()
        assert set(data) == {"ok", "message", "points", "max_points", "flag", "withheld", "mistake", "mistakes",
                             "kind", "evidence"}
        assert json.loads(json.dumps(data)) == data and Verdict.from_json(data) == v, v
        assert type(data["kind"]) is str and data["kind"] == v.code
    assert made[-2].code == "raised KeyError" and made[-1].kind is V.NAMED_MISTAKE
    # the stored codes never change: report files of running classes hold them
    assert V.WRONG_VALUES == "wrong values (no known mistake)" and V.NOT_ATTEMPTED == "not attempted (stub left)"
    # an item an older grader wrote (no kind, no points) reads as unclassified; a stub's exception as not attempted
    old = Verdict.from_json({"ok": False, "message": "timed out"})
    assert old.kind is V.UNCLASSIFIED and old.points == 0.0 and old.mistakes == ()
    assert Verdict.from_json({"ok": False, "kind": "raised NotImplementedError"}).kind is V.NOT_ATTEMPTED
    assert Verdict.from_json({"ok": False, "kind": "no such kind"}).kind is V.UNCLASSIFIED


def test_the_committed_reports_read_into_verdicts_and_write_back_the_same(course, tmp_path):
    """The fixture's report files, written by an earlier grading, read into Verdicts (each kind a Kind) and
    are written back byte for byte as they were."""
    from attnlab_grader.judging import verdict as V
    from attnlab_grader.records.grade_report import write_report
    reports, problems = read_reports(course, A)
    assert len(reports) == 12 and problems == []
    kinds = set()
    for rep in reports:
        for v in rep["items"].values():
            assert isinstance(v, Verdict) and isinstance(v.kind, V.Kind) and v.kind is not V.UNCLASSIFIED
            kinds.add(v.code)
        write_report(str(tmp_path), A, rep["student"], rep)
        before = json.loads((course / "reports" / A / f"{rep['student']}.json").read_text())
        after = json.loads((tmp_path / "reports" / A / f"{rep['student']}.json").read_text())
        assert after == before, rep["student"]
    assert {"passed", "named mistake", "raised ValueError", "used the library version"} <= kinds


def test_a_kept_previous_sentence_of_an_older_grader_keeps_its_words(tmp_path):
    """A report whose ``kept_previous`` an older grader wrote as a sentence reads back with that sentence as its
    reason (never parsed, nothing dropped), and the grades sheet's reason shows it."""
    import json

    from attnlab_grader.records.grade_report import read_report, report_path
    from attnlab_grader.records.reasons import reason_text
    path = report_path(str(tmp_path), "02_x", "ann")
    path.parent.mkdir(parents=True)
    old = "re-grading failed (SandboxUnavailable: no user namespaces); the previous result was kept"
    path.write_text(json.dumps({"student": "ann", "status": "graded", "items": {}, "kept_previous": old}))
    rep = read_report(str(tmp_path), "02_x", "ann")
    assert rep is not None and rep["kept_previous"] == {"why": old}
    assert old in reason_text(rep)
