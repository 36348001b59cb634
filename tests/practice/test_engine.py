"""The engine's shape and edges: the pure transition table, typos that change nothing,
concurrent writers that lose nothing, fresh problems that never repeat and cover every kind."""
import json
import multiprocessing
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner
from fsrs import Card, Rating, Scheduler, State

from attnlab.cli import main
from attnlab.practice import ProgressStore, gate, get_skill, mastery_check, practice_item
from attnlab.practice.mastery import DAY, Answer, Hint, Result, Reveal, Serve, transition
from attnlab.practice.record import SkillRecord

# ----------------------------------------------------------------------------- the transition table
OPEN = SkillRecord(served=1, current=0)
RIGHT = Answer(True, now=100.0, skill_lesson="02", n_required=3)
WRONG = Answer(False, "no_scale", now=100.0, skill_lesson="02", n_required=3)


def _at(now):
    return datetime.fromtimestamp(now, timezone.utc)


def _fsrs_due(now, card=None, rating=Rating.Good):
    """When the fsrs library itself schedules the next review (no learning steps, no fuzz)."""
    scheduler = Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)
    card, _ = scheduler.review_card(card or Card(card_id=1, due=_at(now)), rating, review_datetime=_at(now))
    return card.due.timestamp()


TABLE = [
    # (name, state, event, expected fields of the new state, expected result fields)
    ("serve opens a fresh problem", SkillRecord(served=4, streak=2, misses=1, hinted=2, solved=True),
     Serve(6, "S > L", "k"), dict(current=6, served=7, kind="S > L", last_key="k", misses=0, hinted=0, solved=False,
                                  streak=2), {}),
    ("first right answer counts", OPEN, RIGHT, dict(streak=1, attempts=1, correct=1, solved=True), dict(counted=True)),
    ("wrong answer resets the run", OPEN.but(streak=2), WRONG, dict(streak=0, misses=1, solved=False),
     dict(counted=False, tier=1)),
    ("second miss gets the method", OPEN.but(misses=1), WRONG, dict(misses=2), dict(tier=2)),
    ("right retry does not count", OPEN.but(misses=1), RIGHT, dict(streak=0, solved=True),
     dict(counted=False)),
    ("hint resets and is counted once per tier", OPEN.but(streak=2), Hint(), dict(streak=0, hinted=1, hints=1),
     dict(tier=1)),
    ("third hint stays at tier 2", OPEN.but(hinted=2, hints=2), Hint(), dict(hinted=2, hints=2), dict(tier=2)),
    ("right after a hint does not count", OPEN.but(hinted=1), RIGHT, dict(streak=0, solved=True),
     dict(counted=False)),
    ("worked answer resets, then nothing counts", OPEN.but(streak=2), Reveal(), dict(streak=0, shown=True), {}),
    ("third in a row masters, review 2 lessons on", OPEN.but(streak=2), RIGHT,
     dict(streak=3, mastered=True, mastered_at=100.0, due_lesson="04", due_at=_fsrs_due(100.0)), dict(counted=True)),
    ("a missing kind of problem withholds mastery", OPEN.but(streak=2, kind="S = L", run_kinds=("S = L",)),
     Answer(True, now=1.0, skill_lesson="03", n_required=3, kinds=("S = L", "S > L")),
     dict(streak=3, mastered=False), dict(counted=True)),
    ("the last kind completes mastery", OPEN.but(streak=3, kind="S > L", run_kinds=("S = L",)),
     Answer(True, now=1.0, skill_lesson="03", n_required=3, kinds=("S = L", "S > L")),
     dict(streak=4, mastered=True, run_kinds=("S = L", "S > L")), dict(counted=True)),
    ("no review past the last lesson", OPEN.but(streak=2), Answer(True, now=0.0, lesson="09", skill_lesson="09",
                                                                   n_required=3),
     dict(mastered=True, due_lesson=None, due_at=_fsrs_due(0.0)), {}),
    ("clean review doubles the lesson interval; FSRS sets the day (a record from before FSRS: its interval is the "
     "stability)", OPEN.but(review=True, mastered=True), Answer(True, now=0.0, lesson="04", skill_lesson="02"),
     dict(review=False, mastered=True, interval_lessons=4, due_lesson="08",
          due_at=_fsrs_due(0.0, Card(card_id=1, state=State.Review, stability=3.0, difficulty=5.0,
                                     due=_at(0.0), last_review=_at(-3 * DAY)))), dict(counted=True)),
    ("missed review back into practice", OPEN.but(review=True, mastered=True, streak=3), WRONG,
     dict(review=False, mastered=False, streak=0, due_at=None, due_lesson=None), dict(counted=False)),
    ("answer to a solved problem earns and costs nothing", OPEN.but(solved=True, streak=2), WRONG,
     dict(streak=2, attempts=1), dict(counted=False)),
]


@pytest.mark.parametrize(("state", "event", "fields", "result"), [t[1:] for t in TABLE], ids=[t[0] for t in TABLE])
def test_transition_table(state, event, fields, result):
    new, res = transition(state, event)
    assert isinstance(new, SkillRecord) and isinstance(res, Result)
    for key, value in fields.items():
        assert getattr(new, key) == value, (key, getattr(new, key), value)
    for key, value in result.items():
        assert getattr(res, key) == value, (key, getattr(res, key), value)


def test_record_json_roundtrip_and_schema_checks():
    rec = SkillRecord(streak=2, run_kinds=("a",), history=((1.0, True, 0, None),))
    assert SkillRecord.from_json(json.loads(json.dumps(rec.to_json()))) == rec
    assert SkillRecord.from_json({"streak": "2"}) is None and SkillRecord.from_json({"mastered": 1}) is None
    assert SkillRecord.from_json({"hinted": 3}) is None and SkillRecord.from_json([]) is None


# ----------------------------------------------------------------------------- a typo is not an attempt
@pytest.fixture
def store(tmp_path):
    return ProgressStore("tess", tmp_path)


@pytest.mark.parametrize("typo", ["1/0", "2,8.3", "banana", "", "[[1, 2], [3]]", "1e999999/0"])
def test_unreadable_answer_changes_nothing(store, typo):
    item = practice_item("sdpa_scale", store)
    assert item.check(item.variant.answer).correct
    item.next()
    before = store.get("sdpa_scale")
    fb = item.check(typo)
    assert not fb.correct and not fb.readable and "read" in fb.message.lower()
    assert store.get("sdpa_scale") == before  # streak 1/3 kept, no attempt, problem still fresh
    assert item.check(item.variant.answer).correct and item.last.counted and item.streak == 2


def test_cli_division_by_zero_is_a_message_not_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNLAB_HOME", str(tmp_path))
    monkeypatch.setenv("ATTNLAB_LEARNER", "typo")
    out = CliRunner().invoke(main, ["practice", "uniform_loss"], input="1/0\nq\n")
    assert out.exit_code == 0 and out.exception is None, out.output
    assert "divides by zero" in out.output and "Nothing was recorded" in out.output
    assert ProgressStore("typo", tmp_path).get("uniform_loss").attempts == 0


# ----------------------------------------------------------------------------- concurrent writers
def _writer(home, skill, n, barrier):
    store = ProgressStore("shared", home)
    item = practice_item(skill, store)
    barrier.wait()
    for _ in range(n):
        item.check("-1")  # a wrong answer: one recorded attempt each


def test_two_processes_writing_one_learner_lose_nothing(tmp_path):
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), skill, 60, barrier))
             for skill in ("sdpa_scale", "uniform_loss")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    fresh = ProgressStore("shared", tmp_path)
    assert fresh.get("sdpa_scale").attempts == 60 and fresh.get("uniform_loss").attempts == 60


# ----------------------------------------------------------------------------- fresh problems
def _serve_many(store, skill, n):
    item = practice_item(skill, store, n_required=10**6)
    seen = []
    for _ in range(n):
        seen.append(item.variant)
        item.next()
    return seen


@pytest.mark.parametrize("skill", ["greedy_next_token", "sdpa_scale", "top_p_tokens", "choose_mask"])
def test_the_next_problem_never_repeats_the_last_answer(store, skill):
    seen = _serve_many(store, skill, 60)
    assert all(a.answer != b.answer for a, b in zip(seen, seen[1:]))


def test_mastery_needs_every_kind_of_problem(store):
    """Skipping with `n` cannot avoid the S > L masks: the run is only complete once one was met."""
    item = practice_item("causal_mask_build", store)
    kinds = []
    while not item.mastered:
        v = item.variant
        if v.problem_kind == "S > L (cached keys)" and not kinds:
            item.next()  # the learner skips the hard kind at first
            continue
        kinds.append(v.problem_kind)
        assert item.check(v.answer).correct
        item.next()
        assert len(kinds) <= 6
    assert set(kinds) == set(get_skill("causal_mask_build").kinds)


# ----------------------------------------------------------------------------- edges
def test_gate_for_a_lesson_that_does_not_exist_says_so(store, capsys):
    result = gate("11", store=store)
    out = capsys.readouterr().out
    assert not result.known and "no lesson 11" in out and "Go ahead" not in out
    assert store.lesson is None  # nothing recorded
    assert "no lesson 11" in mastery_check(11, store=store).message
    out = CliRunner().invoke(main, ["gate", "11"])
    assert out.exit_code == 2 and "no lesson 11" in out.output


def test_no_review_is_ever_scheduled_past_the_last_lesson(store):
    gate("10", store=store)
    for skill in ("kv_cache_bytes", "mha_param_count"):
        item = practice_item(skill, store)
        while not item.mastered:
            assert item.check(item.variant.answer).correct
            item.next()
        assert store.get(skill).due_lesson is None


def test_feedback_is_tiered_and_the_answer_only_shown_when_asked(store):
    item = practice_item("top_p_tokens", store)
    v = item.variant
    wrong = sorted(set(range(5)) - set(v.answer))
    first = item.check(wrong).message
    assert "Method" not in first and "entry" not in first and "Earlier entries are right" not in first
    second = item.check(wrong).message
    assert "Method:" in second
    assert str(v.answer) not in first + second
    shown = item.worked_answer()
    assert str(v.answer).strip("[]") in shown
    assert item.check(v.answer).correct and not item.last.counted


def test_a_named_mistake_gets_its_reason_only_on_the_second_try(store):
    item = practice_item("sdpa_scale", store)
    v = item.variant
    wrong = get_skill("sdpa_scale").mistakes["scale_by_d_model"](v.data)
    first = item.check(wrong)
    assert first.misconception == "scale_by_d_model" and "d_model / n_heads" not in first.message
    second = item.check(wrong)
    assert "d_model / n_heads" in second.message  # the why and the method


def test_a_schema_1_progress_file_is_read_and_upgraded(tmp_path):
    from attnlab.practice.store import SCHEMA, _checksum

    payload = {"schema": 1, "learner": "old", "lesson": "03", "skills": {"sdpa_scale": {
        "served": 3, "current": 2, "checked": True, "hinted": 0, "solved": False, "review": False, "streak": 0,
        "mastered": False, "attempts": 3, "correct": 2, "hints": 0, "history": [[1.0, False, 0, None]]}}}
    path = tmp_path / "progress" / "old.json"
    path.parent.mkdir()
    path.write_text(json.dumps(dict(payload, checksum=_checksum(payload))))
    store = ProgressStore("old", tmp_path)
    rec = store.get("sdpa_scale")
    assert store.notices == [] and store.lesson == "03"
    assert (rec.attempts, rec.current, rec.misses) == (3, 2, 1)  # the open problem had a miss
    store.update("sdpa_scale", lambda r: r)
    assert json.loads(path.read_text())["schema"] == SCHEMA
