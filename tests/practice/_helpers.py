"""Helpers shared by the practice tests: constructing right and perturbed answers."""
from __future__ import annotations

import numpy as np

from attnlab.practice.answers import parse, tolerance


def perturb(answer, kind: str, decimals):
    """A wrong answer close to ``answer`` (one entry changed by more than the tolerance)."""
    value = parse(answer, kind)
    if kind == "choice":
        return "A" if value != "A" else "B"
    if kind in ("choices", "order"):
        return list(reversed(value)) if kind == "order" and len(value) > 1 else sorted(set(value) ^ {"A"}) or ["B"]
    step = max(10 * tolerance(decimals), 0.1)
    if kind == "number":
        return value + step
    if kind == "int":
        return value + 1
    if kind == "shape":
        return (value[0] + 1,) + tuple(value[1:])
    if kind == "int_list":
        return [value[0] + 1] + list(value[1:])
    if kind == "int_set":
        return sorted(set(value) ^ {max(value) + 1})
    if kind == "mask":
        out = np.array(value, copy=True)
        out.flat[0] = not out.flat[0]
        return out.tolist()
    out = np.array(value, dtype=float, copy=True)
    out.flat[0] += step
    return out.tolist()


def mistake_cases(skill, mistake: str, seeds: range):
    """``(variant, wrong answer)`` for each seed whose problem the named mistake applies to (it gives a
    number there, other than the right one)."""
    for seed in seeds:
        v = skill.variant(seed)
        wrong = skill.wrong_answers(v).get(mistake)
        if wrong is not None:
            yield v, wrong
