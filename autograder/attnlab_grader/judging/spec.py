"""How an assignment declares what the grader checks (``solutions/<A>/grading.py``).

Each autograded test cell (``grade: true``, ``solution: false``) has one entry in the
assignment's ``CHECKS`` list, keyed by the test cell's ``grade_id``:

* :class:`FunctionCheck` -- call the student's code on inputs drawn *at grading time*
  (``numpy.random.default_rng(os.urandom)``), send back plain float64 values, and compare
  them with the ``attnlab.nn`` reference **in the grader process**.
* :class:`ByHandCheck` -- read a variable holding numbers the student computed by hand
  and check it with ``attnlab.practice`` against the student's *own* variant
  (``seed_for(<student id>, key)``).

The QA libraries are files next to the spec: ``wrong/*.py`` (realistic mistakes, each with the
test grade_ids it must break) and ``honest/*.py`` (correct work written differently), see
:class:`Case` and ``autograder/AUTHORING.md``.
"""
from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from attnlab_grader.judging import verdict as V
from attnlab_grader.judging.by_hand import ByHandCheck, as_learner_id_safe  # noqa: F401 - re-exported
from attnlab_grader.judging.qa_case import Case, load_cases  # noqa: F401 - re-exported
from attnlab_grader.judging.verdict import Verdict
from attnlab_grader.judging.values import (DECODE, Mismatch, _is_numeric_list, _plainify, _to_array,  # noqa: F401
                     compare_values, decode, encode)

#: How many fresh input draws :meth:`FunctionCheck.jobs` may make to find one on which every
#: named mistake gives a wrong value (the shipped checks need 1-3; see test_separation.py).
SEPARATING_DRAWS = 64


@dataclass
class FunctionCheck:
    """Call student code in the sandbox on fresh inputs; compare with ``reference``.

    ``grade_id``: the test cell.  ``target``: the function/class the student writes (the
    static scan looks at it and at the helpers it calls).  ``inputs(rng) -> dict`` (or
    ``inputs(rng, trial)``, called with ``trial = 0 .. trials-1``, to force one case per trial so
    that a QA mistake cannot hide behind a degenerate draw; see :func:`takes_trial`) draws numpy inputs; ``call``: Python expression evaluated in the student's namespace with
    the decoded inputs in ``_I`` (e.g. ``"softmax(_I['x'])"``); ``reference(**inputs)``
    computes the expected value with ``attnlab.nn`` in the grader.  ``mistakes``: name ->
    function(**inputs) giving what a known mistake would return (used for the message), or a tuple
    of such functions when one mistake can be made in several ways (any match names it); every
    name is an entry of the one misconception catalogue (``attnlab.practice.misconceptions``), shown
    with its title and explanation (checked for the shipped sets by ``autograder/attnlab_grader/tests/test_catalogue.py``).
    ``forbid_attrs``: attribute/function names the target may not use (e.g. the library
    function it replaces); ``forbid_ops``: substrings of aten op names that may not run
    while the target runs (checked in the sandbox with a TorchDispatchMode).
    """

    grade_id: str
    target: str
    inputs: Callable[[np.random.Generator], dict]
    call: str
    reference: Callable[..., Any]
    trials: int = 3
    rtol: float = 1e-4
    atol: float = 1e-5
    mistakes: dict[str, Callable[..., Any] | tuple[Callable[..., Any], ...]] = field(default_factory=dict)
    forbid_attrs: tuple[str, ...] = ()
    forbid_ops: tuple[str, ...] = ()
    setup: str = ""

    kind = "function"

    def draw(self, rng: np.random.Generator) -> list[dict]:
        """One set of grader inputs, one dict per trial (``inputs(rng)`` or ``inputs(rng, trial)``)."""
        with_index = takes_trial(self.inputs)  # inputs(rng, trial): a forced case per trial
        return [self.inputs(rng, i) if with_index else self.inputs(rng) for i in range(self.trials)]

    def unseparated(self, raws: list[dict]) -> list[str]:
        """The named mistakes that these trials would *not* catch: every way of making the
        mistake (each model) gives, on every trial, a value that passes as the reference's.

        A model that raises on a trial's inputs does not count as caught on that trial.
        """
        expected = [_plainify(self.reference(**raw)) for raw in raws]
        hidden = []
        for name, models in self.mistakes.items():
            for wrong in models if isinstance(models, (tuple, list)) else (models,):
                caught = False
                for raw, exp in zip(raws, expected, strict=True):
                    try:
                        got = _plainify(wrong(**raw))
                    except Exception:  # noqa: BLE001 - the model does not apply to these inputs
                        continue
                    if compare_values(got, exp, self.target, self.rtol, self.atol) is not None:
                        caught = True
                        break
                if not caught:
                    hidden.append(name)
                    break
        return hidden

    def jobs(self, rng: np.random.Generator) -> tuple[dict, list[dict]]:
        """``(sandbox_check, [grader_inputs per trial])`` for ``trials`` fresh input draws.

        The draw is repeated (up to :data:`SEPARATING_DRAWS` times) until every named mistake
        gives a wrong value on at least one trial, so that a known mistake can never pass by the
        luck of a degenerate draw (e.g. ``d_k = 1``, where scaling by ``sqrt(d_k)`` changes
        nothing).  ``autograder/attnlab_grader/tests/test_separation.py`` checks that every shipped check gets
        there within a few draws.
        """
        raws = self.draw(rng)
        for _ in range(SEPARATING_DRAWS - 1):
            if not self.mistakes or not self.unseparated(raws):
                break
            raws = self.draw(rng)
        return ({"id": self.grade_id, "setup": DECODE + self.setup, "extract": f"__result__ = {self.call}",
                 "trials": [{k: encode(v) for k, v in raw.items()} for raw in raws],
                 "forbid_ops": list(self.forbid_ops), "forbid_names": list(self.forbid_attrs)}, raws)

    def judge(self, value: Any, raw: dict, student: str) -> Verdict:
        """Compare the sandbox's ``value`` with the reference on the trial inputs ``raw`` (within ``rtol``/``atol``);
        on a mismatch, name the first catalogue mistake whose model gives ``value``."""
        expected = self.reference(**raw)
        msg = compare_values(value, _plainify(expected), self.target, self.rtol, self.atol)
        if msg is None:
            return Verdict(True, f"{self.target}: matches the reference on fresh random inputs")
        matches = []
        for name, models in self.mistakes.items():
            for wrong in models if isinstance(models, (tuple, list)) else (models,):
                try:
                    if compare_values(value, _plainify(wrong(**raw)), self.target, self.rtol, self.atol) is None:
                        matches.append(name)
                        break
                except Exception:  # noqa: BLE001 - a mistake model may not apply to these inputs
                    continue
        if matches:
            return mistake_verdict(self.target, tuple(matches))
        return Verdict(False, msg, getattr(msg, "kind", V.WRONG_VALUES))


def mistake_verdict(target: str, matches: tuple[str, ...]) -> Verdict:
    """The :class:`Verdict` (kind ``NAMED_MISTAKE``) for a value that matches the known mistakes ``matches`` (catalogue names):
    one is named with its words; several (they coincide on these inputs) are all named."""
    if len(matches) == 1:
        text = f"the result matches a known mistake: {mistake_text(matches[0])}"
    else:
        text = "the result matches known mistakes that give the same values here: " + \
            "; or ".join(mistake_text(m) for m in matches)
    return Verdict(False, f"{target}: {text}", V.NAMED_MISTAKE, mistake=matches[0], mistakes=matches)


def mistake_text(name: str) -> str:
    """A mistake's words for feedback: a name of ``attnlab.practice.misconceptions.MISCONCEPTIONS``
    (the one catalogue shared with the practice engine) gives its title and why; other keys are
    taken as the text itself."""
    from attnlab.practice.misconceptions import MISCONCEPTIONS
    m = MISCONCEPTIONS.get(name)
    return f"{m.title}. {m.why}" if m else name


def takes_trial(inputs: Callable) -> bool:
    """True when ``inputs`` is written ``inputs(rng, trial)``: a second positional parameter that is
    named ``trial`` or has no default.  Such a function is called as ``inputs(rng, i)`` with the
    trial index ``i = 0 .. trials-1`` so each trial can force one case (e.g. trial 0: S > L)."""
    import inspect
    params = [p for p in inspect.signature(inputs).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(params) >= 2 and (params[1].name == "trial" or params[1].default is params[1].empty)


@dataclass
class AssignmentSpec:
    """One exercise set's grading spec as loaded from its ``grading.py``: its checks (one per graded
    cell), its QA cases (``wrong/``, ``honest/``), the per-item time limit (s) and memory limit (MB)."""
    name: str
    checks: list
    wrong: dict[str, Case]
    honest: dict[str, Case] = field(default_factory=dict)
    timeout: float = 10.0
    mem_mb: int = 1024
    allowed_imports: tuple[str, ...] = ("math", "numpy", "torch", "typing", "functools",
                                        "itertools", "collections", "dataclasses", "__future__",
                                        "einops")

    def check_for(self, grade_id: str):
        """The check of the graded cell ``grade_id``, or None when the spec has none."""
        for c in self.checks:
            if c.grade_id == grade_id:
                return c
        return None


#: Specs loaded in this process, by (path, modification time, size): each ``grading.py`` is
#: executed once per grading process, not once per submission (set 09's course run is cached in
#: its module).
_SPECS: dict[tuple, AssignmentSpec] = {}


def load_spec(path: str | os.PathLike) -> AssignmentSpec:
    """Import ``grading.py`` from an assignment's source folder (once per process while the file
    is unchanged; see :data:`_SPECS`)."""
    path = Path(path)
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _SPECS:
        _SPECS[key] = _load_spec(path)
    return _SPECS[key]


def load_sibling(grading_file: str | os.PathLike, name: str):
    """The module ``<name>.py`` in the folder of the grading spec ``grading_file`` (a spec too large
    for one file keeps parts of itself there, named ``grading_*.py`` so that nbgrader never releases
    them), loaded once per process and per version of the file: a second call returns the same module,
    caches and all, until the file changes (as :func:`load_spec` reloads a changed spec).

    Raises ``FileNotFoundError`` naming the file when it does not exist.
    """
    path = Path(grading_file).resolve().with_name(f"{name}.py")
    if not path.is_file():
        raise FileNotFoundError(f"{grading_file} needs {path.name} next to it, and it is missing: "
                                "copy the whole solutions/<set>/ folder")
    stat = path.stat()
    version = hashlib.sha256(f"{path}\0{stat.st_mtime_ns}\0{stat.st_size}".encode()).hexdigest()[:16]
    mod_name = f"_attnlab_grading_{path.parent.name}_{name}_{version}"
    if mod_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(mod_name, path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[mod_name]
            raise
    return sys.modules[mod_name]


def _load_spec(path: Path) -> AssignmentSpec:
    mod_name = f"_attnlab_grading_{path.parent.name}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for check in mod.CHECKS:
        if isinstance(check, ByHandCheck) and not check.key:
            check.key = f"{path.parent.name}/{check.grade_id}"
    if hasattr(mod, "WRONG"):
        raise ValueError(f"{path}: WRONG is no longer read; write each case as wrong/<name>.py "
                         "(see autograder/AUTHORING.md)")
    return AssignmentSpec(name=path.parent.name, checks=list(mod.CHECKS), wrong=load_cases(path.parent, "wrong"),
                          honest=load_cases(path.parent, "honest"),
                          timeout=float(getattr(mod, "TIMEOUT", 10.0)),
                          mem_mb=int(getattr(mod, "MEM_MB", 1024)))


def named_mistakes(spec: AssignmentSpec) -> dict[str, list[str]]:
    """Every mistake name ``spec`` uses -> where: ``"<grade_id>"`` for a key of a check's
    ``mistakes`` (``FunctionCheck`` and subclasses), ``"wrong/<case>.py"`` for a QA case's
    ``# mistake:`` header.  Each must be a name of the one catalogue,
    ``attnlab.practice.misconceptions.MISCONCEPTIONS`` (see :func:`unknown_mistakes`)."""
    used: dict[str, list[str]] = {}
    for check in spec.checks:
        for name in getattr(check, "mistakes", None) or {}:
            used.setdefault(name, []).append(check.grade_id)
    for case in spec.wrong.values():
        if case.mistake:
            used.setdefault(case.mistake, []).append(f"wrong/{case.name}.py")
    return used


def unknown_mistakes(spec: AssignmentSpec) -> list[str]:
    """One line per mistake name of ``spec`` that the catalogue does not hold (empty when all
    are known), saying where it is used and what to do."""
    from attnlab.practice.misconceptions import MISCONCEPTIONS
    return [f"{spec.name}: mistake {name!r} (used by {', '.join(where)}) is not in "
            "attnlab.practice.misconceptions.MISCONCEPTIONS: use an existing entry for the same "
            "mistake or add one (name, title 'you ...', why)"
            for name, where in named_mistakes(spec).items() if name not in MISCONCEPTIONS]


def rng_from_urandom() -> np.random.Generator:
    """A generator seeded from the OS at grading time (nothing in the notebook predicts it)."""
    return np.random.default_rng(int.from_bytes(os.urandom(16), "little"))


__all__ = ["FunctionCheck", "ByHandCheck", "takes_trial", "Case", "load_cases", "AssignmentSpec", "load_spec", "Verdict",
           "mistake_verdict",
           "named_mistakes", "unknown_mistakes",
           "compare_values", "decode", "encode", "rng_from_urandom", "math"]
