"""Regenerate ``fixtures/class_report/``: a small class of set 02 graded by the real pipeline.

    .venv/bin/python autograder/attnlab_grader/tests/make_report_fixture.py      # as root (the sandbox), ~1-2 min

The class is built with :mod:`attnlab_grader.tests.qa` (reference answers, the set's ``WRONG`` cases,
several per student) plus two submissions the QA library has no case for: one whose code
raises an exception carrying HTML (escaping) and one corrupted file (a submission that cannot
be graded).  Only what ``grade`` writes and the class report reads is kept: ``grades.csv`` and
``reports/<A>/<student>.json`` (the per-submission ``seconds`` are kept as measured).
``test_report.py`` renders the report from these files; rerun this script when the report
format of ``autograder/attnlab_grader/records/grade_report.py`` changes.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

A = "02_scaled_dot_product_attention"
HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixtures" / "class_report"

#: student -> QA ``WRONG`` cases applied together (empty: the reference answers)
CLASS = {
    "ada": [], "ben": [], "cam": ["scores_no_scale"],
    "dee": ["scores_no_scale", "by_hand_scores_unscaled"],
    "eli": ["sdpa_mask_after_softmax"], "fay": ["softmax_wrong_axis", "by_hand_softmax_down_columns"],
    "gus": ["softmax_calls_torch"], "jon": ["by_hand_output_transposed", "scores_divide_by_dk"],
    "kim": ["sdpa_inverted_mask"],
}
#: raises an exception whose message is HTML: the report must show it as text
HOSTILE_SOFTMAX = '''
def softmax(x, dim=-1):
    raise ValueError("<img src=x onerror=alert(1)> <b>not done</b>")
'''


def build_class(root: Path) -> None:
    from attnlab_grader.tests import qa
    sp = qa.spec(A)
    for student, cases in CLASS.items():
        nb = qa.reference_submission(A, student)
        for name in cases:
            assert qa.mistake_differs(A, student, name), f"{name} gives {student} the right numbers"
            nb = qa.apply_case(nb, sp.wrong[name], A, student)
        qa.write(root, student, A, nb)
    qa.write(root, "hal", A, qa.release_notebook(A))  # submitted the untouched stub
    nb = qa.reference_submission(A, "lou")
    qa.cell(nb, "softmax").source = HOSTILE_SOFTMAX.strip() + "\n"
    qa.write(root, "lou", A, nb)
    qa.write(root, "max", A, '{"cells": [ this is not a notebook')  # corrupted upload


def main() -> int:
    from attnlab_grader.classroom.pipeline import grade
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "course"
        build_class(root)
        summary = grade(root, A, jobs=2, feedback=False, progress=False)
        print(summary.text())
        if FIXTURE.exists():
            shutil.rmtree(FIXTURE)
        (FIXTURE / "reports").mkdir(parents=True)
        shutil.copy2(root / "grades.csv", FIXTURE / "grades.csv")
        shutil.copytree(root / "reports" / A, FIXTURE / "reports" / A)
    print(f"wrote {FIXTURE}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent.parent))
    sys.exit(main())
