"""Mastery rule, hints, gates (with override) and spaced review with an injected clock."""
import pytest

from attnlab.practice import ProgressStore, due_reviews, gate, mastery_check, practice_item
from attnlab.practice import mastery
from attnlab.practice.mastery import DAY

from _helpers import perturb


class Clock:
    def __init__(self, t=1_000_000.0):
        self.t = t

    def __call__(self):
        return self.t


def right(item):
    v = item.variant
    return v.answer


def wrong(item):
    v = item.variant
    return perturb(v.answer, v.kind, v.decimals)


def answer_fresh(item, correct=True):
    fb = item.check(right(item) if correct else wrong(item))
    item.next()
    return fb


@pytest.fixture
def store(tmp_path):
    return ProgressStore("tess", tmp_path, clock=Clock())


def test_mastered_after_three_consecutive_fresh_correct(store):
    item = practice_item("sdpa_scale", store)
    seeds = set()
    for _ in range(3):
        assert not item.mastered
        seeds.add(item.variant.seed)
        assert answer_fresh(item).correct
        assert item.last.counted
    assert item.mastered and len(seeds) == 3
    assert "Mastered" in item.last.note


def test_wrong_answer_resets_and_retry_does_not_count(store):
    item = practice_item("sdpa_scale", store)
    answer_fresh(item)
    answer_fresh(item)
    assert item.streak == 2
    assert not item.check(wrong(item)).correct
    assert item.streak == 0
    assert item.check(right(item)).correct  # retry of the same variant
    assert item.streak == 0 and not item.last.counted and "retry" in item.last.note
    item.next()
    for _ in range(3):
        answer_fresh(item)
    assert item.mastered


def test_hint_resets_run_and_is_recorded(store):
    item = practice_item("sdpa_scale", store)
    answer_fresh(item)
    assert item.hint().startswith("Hint 1/2")
    assert item.hint().startswith("Hint 2/2")
    assert item.hint().startswith("Hint 2/2")  # no third tier
    assert item.streak == 0
    assert item.check(right(item)).correct and not item.last.counted
    rec = ProgressStore("tess", store.home).peek("sdpa_scale")  # persisted
    assert rec.hints == 2 and rec.history[-1][2] == 2


def test_threshold_is_configurable(store, monkeypatch):
    monkeypatch.setenv("ATTNLAB_MASTERY_N", "2")
    item = practice_item("uniform_loss", store)
    answer_fresh(item)
    answer_fresh(item)
    assert item.mastered
    item5 = practice_item("sdpa_scale", store, n_required=5)
    for _ in range(4):
        answer_fresh(item5)
    assert not item5.mastered and item5.progress() == "4/5 in a row"


def test_progress_survives_a_new_session(store):
    item = practice_item("sdpa_scale", store)
    answer_fresh(item)
    seed = item.variant.seed
    again = practice_item("sdpa_scale", ProgressStore("tess", store.home))
    assert again.streak == 1 and again.variant.seed == seed  # the open problem is kept


def _master(store, skill):
    item = practice_item(skill, store)
    while not item.mastered:
        answer_fresh(item)


def test_gate_lists_missing_prerequisites_and_offers_practice(store, capsys):
    result = gate("03", store=store)
    out = capsys.readouterr().out
    assert not result.open and set(result.missing) == {"sdpa_softmax_row", "sdpa_full"}
    assert "sdpa_full" in out and "attnlab practice" in out and "override" in out
    _master(store, "sdpa_softmax_row")
    _master(store, "sdpa_full")
    result = gate(3, store=store)
    assert result.open and not result.missing and "mastered" in capsys.readouterr().out


def test_gate_override_argument_and_env(store, monkeypatch, capsys):
    assert gate("03", override=True, store=store).open
    assert gate("03", override=True, store=store).overridden
    assert "overridden" in capsys.readouterr().out
    monkeypatch.setenv("ATTNLAB_GATE_OVERRIDE", "1")
    assert gate("03", store=store).open


def test_gate_and_mastery_check_never_raise(store, capsys):
    assert gate("not-a-lesson", store=store).open
    assert "could not check" in capsys.readouterr().out
    assert gate("42", store=store).open  # unknown lesson: no prerequisites
    check = mastery_check("banana", store=store)
    assert check.items == [] and "unavailable" in capsys.readouterr().out


def test_mastery_check_headless_lists_the_lesson_items(store, capsys):
    check = mastery_check("03", store=store)
    out = capsys.readouterr().out
    assert set(check.skills) == {"causal_mask_build", "rect_causal_mask", "padding_mask_build", "combine_masks_build",
                                 "masked_softmax", "concept_mask_order"}
    assert all(name in out for name in check.skills) and check.reviews == []
    assert check.items[0].check(check.items[0].variant.answer).correct


def test_spaced_review_by_lessons_then_pass_doubles_interval(store):
    gate("02", store=store)
    _master(store, "sdpa_full")
    assert due_reviews(store, "03") == []
    assert "sdpa_full" in due_reviews(store, "04")  # two lessons later
    check = mastery_check("04", store=store)
    assert "sdpa_full" in check.reviews
    item = next(i for i in check.items if i.skill.name == "sdpa_full")
    assert item.review and item.check(right(item)).correct and item.last.counted
    rec = store.peek("sdpa_full")
    assert rec.mastered and rec.interval_lessons == 4 and rec.due_lesson == "08"
    assert due_reviews(store, "05") == []


def test_spaced_review_by_days_and_a_miss_puts_it_back_into_practice(store):
    gate("05", store=store)
    _master(store, "sdpa_scale")
    assert due_reviews(store, "05") == []
    due = store.peek("sdpa_scale").due_at  # when FSRS schedules the first review (days from now)
    assert due > store.clock.t + DAY
    store.clock.t = due - 60
    assert due_reviews(store, "05") == []
    store.clock.t = due + 60
    assert due_reviews(store, "05") == ["sdpa_scale"]
    check = mastery_check("05", store=store)
    item = next(i for i in check.items if i.skill.name == "sdpa_scale")
    assert not item.check(wrong(item)).correct
    assert not mastery.is_mastered(store, "sdpa_scale") and mastery.status(store, "sdpa_scale") == "in progress"
    assert "back in practice" in item.last.note
    assert due_reviews(store, "05") == []


def test_review_scheduled_from_the_skills_own_lesson_when_no_lesson_was_opened(store):
    _master(store, "kv_cache_bytes")  # practised at the terminal, no lesson opened yet
    rec = store.peek("kv_cache_bytes")
    assert rec.due_lesson is None and rec.due_at is not None  # no "lesson 12": past the last lesson only days count
    _master(store, "warmup_softmax")
    assert store.peek("warmup_softmax").due_lesson == "02"


def _review(store, skill, correct=True):
    """Move the clock to the skill's FSRS due time and answer its review item."""
    store.clock.t = store.peek(skill).due_at + 60
    item = practice_item(skill, store, review=True)
    assert item.review
    return item.check(right(item) if correct else wrong(item))


def test_fsrs_schedules_reviews_by_the_learners_memory(store):
    """Each clean review lengthens the next interval (FSRS stability grows, kept in the record's card); a
    missed review makes the skill practice again, and once re-mastered its next interval is shorter than
    after the clean history (FSRS counts the lapse)."""
    _master(store, "uniform_loss")
    first = store.peek("uniform_loss")
    assert first.card is not None and first.card["stability"] > 0
    gaps = [first.due_at - store.clock.t]
    for _ in range(2):
        assert _review(store, "uniform_loss").correct
        rec = store.peek("uniform_loss")
        gaps.append(rec.due_at - store.clock.t)
    assert gaps[0] < gaps[1] < gaps[2], gaps
    assert rec.card["stability"] > first.card["stability"]
    clean_card = rec.card
    assert not _review(store, "uniform_loss", correct=False).correct
    lapsed = store.peek("uniform_loss")
    assert not lapsed.mastered and lapsed.card["stability"] < clean_card["stability"]
    _master(store, "uniform_loss")
    assert store.peek("uniform_loss").due_at - store.clock.t < gaps[2]


def test_a_progress_file_from_before_fsrs_loads_and_is_migrated(tmp_path):
    """A schema-2 file (no FSRS card) loads as it is; its mastered skill is reviewed on its old due time,
    and the review gives it an FSRS card (from its old interval) that is saved in the current schema."""
    import hashlib
    import json

    from attnlab.practice.store import SCHEMA

    payload = {"schema": 2, "learner": "old", "lesson": "04", "skills": {"sdpa_scale": {
        "served": 3, "current": 2, "solved": True, "streak": 3, "mastered": True, "mastered_at": 1_000_000.0,
        "mastered_lesson": "02", "due_at": 1_000_000.0 + 3 * DAY, "due_lesson": "04", "interval_days": 3.0,
        "interval_lessons": 2, "attempts": 3, "correct": 3}}}
    body = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    path = tmp_path / "progress" / "old.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(dict(payload, checksum=hashlib.sha256(body.encode()).hexdigest())))
    store = ProgressStore("old", tmp_path, clock=Clock(1_000_000.0 + 3 * DAY + 60))
    rec = store.peek("sdpa_scale")
    assert rec.mastered and rec.card is None and store.notices == []
    assert "sdpa_scale" in due_reviews(store, "04")
    item = practice_item("sdpa_scale", store, review=True)
    assert item.check(right(item)).correct and item.last.counted
    saved = json.loads(path.read_text())
    assert saved["schema"] == SCHEMA and saved["skills"]["sdpa_scale"]["card"]["stability"] > 3.0
    assert ProgressStore("old", tmp_path).peek("sdpa_scale").due_at > store.clock.t + 3 * DAY


def _master_after(store, skill, misses):
    """Practise ``skill`` a minute per answer: ``misses`` wrong answers on fresh problems, then right ones until
    it is mastered. Returns the days from mastery to the first review FSRS scheduled."""
    item = practice_item(skill, store)
    for _ in range(misses):
        store.clock.t += 60
        answer_fresh(item, correct=False)
    while not item.mastered:
        store.clock.t += 60
        answer_fresh(item)
    rec = store.peek(skill)
    return (rec.due_at - store.clock.t) / DAY


def test_mistakes_before_mastery_bring_the_first_review_earlier(tmp_path):
    """The first review reflects how the skill was learned: the practice answers are replayed into FSRS, so a
    learner who missed twice on the way is reviewed sooner, with a lower stability, than one who never missed
    (and one miss lies in between or equal); with no misses the schedule is FSRS's for one Good rating."""
    days = {}
    for misses in (0, 1, 2):
        store = ProgressStore(f"learner-{misses}", tmp_path, clock=Clock())
        days[misses] = _master_after(store, "uniform_loss", misses)
        days[misses, "stability"] = store.peek("uniform_loss").card["stability"]
        assert [h[1] for h in store.peek("uniform_loss").history].count(False) == misses
    assert days[2] < days[0] and days[2, "stability"] < days[0, "stability"], days
    assert days[2] <= days[1] <= days[0], days
    clean = ProgressStore("one-good", tmp_path, clock=Clock())
    clean_rec = mastery.rate(clean.get("uniform_loss"), "good", clean.clock.t)
    assert days[0, "stability"] >= clean_rec.card["stability"]


def test_practice_ratings():
    assert [mastery.practice_rating(c, h) for c, h in ((True, 0), (True, 1), (True, 2), (False, 0), (False, 2))] == [
        "good", "hard", "hard", "again", "again"]
