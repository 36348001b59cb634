"""Every named mistake is caught on every grading draw, not only on most of them.

A check draws its inputs at grading time.  A mistake that agrees with the reference on some
inputs (scaling by ``sqrt(d_k)`` when ``d_k = 1``, a causal triangle when ``L = 1``, a padding
mask when nothing is padded) would pass on an unlucky draw: CI once credited
``soft_lookup_scaled_by_sqrt_dk`` that way (about 1 draw in 64).  ``FunctionCheck.jobs`` redraws
until every named mistake gives a wrong value on some trial; these tests show that

* a single draw really can miss (so the redraw is doing work, the test can fail), and
* every shipped check finds a separating draw, within a few tries, for many seeds.
"""
from __future__ import annotations

import numpy as np
import pytest

from attnlab_grader.judging.spec import SEPARATING_DRAWS, FunctionCheck

from attnlab_grader.tests import qa
from attnlab_grader.tests.conftest import GRADED

SEEDS = 40


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def function_checks(assignment):
    return [c for c in qa.spec(assignment).checks if isinstance(c, FunctionCheck) and c.mistakes]


@pytest.mark.parametrize("assignment", GRADED)
def test_every_named_mistake_is_separated_on_every_draw(assignment):
    stubborn = []
    for check in function_checks(assignment):
        for seed in range(SEEDS):
            rng = np.random.default_rng(seed)
            _, raws = check.jobs(rng)
            hidden = check.unseparated(raws)
            if hidden:
                stubborn.append(f"{check.grade_id} seed {seed}: {hidden} pass as the reference")
    assert not stubborn, "\n".join(stubborn[:10])


@pytest.mark.parametrize("assignment", GRADED)
def test_separation_needs_few_draws(assignment):
    """The redraw is a safety net, not the normal route: a check whose first draw misses a
    mistake more than a third of the time should draw better inputs (force the case per trial)."""
    slow = []
    for check in function_checks(assignment):
        misses = sum(bool(check.unseparated(check.draw(np.random.default_rng(seed))))
                     for seed in range(SEEDS))
        if misses > SEEDS // 3:
            slow.append(f"{check.grade_id}: first draw misses a named mistake for {misses}/{SEEDS} seeds")
    assert not slow, "\n".join(slow)
    assert SEPARATING_DRAWS >= 16


def test_one_draw_can_miss_and_the_redraw_catches_it():
    """The case CI hit: ``d_k = 1`` on every trial hides the ``sqrt(d_k)`` scaling."""
    check = qa.spec("01_routing_and_soft_lookup").check_for("test_soft_lookup")
    degenerate = [dict(raw, q=raw["q"][..., :1], k=raw["k"][..., :1])
                  for raw in check.draw(np.random.default_rng(0))]
    assert "scaled_lookup" in check.unseparated(degenerate)
    calls = iter([degenerate])

    class Rng:  # first draw degenerate, then honest draws
        def __getattr__(self, name):
            return getattr(np.random.default_rng(1), name)

    original = check.draw
    try:
        check.draw = lambda rng: next(calls, None) or original(np.random.default_rng(1))
        _, raws = check.jobs(Rng())
    finally:
        del check.draw
    assert raws is not degenerate and not check.unseparated(raws)
