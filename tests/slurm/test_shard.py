"""The sharding contract's arithmetic and its refusals, without grading (fast).

Proves: shards of any count partition the listing (every submission in exactly one shard, each
set spread over every task); the shard comes from ``--shard``, a Slurm array task (its count, or
``--shards`` for a rerun) or a Kubernetes completion (one submission each), and any other
input is refused with one sentence; grading or collecting an unprepared course says to prepare;
``collect`` counts a listed submission without a fresh report as failed and its exit code says
how many.
"""
from __future__ import annotations

import time

import pytest

from attnlab_grader.classroom import podjob, shard
from attnlab_grader.classroom.shard import Shard, shard_from_env, shard_items


@pytest.mark.parametrize("n_items, count", [(1, 1), (7, 3), (10, 10), (3, 8), (1000, 7)])
def test_shards_partition_the_listing(n_items, count):
    items = [(f"set{k % 4}", f"s{k:04d}") for k in range(n_items)]
    parts = [shard_items(items, Shard(i, count)) for i in range(count)]
    flat = [x for p in parts for x in p]
    assert sorted(flat) == sorted(items) and len(flat) == len(set(flat))
    sizes = [len(p) for p in parts]
    assert max(sizes) - min(sizes) <= 1, sizes  # balanced to one submission
    if n_items >= 4 * count:  # each set reaches every task
        assert all({a for a, _ in p} == {"set0", "set1", "set2", "set3"} for p in parts)


def test_one_submission_per_completion_is_the_listing_line():
    items = [("a", f"s{k}") for k in range(5)]
    assert [shard_items(items, Shard(i, 5)) for i in range(5)] == [[x] for x in items]


@pytest.mark.parametrize("text, want", [("0/1", (0, 1)), ("3/8", (3, 8)), (" 7/8 ", (7, 8))])
def test_parse(text, want):
    s = Shard.parse(text)
    assert (s.index, s.count) == want and str(s) == f"{want[0]}/{want[1]}"


@pytest.mark.parametrize("text", ["8/8", "3", "a/2", "-1/2", "1/0", "1/2/3", ""])
def test_parse_refuses_with_one_sentence(text):
    with pytest.raises(ValueError) as err:
        Shard.parse(text)
    msg = str(err.value)
    assert "\n" not in msg and ("INDEX/COUNT" in msg or "does not exist" in msg), msg


def test_shard_from_slurm_array():
    assert shard_from_env({"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "5"}) == Shard(2, 5)
    # a rerun of index 2 alone is an array of one task: --shards keeps the class's count
    assert shard_from_env({"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "1"}, shards=5) == Shard(2, 5)
    with pytest.raises(ValueError, match="does not exist"):
        shard_from_env({"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "1"})


def test_shard_from_kubernetes_completion():
    assert shard_from_env({"JOB_COMPLETION_INDEX": "4"}, listed=9) == Shard(4, 9)
    assert shard_from_env({"JOB_COMPLETION_INDEX": "4"}, listed=9, shards=5) == Shard(4, 5)
    with pytest.raises(ValueError, match="--shards"):
        shard_from_env({"JOB_COMPLETION_INDEX": "4"})


def test_a_garbled_engine_variable_is_named():
    with pytest.raises(ValueError, match="SLURM_ARRAY_TASK_COUNT='eight' is not a whole number"):
        shard_from_env({"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "eight"})


def test_no_engine_no_shard():
    with pytest.raises(ValueError, match="--shard INDEX/COUNT"):
        shard_from_env({})


def test_listing_names_stay_short_and_distinct(tmp_path):
    from attnlab_grader.tests.conftest import GRADED
    assert shard.listing_path(tmp_path, ["02_x"]).name == "02_x.txt"
    assert shard.listing_path(tmp_path, ["a", "b"]).name == "a+b.txt"
    every = shard.listing_path(tmp_path, list(GRADED)).name
    assert len(every) < 80 and every.startswith(f"{GRADED[0]}+{len(GRADED) - 1}-more-"), every
    assert every != shard.listing_path(tmp_path, list(GRADED)[::-1] + [GRADED[0]]).name


def test_unprepared_course_is_refused_saying_to_prepare(tmp_path):
    for call in (lambda: shard.grade_shard(tmp_path, ["02_x"], Shard(0, 1)),
                 lambda: shard.collect(tmp_path, ["02_x"]),
                 lambda: podjob.grade_index(tmp_path, "02_x", 0)):
        with pytest.raises(FileNotFoundError, match="prepare"):
            call()


def test_collect_counts_missing_and_stale_reports_as_failed(tmp_path, monkeypatch):
    from attnlab_grader.classroom import pipeline
    from attnlab_grader.records.grade_report import error_report, write_report
    a = "02_scaled_dot_product_attention"
    old = error_report("old", a, "from an earlier run")
    old.update(status="graded", score=9.0, max_score=9.0)
    write_report(tmp_path, a, "old", old)  # written before the listing: not this run's
    time.sleep(0.01)
    path = shard.listing_path(tmp_path, [a])
    path.parent.mkdir()
    path.write_text(f"{a}\tfresh\n{a}\told\n{a}\tnever\n")
    fresh = error_report("fresh", a, "x")
    fresh.update(status="graded", score=9.0, max_score=9.0, assignment=a)
    write_report(tmp_path, a, "fresh", fresh)
    monkeypatch.setattr(pipeline, "export", lambda root, a, db, csv: tmp_path / "grades.csv")
    summaries = shard.collect(tmp_path, [a], class_report=False)
    s = summaries[a]
    assert [r["student"] for r in s.graded] == ["fresh"]
    assert sorted(r["student"] for r in s.failed) == ["never", "old"]
    assert all("not graded in this run" in r["reason"] for r in s.failed)
    assert shard.exit_code(summaries) == 2


def test_the_benchmarks_query_counter_counts_every_statement_and_stops_when_removed():
    import sqlalchemy as sa

    from benchmarks.grade_class import QueryCounter
    engine = sa.create_engine("sqlite://")
    try:
        with QueryCounter() as q, engine.begin() as conn:
            conn.execute(sa.text("create table t (x integer)"))
            for i in range(5):
                conn.execute(sa.text("insert into t values (:x)"), {"x": i})
            conn.execute(sa.text("select count(*) from t"))
        assert q.count == 7
        with engine.begin() as conn:
            conn.execute(sa.text("select 1"))
        assert q.count == 7
    finally:
        engine.dispose()
