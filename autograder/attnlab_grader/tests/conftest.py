"""Shared fixtures for the autograder tests.

The course QA runs in ONE session per xdist worker: ``qa_generated`` stages every set with a
``grading.py`` into one course folder and runs nbgrader ``generate_assignment`` once per set (the
release freshness test compares that release with ``exercises/``, so nothing is generated twice);
``qa_graded`` writes every set's QA class into the same folder and grades all of them in one
pipeline session (2 workers, each reusing its sandbox across sets).  Tests using these fixtures
must share the xdist group ``grading`` (session fixtures are per worker).  The other slow tests
(attacks, sandbox, source notebooks in a kernel) form the group ``grading-2``, which runs on the
other xdist worker at the same time (``pytest -n 2 --dist loadgroup``).
"""
from __future__ import annotations

import pytest

from attnlab_grader.records.course import solutions_dir
from attnlab_grader.sandbox import sandbox_support

SOLUTIONS = solutions_dir()

GRADED = sorted(p.parent.name for p in SOLUTIONS.glob("*/grading.py")
                if (p.parent / f"{p.parent.name}.ipynb").exists())

#: The set whose QA class also holds a submission run under another learner id (see qa.laptop_id_submission).
LAPTOP_ID_SET = "02_scaled_dot_product_attention"

needs_sandbox = pytest.mark.skipif(sandbox_support() is not None,
                                   reason=f"sandbox unavailable: {sandbox_support()}")


def qa_class(assignment, root) -> dict[str, str]:
    """Write one set's QA class: reference, untouched release, one student per WRONG case.

    Returns ``{wrong case name: student id}`` plus ``{"honest:<name>": student id}`` for each
    honest alternative (``honest/*.py``).  Each by-hand mistake goes to a student whose
    variant makes that mistake give different numbers (else the case could not fail)."""
    from attnlab_grader.tests import qa
    qa.write(root, "reference", assignment, qa.reference_submission(assignment, "reference"))
    qa.write(root, "untouched", assignment, qa.release_notebook(assignment))
    cases = {}
    for name in qa.spec(assignment).wrong:
        student = next(f"wrong-{name}-{i}" for i in range(50)
                       if qa.mistake_differs(assignment, f"wrong-{name}-{i}", name))
        qa.write(root, student, assignment, qa.wrong_submission(assignment, student, name))
        cases[name] = student
    if assignment == LAPTOP_ID_SET:  # by-hand numbers of the id the notebook ran under, not the graded id
        qa.write(root, "stu6", assignment, qa.laptop_id_submission(assignment, graded_as="stu6", ran_as="alice"))
        cases["laptop-id"] = "stu6"
    for name in qa.spec(assignment).honest:  # honest alternatives: full credit, key "honest:<name>"
        student = f"honest-{name}"
        qa.write(root, student, assignment, qa.honest_submission(assignment, student, name))
        cases[f"honest:{name}"] = student
    return cases


@pytest.fixture(scope="module")
def one_torch_thread():
    """Torch on one thread for a module, as the grader (``attnlab_grader.classroom.pipeline``) and the sandbox run:
    on tiny tensors a second thread only spins, ten times slower on a loaded machine."""
    import torch
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def qa_generated(tmp_path_factory):
    """``(root, {set: generate error})``: every graded set generated into one course folder."""
    from attnlab_grader.records.course import generate_many
    root = tmp_path_factory.mktemp("qa-course")
    return root, generate_many(root, GRADED)


@pytest.fixture(scope="session")
def qa_graded(qa_generated, request):
    """``{set: (cases, {student: report}, error)}``, graded in one session: every set whose QA
    test was selected (``-k 04_positional`` grades set 04 only)."""
    from attnlab_grader.classroom.pipeline import grade_many
    root, gen_errors = qa_generated
    wanted = {item.callspec.params["assignment"] for item in request.session.items
              if getattr(item, "originalname", "") in ("test_reference_untouched_and_wrong_implementations",
                                                       "test_honest_alternatives_get_full_credit")
              and hasattr(item, "callspec")} or set(GRADED)
    ready, cases, errors = [], {}, dict(gen_errors)
    for a in GRADED:
        if a in errors or a not in wanted:
            continue
        try:
            cases[a] = qa_class(a, root)
            ready.append(a)
        except Exception as err:  # noqa: BLE001 - reported by that set's test only
            errors[a] = f"building the QA class failed: {type(err).__name__}: {err}"
    summaries = grade_many(root, ready, jobs=2, feedback=False, progress=False, generate=False)
    return {a: (cases.get(a, {}), {r["student"]: r for r in summaries[a].reports} if a in summaries else {},
                errors.get(a) or (summaries[a].error if a in summaries else None))
            for a in GRADED}
