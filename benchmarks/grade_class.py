"""Grade a synthetic class across all ten exercise sets: submissions per second and peak memory.

Run from the repository root (it needs ``attnlab_grader.tests.qa``, which is not installed):

    .venv/bin/python -m benchmarks.grade_class --students 1000 --jobs 2 --out benchmarks/RESULTS.md

``--students`` submissions are spread evenly over the ten sets (or those named by ``--sets``); each is a copy of the reference
solution, an honest alternative (``honest/*.py``) or a realistic wrong implementation
(``wrong/*.py``), cycled.  Everything is graded by ``attnlab_grader.pipeline.grade_many`` in ONE session
(one gradebook, ``--jobs`` workers, each keeping its sandbox), without feedback HTML.  Reported:
wall time, submissions per second, the median and slowest worker time per submission of each set,
and the peak resident memory of the grader process and of its largest worker (``ru_maxrss``).
"""
from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks import markdown_log

from attnlab_grader.course import REPO
from attnlab_grader.pipeline import grade_many
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=None, help="append a results section to this markdown file")
    ap.add_argument("--sets", nargs="+", default=list(GRADED), choices=list(GRADED), metavar="SET",
                    help="grade only these exercise sets (default: all ten), e.g. --sets 09_capstone")
    args = ap.parse_args(argv)
    sets = list(args.sets)
    with tempfile.TemporaryDirectory(prefix="attnlab-class-") as tmp:
        root = Path(tmp) / "course"
        counts = make_class(root, args.students, sets)
        t0 = time.perf_counter()
        summaries = grade_many(root, sets, jobs=args.jobs, feedback=False, progress=True)
        wall = time.perf_counter() - t0
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    total = sum(len(s.reports) for s in summaries.values())
    lines = [markdown_log.heading(f"a class of {total} across {len(sets)} set{'s' if len(sets) > 1 else ''}, "
                                  f"`--jobs {args.jobs}`"), "", markdown_log.machine(), "",
             f"Wall time {wall:.1f} s (gradebook and release generation included, no feedback HTML): "
             f"**{total / wall:.2f} submissions/s**; peak resident memory: grader {me:.0f} MB, largest worker "
             f"or sandbox process {kids:.0f} MB.", "",
             "| set | submissions | graded / flagged / failed | worker s per submission (median, max) |",
             "|---|---|---|---|"]
    for a in sets:
        s = summaries[a]
        secs = [r["seconds"] for r in s.reports if r.get("seconds")]
        lines.append(f"| {a} | {counts[a]} | {len(s.graded) - len(s.flagged)} / {len(s.flagged)} / {len(s.failed)} | "
                     f"{statistics.median(secs):.2f}, {max(secs):.2f} |" if secs else f"| {a} | {counts[a]} | - | - |")
    markdown_log.emit("\n".join(lines) + "\n", args.out, REPO)


if __name__ == "__main__":
    main()
