"""A check's verdict does not depend on the luck of the draw.

Grading draws fresh inputs every time, so a check can be *flaky*: a wrong implementation that
agrees with the reference on some draws, or a correct one written differently that drifts past
the tolerance on some draws.  The sandboxed QA run (``test_course_qa.py``) sees one draw per
case per CI run, so a 1-in-50 flake surfaces as a red CI run weeks later.  Here every QA case
(reference, ``honest/*.py``, ``wrong/*.py``) is run **in process** -- they are our own files,
not hostile code -- through the same solution cells, preamble, setup, extraction, plain-value
round trip and ``judge`` as the sandbox, on many draws, and each (case, check) verdict must be the
same on every draw.  Forbidden-library rules (a run-time watch in the sandbox) are not modelled
here; they do not depend on the draw.

The **audit** (marker ``stability_audit``, part of every CI run; deselect locally with
``-m "not stability_audit"``) asks more: each named wrong implementation of the QA corpus is *caught*
by each item it breaks on each of :data:`AUDIT_DRAWS` fresh draws, and every honest one (and the
reference) is credited by every item on each, set 09's training run included.  Here the run-time
forbidden-library watch is modelled (the sandbox's own ``make_watch``), since some wrong cases are
caught only by it.  The training run is judged once per distinct loop per draw: submissions whose
answer cells the run executes are the same give the same weights.
"""
from __future__ import annotations

import contextlib
import io
import time

import numpy as np
import pytest

from suite_settings import suite_settings
from attnlab_grader.sandbox import scan
from attnlab_grader.sandbox.watch import PREAMBLE, make_plain, make_watch
from attnlab_grader.judging.engine import solution_cells
from attnlab_grader.judging.spec import FunctionCheck, decode

from attnlab_grader.tests import qa
from attnlab_grader.tests.conftest import GRADED

#: Draws per (case, check) in the consistency test; more with ``ATTNLAB_STABILITY_DRAWS=100``.  A check
#: slower than 0.5 s a draw (set 09's training run) is left out of it (``ATTNLAB_STABILITY_SLOW_DRAWS=5``
#: puts it back); the audit below judges the training run on AUDIT_DRAWS fresh slices.
DRAWS = suite_settings().stability_draws
SLOW_DRAWS = suite_settings().stability_slow_draws
#: Fresh draws per (case, item) in the audit: a verdict that is wrong on 1 draw in 20 or more fails it
#: with probability above 64 %.
AUDIT_DRAWS = max(20, DRAWS)
#: Set 09's training run (seconds a draw): judged by its own audit test, once per distinct loop.
TRAINING_RUN = "test_training_run"


_plain = make_plain()


def _namespace(nb):
    ns = {"__name__": "__main__"}
    exec(compile(PREAMBLE, "<preamble>", "exec"), ns)
    with contextlib.redirect_stdout(io.StringIO()):
        for cell_id, source in solution_cells(nb):
            try:
                exec(compile(scan.to_python(source), f"<cell {cell_id}>", "exec"), ns)
            except Exception:  # noqa: BLE001 - a wrong case may break its own cell
                pass
    return ns


def verdict(check: FunctionCheck, ns: dict, rng, student: str, watch: bool = False) -> bool:
    """True when every trial of one grading draw passes (what the sandbox would credit).  With
    ``watch``, a forbidden library operation or function that runs loses the item, as in the sandbox."""
    import sys
    sandbox_check, raws = check.jobs(rng)
    used: list[str] = []
    mode, profile = make_watch(sandbox_check["forbid_ops"], used.append, sandbox_check["forbid_names"]) if watch \
        else (contextlib.nullcontext, None)
    for inputs, raw in zip(sandbox_check["trials"], raws, strict=True):
        ns["__inputs__"] = inputs
        ns.pop("__result__", None)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(sandbox_check["setup"], "<grader setup>", "exec"), ns)
                sys.setprofile(profile)
                try:
                    with mode():
                        exec(compile(sandbox_check["extract"], "<grader extract>", "exec"), ns)
                finally:
                    sys.setprofile(None)
            value = decode(_plain(ns.get("__result__")))
        except Exception:  # noqa: BLE001 - an error is a lost item
            return False
        if used or not check.judge(value, raw, student).ok:
            return False
    return True


def _cases(assignment):
    sp = qa.spec(assignment)
    yield "reference", qa.reference_submission(assignment, "stab")
    for name in sp.honest:
        yield f"honest:{name}", qa.honest_submission(assignment, "stab", name)
    for name in sp.wrong:
        yield name, qa.wrong_submission(assignment, "stab", name)


@pytest.mark.slow
@pytest.mark.parametrize("assignment", GRADED)
def test_verdicts_do_not_depend_on_the_draw(assignment):
    import torch
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: a second thread only spins (5 ms per softmax on a loaded machine)
    try:
        _check_assignment(assignment)
    finally:
        torch.set_num_threads(threads)


def _check_assignment(assignment):
    checks = [c for c in qa.spec(assignment).checks if isinstance(c, FunctionCheck)]
    flaky, slow = [], set()
    for case, nb in _cases(assignment):
        ns = _namespace(nb)
        for check in checks:
            if check.grade_id in slow and SLOW_DRAWS < 2:
                continue
            start = time.perf_counter()
            verdicts = [verdict(check, ns, np.random.default_rng(0), "stab")]
            if time.perf_counter() - start > 0.5:  # a check that trains a model
                slow.add(check.grade_id)
                if SLOW_DRAWS < 2:
                    continue
            draws = min(DRAWS, SLOW_DRAWS) if check.grade_id in slow else DRAWS
            verdicts += [verdict(check, ns, np.random.default_rng(seed), "stab") for seed in range(1, draws)]
            if 0 < sum(verdicts) < draws:
                flaky.append(f"{case} / {check.grade_id}: credited on {sum(verdicts)} of {draws} draws")
    assert not flaky, "\n".join(flaky)


def _expected(assignment):
    """``(case label, notebook, {grade_id: credited?})`` for the audit: the reference and every honest
    case on every item, every wrong case on the items it breaks (honest cases marked xfail left out)."""
    sp = qa.spec(assignment)
    items = [c.grade_id for c in sp.checks if isinstance(c, FunctionCheck)]
    yield "reference", qa.reference_submission(assignment, "stab"), dict.fromkeys(items, True)
    for name, case in sp.honest.items():
        if not case.xfail:
            yield f"honest:{name}", qa.honest_submission(assignment, "stab", name), dict.fromkeys(items, True)
    for name, case in sp.wrong.items():
        broken = {g: False for g in case.breaks if g in items}
        if broken:
            yield name, qa.wrong_submission(assignment, "stab", name), broken


@pytest.mark.slow
@pytest.mark.stability_audit
@pytest.mark.parametrize("assignment", GRADED)
def test_every_named_mistake_is_caught_and_every_honest_answer_credited_on_each_draw(assignment, one_torch_thread):
    """Each wrong/*.py loses each item it breaks, and the reference and each honest/*.py get each item,
    on each of AUDIT_DRAWS fresh draws (set 09's training run: the next test)."""
    checks = {c.grade_id: c for c in qa.spec(assignment).checks
              if isinstance(c, FunctionCheck) and c.grade_id != TRAINING_RUN}
    torch_seed()
    wrong = []
    for case, nb, expected in _expected(assignment):
        ns = _namespace(nb)
        for gid, want in expected.items():
            if gid not in checks:
                continue
            # a wrong case may keep state between calls (a call counter keyed by id(optimizer)): a fresh
            # namespace per draw, as each submission gets a fresh sandbox
            got = [verdict(checks[gid], ns if want else _namespace(nb), np.random.default_rng(seed), "stab",
                           watch=not want) for seed in range(AUDIT_DRAWS)]
            if got.count(want) < AUDIT_DRAWS:
                wrong.append(f"{case} / {gid}: {'credited' if want else 'caught'} on only "
                             f"{got.count(want)} of {AUDIT_DRAWS} draws")
    assert not wrong, "\n".join(wrong)


def torch_seed():
    import torch
    torch.manual_seed(0)


#: The answer cells set 09's training run executes (the step, and the model it trains when it is right).
_RUN_CELLS = ("train_step", "tiny_gpt", "block", "causal_self_attention")


@pytest.mark.slow
@pytest.mark.stability_audit
def test_training_run_verdicts_on_each_draw(one_torch_thread):
    """Set 09's training run, judged in the grader as in a class run, on AUDIT_DRAWS fresh draws of
    slice and seed: every loop that must lose it (wrong/*.py breaking it) loses it on each draw, and
    the reference and every honest loop keep it on each.  Loops with the same answer cells for the run
    (and the same added cells) are run once per draw."""
    import hashlib
    assignment = "09_capstone"
    if assignment not in GRADED:
        pytest.skip("set 09 is not graded in this checkout")
    check = qa.spec(assignment).check_for(TRAINING_RUN)
    draw_cache = check.verdict.__globals__["_RUN_DRAW"]  # one draw per process in the grader
    loops: dict[str, tuple[object, bool, list[str]]] = {}
    for case, nb, expected in _expected(assignment):
        if TRAINING_RUN not in expected:
            continue
        cells = [qa.cell(nb, gid).source for gid in _RUN_CELLS]
        added = [c.source for c in nb.cells if c.cell_type == "code" and not c.metadata.get("nbgrader")]
        key = hashlib.sha256("\0".join(cells + added).encode()).hexdigest()
        if key in loops:
            assert loops[key][1] == expected[TRAINING_RUN], f"{case}: the same loop as {loops[key][2]}"
            loops[key][2].append(case)
        else:
            loops[key] = (nb, expected[TRAINING_RUN], [case])
    wrong = []
    try:
        for seed in range(AUDIT_DRAWS):
            draw_cache.clear()
            for nb, want, cases in loops.values():  # a fresh namespace a draw (loops may keep state)
                got = verdict(check, _namespace(nb), np.random.default_rng(10_000 + seed), "stab")
                if got != want:
                    wrong.append(f"draw {seed}: {', '.join(cases)} {'lost' if want else 'got'} the training run")
    finally:
        draw_cache.clear()
    assert not wrong, "\n".join(wrong)
