"""Autograder benchmark: seconds per submission and a class of N, this pipeline vs plain ``nbgrader autograde``.

``make bench`` runs it from the repository root (it needs ``attnlab_grader.tests.qa``, which is not installed):

    .venv/bin/python -m benchmarks.autograder_bench --students 100 --baseline-students 20 --out autograder/BENCHMARK.md

Both graders get the same submissions (reference solutions and the QA wrong implementations, cycled) of
one assignment. Ours: ``attnlab_grader.classroom.pipeline.grade`` with ``--jobs`` workers (feedback and CSV included).
Baseline: nbgrader's stock ``autograde`` (kernel execution, default preprocessors, one process, as nbgrader
runs it), on ``--baseline-students`` submissions, extrapolated linearly to N when fewer.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import markdown_log

from attnlab_grader.records.course import REPO, _quiet_imports, solutions_dir
from attnlab_grader.classroom.pipeline import grade
from attnlab_grader.tests import qa


def make_class(root: Path, assignment: str, n: int) -> list[str]:
    wrong = list(qa.spec(assignment).wrong)
    students = []
    for i in range(n):
        s = f"s{i:03d}"
        kind = "reference" if i % 3 == 0 or not wrong else wrong[i % len(wrong)]
        nb = qa.reference_submission(assignment, s) if kind == "reference" else qa.wrong_submission(assignment, s, kind)
        qa.write(root, s, assignment, nb)
        students.append(s)
    return students


def baseline(root: Path, assignment: str) -> float:
    """Plain nbgrader (no course config): generate_assignment, then a timed autograde of everyone."""
    _quiet_imports()
    src = root / "source" / assignment
    shutil.copytree(solutions_dir() / assignment, src, ignore=shutil.ignore_patterns("grading.py", "__pycache__"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "OMP_NUM_THREADS": "1"}
    common = [f"--CourseDirectory.root={root}", "--CourseDirectory.course_id=bench", "--log-level=ERROR"]
    nbg = [str(Path(sys.executable).parent / "nbgrader")]
    subprocess.run(nbg + ["generate_assignment", assignment, "--force"] + common, cwd=root, env=env, check=True,
                   capture_output=True)
    t0 = time.perf_counter()
    subprocess.run(nbg + ["autograde", assignment, "--force"] + common, cwd=root, env=env, check=False,
                   capture_output=True)
    return time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--assignment", default="02_scaled_dot_product_attention")
    ap.add_argument("--students", type=int, default=100)
    ap.add_argument("--baseline-students", type=int, default=None, help="default: same as --students")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=None, help="append a results section to this markdown file")
    args = ap.parse_args(argv)
    nb_base = args.baseline_students or args.students
    with tempfile.TemporaryDirectory(prefix="attnlab-bench-") as tmp:
        ours_root, base_root = Path(tmp) / "ours", Path(tmp) / "plain"
        make_class(ours_root, args.assignment, args.students)
        make_class(base_root, args.assignment, nb_base)
        t0 = time.perf_counter()
        summary = grade(ours_root, args.assignment, jobs=args.jobs, progress=True)
        ours = time.perf_counter() - t0
        per_sub = [r["seconds"] for r in summary.reports]
        base = baseline(base_root, args.assignment)
    lines = [
        markdown_log.heading(args.assignment),
        "",
        markdown_log.machine(),
        "",
        "| grader | submissions | wall time | per submission | class of 100 (extrapolated where marked) |",
        "|---|---|---|---|---|",
        f"| attnlab pipeline (`--jobs {args.jobs}`, sandbox, feedback + CSV) | {args.students} | {ours:.1f} s | "
        f"{ours / args.students:.2f} s wall, {sum(per_sub) / len(per_sub):.2f} s in a worker | "
        f"{ours / args.students * 100:.0f} s{'' if args.students == 100 else ' (extrapolated)'} |",
        f"| plain `nbgrader autograde` (kernel, 1 process, no feedback) | {nb_base} | {base:.1f} s | "
        f"{base / nb_base:.2f} s | {base / nb_base * 100:.0f} s{'' if nb_base == 100 else ' (extrapolated)'} |",
        "",
        f"Our summary: {summary.text().splitlines()[0]}",
        "",
    ]
    markdown_log.emit("\n".join(lines), args.out, REPO)


if __name__ == "__main__":
    main()
