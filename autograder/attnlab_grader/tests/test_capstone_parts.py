"""Set 09's GPT is graded part by part (attention, block, model), each part on its own.

In process, fast: each QA case's answer cells and the check's sandbox setup run here as the sandbox
runs them (the grader's inputs encoded and decoded as they cross the boundary, the value returned as
plain arrays), and the check's own ``judge`` gives the verdict.  Proves, for every ``wrong/gpt_*`` case,
that exactly the part it breaks fails and names the case's mistake (also those named from the trial
signature rather than a mistake model: a fixed-size mask table, an untied output layer), and that every
``honest/`` way of writing the GPT (a registered nanoGPT mask buffer included) passes all three parts."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab_grader.records.course import solutions_dir
from attnlab_grader.judging.spec import load_cases
from attnlab_grader.tests import qa
from attnlab_grader.judging.values import encode

A = "09_capstone"
PARTS = ("test_causal_self_attention", "test_block", "test_tiny_gpt")
CELLS = ("causal_self_attention", "block", "tiny_gpt")
SOLUTIONS = solutions_dir()


def _plain(value):
    """What crosses the sandbox boundary: tensors as float64 (or bool) arrays, tuples kept."""
    if isinstance(value, Tensor):
        return value.detach().numpy() if value.dtype == torch.bool else value.detach().double().numpy()
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    return value


def _cells(case_kind=None, name=None):
    nb = qa.reference_submission(A, "s") if case_kind is None else \
        (qa.wrong_submission if case_kind == "wrong" else qa.honest_submission)(A, "s", name)
    return [qa.cell(nb, gid).source for gid in CELLS]


_RAWS: dict[str, list[dict]] = {}


def _raws(check) -> list[dict]:
    """One draw of the check's trials for the whole module (every named mistake separated on it, as
    the grader's draws are), drawn once: every case is judged on the same inputs."""
    if check.grade_id not in _RAWS:
        _RAWS[check.grade_id] = check.jobs(np.random.default_rng(0))[1]
    return _RAWS[check.grade_id]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _verdicts(cells):
    """``{grade_id: Verdict or 'raised <Error>'}`` of the three parts for the answer cells ``cells``
    (the first failing trial decides, as in the grader)."""
    from attnlab_grader.judging.values import DECODE
    spec = qa.spec(A)
    out = {}
    for gid in PARTS:
        check = spec.check_for(gid)
        ns = {"math": math, "np": np, "torch": torch, "nn": nn, "F": F, "Tensor": Tensor}
        for src in cells:
            exec(src, ns)  # noqa: S102 - the QA case's own answer cells
        exec(check.setup, ns)  # noqa: S102 - the spec's sandbox setup
        verdict = None
        for raw in _raws(check):
            ns["__inputs__"] = {k: encode(v) for k, v in raw.items()}
            exec(DECODE, ns)  # noqa: S102 - decodes the inputs as the sandbox does
            try:
                value = _plain(eval(check.call, ns))  # noqa: S307 - the check's own call
            except Exception as err:  # noqa: BLE001 - the sandbox reports a raise as the item's error
                verdict = f"raised {type(err).__name__}: {err}"
                break
            verdict = check.judge(value, raw, "s")
            if not verdict.ok:
                break
        out[gid] = verdict
    return out


def _part_cases(kind):
    """The QA cases (``wrong/`` or ``honest/``) that change a part of the GPT."""
    return sorted(n for n, c in load_cases(SOLUTIONS / A, kind).items() if c.cells & set(CELLS))


def test_reference_passes_every_part():
    got = _verdicts(_cells())
    assert all(getattr(v, "ok", False) for v in got.values()), got


@pytest.mark.parametrize("name", _part_cases("wrong"))
def test_a_wrong_part_costs_that_part_only_and_is_named(name):
    case = qa.spec(A).wrong[name]
    got = _verdicts(_cells("wrong", name))
    for gid in PARTS:
        v = got[gid]
        if gid in case.breaks:
            assert not getattr(v, "ok", True), f"{name}: {gid} passed"
            if case.mistake:
                assert case.mistake in (v.mistakes or (v.mistake,)), f"{name}: {gid} said {v.message!r}"
        else:
            assert getattr(v, "ok", False), f"{name}: {gid} failed: {getattr(v, 'message', v)}"


@pytest.mark.parametrize("name", _part_cases("honest"))
def test_a_correct_gpt_written_differently_passes_every_part(name):
    got = _verdicts(_cells("honest", name))
    assert all(getattr(v, "ok", False) for v in got.values()), {g: getattr(v, "message", v) for g, v in got.items()}
