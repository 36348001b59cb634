"""Grade a synthetic class across all ten exercise sets, sharded over N tasks: throughput, memory, SQL cost.

Run from the repository root (it needs ``attnlab_grader.tests.qa`` and ``tests.slurm``, which are not installed):

    .venv/bin/python -m benchmarks.grade_class --students 1000 --tasks 2 --out benchmarks/RESULTS.md
    .venv/bin/python -m benchmarks.grade_class --students 1000 --tasks 2 --engine slurm   # as root
    .venv/bin/python -m benchmarks.grade_class progress WORKDIR   # a long run started with --workdir WORKDIR

``--students`` submissions are spread evenly over the ten sets (or those named by ``--sets``); each is a copy of the
reference solution, an honest alternative (``honest/*.py``) or a realistic wrong implementation (``wrong/*.py``),
cycled.  They are graded through the sharding contract (:mod:`attnlab_grader.classroom.shard`), without feedback HTML:
``prepare`` once, then ``--tasks`` tasks of ``grade --shard i/N`` at once, then ``collect`` (grades CSVs, no class
report).  ``--engine local`` starts the tasks as processes here; ``--engine slurm`` (root, Debian's slurm-wlm and
munge) starts a single-host Slurm (``tests/slurm/cluster.py``) and submits ``deploy/slurm/grade-array.sbatch`` as an
array of ``--tasks`` tasks; ``--engine pipeline`` grades in one process with a pool of ``--tasks`` workers
(``attnlab_grader.classroom.pipeline.grade_many``, the one-machine command).

Reported: wall time (prepare and collect included), submissions per second and per task (one core each), the
median and slowest worker time per submission of each set, the peak resident memory of a task and of its
largest sandbox process (``ru_maxrss``), and the gradebook's cost: SQL statements per submission, counted in every
task with an SQLAlchemy ``before_cursor_execute`` listener (prepare's and collect's counted apart).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import markdown_log

from attnlab_grader.records.course import REPO
from attnlab_grader.tests import qa
from attnlab_grader.tests.conftest import GRADED

def make_class(root: Path, n: int, sets=GRADED) -> dict[str, int]:
    """Write ``n`` submissions spread over ``sets`` (default: every graded set); returns {set: count}."""
    counts = {}
    for k, assignment in enumerate(sets):
        share = n // len(sets) + (1 if k < n % len(sets) else 0)
        spec = qa.spec(assignment)
        kinds = ["reference"] + [("honest", h) for h in spec.honest] + [("wrong", w) for w in spec.wrong]
        for i in range(share):
            student = f"s{k:02d}{i:04d}"
            kind = kinds[i % len(kinds)]
            if kind == "reference":
                nb = qa.reference_submission(assignment, student)
            elif kind[0] == "honest":
                nb = qa.honest_submission(assignment, student, kind[1])
            else:
                nb = qa.wrong_submission(assignment, student, kind[1])
            qa.write(root, student, assignment, nb)
        counts[assignment] = share
    return counts


_TABLE = re.compile(r"\b(?:FROM|INTO|UPDATE|TABLE)\s+\"?(\w+)", re.I)


class QueryCounter:
    """Counts SQL statements sent by every SQLAlchemy engine of this process (nbgrader's gradebook
    and attnlab's tables alike) while installed; ``tables`` counts them by the first table each
    names (``pragma``: SQLite's schema look-ups, ``-``: none)."""

    def __init__(self):
        self.count = 0
        self.tables: collections.Counter = collections.Counter()

    def _on(self, conn, cursor, statement, *_):
        self.count += 1
        m = _TABLE.search(statement)
        pragma = statement.lstrip()[:6].upper() == "PRAGMA"
        self.tables["pragma" if pragma else m.group(1).lower() if m else "-"] += 1

    def __enter__(self):
        from sqlalchemy import event
        from sqlalchemy.engine import Engine
        event.listen(Engine, "before_cursor_execute", self._on)
        return self

    def __exit__(self, *exc):
        from sqlalchemy import event
        from sqlalchemy.engine import Engine
        event.remove(Engine, "before_cursor_execute", self._on)


def task_main(argv: list[str]) -> int:
    """``python -m benchmarks.grade_class task STATS_DIR [-m attnlab_grader.classroom.shard] grade COURSE ...``:
    the shard command of :mod:`attnlab_grader.classroom.shard`, with its SQL statements counted and its peak
    memory written to ``STATS_DIR/task-<pid>.json`` (also when it fails)."""
    from attnlab_grader.classroom import shard
    out, argv = argv[0], argv[1:]
    if argv[:2] == ["-m", "attnlab_grader.classroom.shard"]:  # called as deploy/slurm's ATTNLAB_GRADE_PYTHON
        argv = argv[2:]
    t0 = time.perf_counter()
    code = 0
    with QueryCounter() as counter:
        try:
            shard.cli.main(argv, prog_name="shard", standalone_mode=False)
        except SystemExit as stop:
            code = int(stop.code or 0)
    stats = {"queries": counter.count, "tables": dict(counter.tables), "seconds": time.perf_counter() - t0, "exit": code,
             "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
             "child_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}
    Path(out, f"task-{os.getpid()}.json").write_text(json.dumps(stats))
    return code


def _task_argv(course: Path, sets, db_url) -> list[str]:
    argv = ["grade", str(course)] + [x for a in sets for x in ("-a", a)] + ["--no-feedback"]
    return argv + (["--db", db_url] if db_url else [])


def run_local(course, sets, tasks, db_url, stats_dir):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-m", "benchmarks.grade_class", "task", str(stats_dir)] + _task_argv(course, sets, db_url)
    procs = [subprocess.Popen(argv + ["--shard", f"{i}/{tasks}"], env=env, cwd=REPO, stdout=subprocess.DEVNULL)
             for i in range(tasks)]
    return [p.wait() for p in procs]


def run_slurm(course, sets, tasks, db_url, stats_dir):
    sys.path.insert(0, str(REPO))
    from tests.slurm.cluster import Cluster, why_not
    why = why_not()
    if why:
        raise SystemExit(f"--engine slurm: {why}")
    wrapper = Path(stats_dir) / "python"
    wrapper.write_text(f"#!/bin/sh\ncd {REPO} && exec {sys.executable} -m benchmarks.grade_class task {stats_dir} \"$@\"\n")
    wrapper.chmod(0o755)
    env = {"ATTNLAB_COURSE": str(course), "ATTNLAB_ASSIGNMENTS": " ".join(sets), "ATTNLAB_GRADE_PYTHON": str(wrapper),
           "ATTNLAB_GRADE_ARGS": "--no-feedback"}
    if db_url:
        env["ATTNLAB_DB"] = db_url
    export = "ALL," + ",".join(f"{k}={v}" for k, v in env.items())
    with Cluster(cpus=os.cpu_count() or 1, memory_mb=2048 * (os.cpu_count() or 1)) as cluster:
        job = cluster.run(["sbatch", "--parsable", f"--export={export}", "--mem=2G", f"--array=0-{tasks - 1}",
                           f"--output={stats_dir}/%A_%a.out", str(REPO / "deploy/slurm/grade-array.sbatch")]
                          ).stdout.strip().split(";")[0]
        while cluster.run(["squeue", "-h", "-j", job, "-o", "%i"], check=False).stdout.strip():
            time.sleep(2)
        states = cluster.states(job)
    return [0 if s == "COMPLETED" else 1 for s in states.values()]


def progress(workdir: str) -> str:
    """``python -m benchmarks.grade_class progress WORKDIR``: what a run with ``--workdir WORKDIR`` has
    graded so far, from its reports: submissions by status, the window from the first report to the
    last, submissions per second over it, and each set's median worker seconds per submission."""
    reports = sorted(Path(workdir, "course", "reports").glob("*/*.json"))
    rows = []
    for path in reports:
        rep = json.loads(path.read_text())
        rows.append((path.stat().st_mtime, path.parent.name, rep.get("status"), rep.get("seconds")))
    if not rows:
        return "no report yet"
    first, last = min(r[0] for r in rows), max(r[0] for r in rows)
    status = collections.Counter(r[2] for r in rows)
    per_set = collections.defaultdict(list)
    for _, a, _, secs in rows:
        if secs:
            per_set[a].append(secs)
    out = [f"{len(rows)} graded ({', '.join(f'{k} {v}' for k, v in sorted(status.items()))}) between "
           f"{time.strftime('%H:%M:%S', time.gmtime(first))} and {time.strftime('%H:%M:%S UTC', time.gmtime(last))}: "
           f"{(len(rows) - 1) / max(last - first, 1e-9):.2f} submissions/s"]
    out += [f"  {a}: {len(s)}, median {statistics.median(s):.2f} s" for a, s in sorted(per_set.items())]
    return "\n".join(out)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["task"]:
        sys.exit(task_main(argv[1:]))
    if argv[:1] == ["progress"]:
        print(progress(argv[1]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=1000)
    ap.add_argument("--tasks", "--jobs", dest="tasks", type=int, default=2, help="tasks (or pool workers) at once")
    ap.add_argument("--engine", choices=["local", "slurm", "pipeline"], default="local")
    ap.add_argument("--db", default=None, help="gradebook URL (default: SQLite in the class folder)")
    ap.add_argument("--out", default=None, help="append a results section to this markdown file")
    ap.add_argument("--workdir", default=None, help="write the class here and keep it (default: a temporary "
                    "folder, removed); its reports/ show a long run's progress")
    ap.add_argument("--sets", nargs="+", default=list(GRADED), choices=list(GRADED), metavar="SET",
                    help="grade only these exercise sets (default: all ten), e.g. --sets 09_capstone")
    args = ap.parse_args(argv)
    from attnlab_grader.classroom import shard
    sets = list(args.sets)
    with tempfile.TemporaryDirectory(prefix="attnlab-class-") as scratch:
        tmp = args.workdir or scratch
        root = Path(tmp) / "course"
        stats_dir = Path(tmp) / "stats"
        stats_dir.mkdir(parents=True)
        counts = make_class(root, args.students, sets)
        t0 = time.perf_counter()
        if args.engine == "pipeline":
            from attnlab_grader.classroom.pipeline import grade_many
            with QueryCounter() as q:
                summaries = grade_many(root, sets, db_url=args.db, jobs=args.tasks, feedback=False, progress=False)
            prep_q, collect_q, codes = q.count, 0, []
        else:
            with QueryCounter() as q:
                shard.prepare(root, sets, args.db)
            prep_q = q.count
            codes = (run_local if args.engine == "local" else run_slurm)(root, sets, args.tasks, args.db, stats_dir)
            with QueryCounter() as q:
                summaries = shard.collect(root, sets, args.db, class_report=False)
            collect_q = q.count
        wall = time.perf_counter() - t0
        tasks = [json.loads(p.read_text()) for p in sorted(stats_dir.glob("task-*.json"))]
    total = sum(len(s.reports) for s in summaries.values())
    failed = sum(len(s.failed) for s in summaries.values())
    lines = [markdown_log.heading(f"a class of {total} across {len(sets)} set{'s' if len(sets) > 1 else ''}, "
                                  f"`--engine {args.engine} --tasks {args.tasks}`"), "", markdown_log.machine(), "",
             f"Wall time {wall:.1f} s (prepare: gradebook rows and release generation; collect: grades CSVs; no "
             f"feedback HTML, no class report): **{total / wall:.2f} submissions/s**, "
             f"{total / wall / args.tasks:.2f} per task (one core each); {failed} not graded.", ""]
    if tasks:
        task_q = sum(t["queries"] for t in tasks)
        lines += [f"Tasks: {len(tasks)} (exit codes {sorted(t['exit'] for t in tasks)}, engine's: {codes}); task time "
                  f"{min(t['seconds'] for t in tasks):.0f}-{max(t['seconds'] for t in tasks):.0f} s; peak resident "
                  f"memory of a task {max(t['rss_mb'] for t in tasks):.0f} MB, of its largest sandbox process "
                  f"{max(t['child_rss_mb'] for t in tasks):.0f} MB.", "",
                  f"Gradebook: **{task_q / total:.1f} SQL statements per submission** in the tasks ({task_q} for "
                  f"{total}); prepare {prep_q} once, collect {collect_q} once. By table (the first each "
                  "statement names; `pragma`: SQLite's schema look-ups): "
                  + ", ".join(f"{k} {v / total:.1f}" for k, v in sum((collections.Counter(t.get("tables", {}))
                                                                      for t in tasks), collections.Counter()
                                                                     ).most_common(8)) + ".", ""]
    else:
        me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        lines += [f"Peak resident memory: grader {me:.0f} MB, largest worker or sandbox process {kids:.0f} MB. "
                  f"Gradebook: {prep_q / total:.1f} SQL statements per submission counted in the grader process "
                  "(the pool's workers fork after the listener is installed, so theirs are not counted here).", ""]
    lines += ["| set | submissions | graded / flagged / failed | worker s per submission (median, max) |",
              "|---|---|---|---|"]
    for a in sets:
        s = summaries[a]
        secs = [r["seconds"] for r in s.reports if r.get("seconds")]
        lines.append(f"| {a} | {counts[a]} | {len(s.graded) - len(s.flagged)} / {len(s.flagged)} / {len(s.failed)} | "
                     f"{statistics.median(secs):.2f}, {max(secs):.2f} |" if secs else f"| {a} | {counts[a]} | - | - |")
    markdown_log.emit("\n".join(lines) + "\n", args.out, REPO)


if __name__ == "__main__":
    main()
