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

import importlib.util
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import verdict as V

#: Setup snippet run in the sandbox before every extraction: decodes the grader's
#: inputs into torch tensors under the name ``_I`` (student globals are not touched).
DECODE = """
def _attnlab_decode(v):
    if isinstance(v, dict) and "t" in v:
        dt = {"float": torch.float32, "bool": torch.bool, "long": torch.long}[v["t"]]
        return torch.tensor(v["v"], dtype=dt)
    return v
_I = {k: _attnlab_decode(v) for k, v in __inputs__.items()}
del _attnlab_decode
"""


def encode(value: Any) -> Any:
    """Encode a grader-side input (numpy array or plain value) for the sandbox."""
    if isinstance(value, np.ndarray):
        kind = "bool" if value.dtype == bool else "long" if value.dtype.kind in "iu" else "float"
        return {"t": kind, "v": value.tolist()}
    return value


def decode(value: Any) -> Any:
    """Decode a sandbox value (see ``zygote._plain``) into numpy arrays / Python values.

    Raises ``TypeError`` for values the sandbox refused to serialise (e.g. subclasses).
    """
    if isinstance(value, dict):
        if "__array__" in value:
            arr = np.array(value["__array__"], dtype=np.float64).reshape(value["shape"])
            return arr.astype(bool) if value.get("dtype") in ("torch.bool", "bool") else arr
        if "__scalar__" in value:
            return int(value["__scalar__"]) if value["int"] else float(value["__scalar__"])
        if "__seq__" in value:
            items = [decode(v) for v in value["__seq__"]]
            return tuple(items) if value["tuple"] else items
        if "__dict__" in value:
            return {k: decode(v) for k, v in value["__dict__"].items()}
        if "__unsupported__" in value:
            raise TypeError(f"returned an object of type {value['__unsupported__']} "
                            f"(a subclass of {', '.join(value.get('subclass_of', []))}); "
                            "return a plain torch.Tensor")
    return value


@dataclass
class Outcome:
    """One check's verdict. ``mistake``: the name of the known mistake the answer matches
    (a key of ``FunctionCheck.mistakes`` or of the practice skill's mistakes), else ``None``;
    the class report (``autograder/report.py``) ranks these."""
    ok: bool
    message: str
    flag: str | None = None
    mistake: str | None = None
    #: every known mistake this value matches (several can coincide on one draw of inputs, e.g.
    #: "forgot the layers" and "forgot K and V" when n_layers = 2); ``mistake`` is the first.
    matches: tuple[str, ...] = ()
    #: why it failed, one of :mod:`autograder.verdict`'s kinds (``None``: work it out from ``mistake``)
    kind: str | None = None


def _to_array(x: Any) -> np.ndarray:
    try:
        import torch
        if isinstance(x, torch.Tensor):
            if x.dtype == torch.bool:
                return x.detach().numpy()
            return x.detach().to(torch.float64).numpy()
    except ImportError:  # pragma: no cover
        pass
    a = np.asarray(x)
    return a if a.dtype == bool else a.astype(np.float64)


class Mismatch(str):
    """A comparison's message (a ``str``) that also carries its :mod:`autograder.verdict` kind."""

    kind: str = V.WRONG_VALUES


def _mm(message: str, kind: str) -> Mismatch:
    out = Mismatch(message)
    out.kind = kind
    return out


def compare_values(got: Any, expected: Any, label: str, rtol: float, atol: float) -> str | None:
    """Compare plain values; return ``None`` if equal, else a message that gives no answer.

    ``expected`` may be an array/tensor, ``None``, a number, a string, a tuple/list of these,
    or a dict of these (keys compared as strings, as the sandbox sends them).
    """
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return _mm(f"{label}: expected a dict with keys {sorted(map(str, expected))}, got a {type(got).__name__}", V.WRONG_COUNT)
        keys = {str(k): v for k, v in expected.items()}
        if set(map(str, got)) != set(keys):
            return _mm(f"{label}: dict keys {sorted(map(str, got))}, expected {sorted(keys)}", V.WRONG_COUNT)
        got = {str(k): v for k, v in got.items()}
        for k, e in keys.items():
            msg = compare_values(got[k], e, f"{label}[{k!r}]", rtol, atol)
            if msg:
                return msg
        return None
    if isinstance(expected, str):
        return None if got == expected else _mm(f"{label}: returned {type(got).__name__} {got!r:.40}, which differs from the reference", V.WRONG_VALUES)
    if isinstance(expected, (tuple, list)) and not _is_numeric_list(expected):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            n = len(got) if isinstance(got, (tuple, list)) else type(got).__name__
            return _mm(f"{label}: expected {len(expected)} returned values, got {n}", V.WRONG_COUNT)
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            if e is None:
                if g is not None:
                    return _mm(f"{label}[{i}]: expected None, got a {type(g).__name__}", V.WRONG_VALUES)
                continue
            msg = compare_values(g, e, f"{label}[{i}]", rtol, atol)
            if msg:
                return msg
        return None
    if expected is None:
        return None if got is None else _mm(f"{label}: expected None, got a {type(got).__name__}", V.WRONG_VALUES)
    e = _to_array(expected)
    if got is None:
        return _mm(f"{label}: returned None, expected an array of shape {tuple(e.shape)}", V.RETURNED_NONE)
    if isinstance(got, (str, dict)):
        return _mm(f"{label}: returned a {type(got).__name__}, expected an array of shape {tuple(e.shape)}", V.WRONG_VALUES)
    try:
        g = got if isinstance(got, np.ndarray) else np.asarray(got)
    except ValueError:
        return _mm(f"{label}: returned a ragged nested list, expected an array of shape {tuple(e.shape)}", V.WRONG_SHAPE)
    if g.dtype.kind not in "biuf":
        return _mm(f"{label}: returned {type(got).__name__} values that are not numbers", V.WRONG_VALUES)
    if g.shape != e.shape:
        return _mm(f"{label}: shape {tuple(g.shape)}, expected {tuple(e.shape)}", V.WRONG_SHAPE)
    if e.dtype == bool and g.dtype != bool:
        return _mm(f"{label}: must be a bool tensor (True = may attend), got dtype {g.dtype}", V.WRONG_DTYPE)
    g, e = g.astype(np.float64), e.astype(np.float64)
    msg = _compare_non_finite(g, e, label)
    if msg:
        return msg
    fin = np.isfinite(e)
    if not np.allclose(g[fin], e[fin], rtol=rtol, atol=atol):
        err = float(np.max(np.abs(g[fin] - e[fin])))
        return _mm(f"{label}: values differ from the reference on random inputs (max abs error {err:.3g})",
                   V.WRONG_VALUES)
    return None


def _kind(x: np.ndarray) -> np.ndarray:
    """Per entry: 0 finite, 1 +inf, -1 -inf, 2 NaN."""
    return np.where(np.isnan(x), 2, np.where(np.isposinf(x), 1, np.where(np.isneginf(x), -1, 0)))


def _compare_non_finite(g: np.ndarray, e: np.ndarray, label: str) -> str | None:
    """Non-finite entries are compared exactly: same positions, same kind (NaN, +inf, -inf).

    A top-k filter that writes ``+inf`` or ``NaN`` where the reference writes ``-inf`` is wrong
    (it would sample exactly the tokens it meant to drop); no tolerance applies to them.
    """
    gk, ek = _kind(g), _kind(e)
    diff = gk != ek
    if not diff.any():
        return None
    names = {0: "a finite number", 1: "+inf", -1: "-inf", 2: "NaN"}
    i = tuple(int(n) for n in np.argwhere(diff)[0]) if diff.ndim else ()
    return _mm(f"{label}: {int(diff.sum())} entr{'y' if diff.sum() == 1 else 'ies'} differ in kind from the reference "
               f"(e.g. at index {list(i)}: {names[int(gk[i])]} where the reference has {names[int(ek[i])]}); "
               "non-finite values (NaN, +inf, -inf) must match exactly", V.NON_FINITE)


def _is_numeric_list(x: Any) -> bool:
    return isinstance(x, list) and all(isinstance(v, (int, float, list)) for v in x)


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
    with its title and explanation (checked for the shipped sets by ``autograder/tests/test_catalogue.py``).
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
        nothing).  ``autograder/tests/test_separation.py`` checks that every shipped check gets
        there within a few draws.
        """
        raws = self.draw(rng)
        for _ in range(SEPARATING_DRAWS - 1):
            if not self.mistakes or not self.unseparated(raws):
                break
            raws = self.draw(rng)
        return ({"id": self.grade_id, "setup": DECODE + self.setup, "extract": f"__result__ = {self.call}",
                 "trials": [{k: encode(v) for k, v in raw.items()} for raw in raws],
                 "forbid_ops": list(self.forbid_ops)}, raws)

    def judge(self, value: Any, raw: dict, student: str) -> Outcome:
        expected = self.reference(**raw)
        msg = compare_values(value, _plainify(expected), self.target, self.rtol, self.atol)
        if msg is None:
            return Outcome(True, f"{self.target}: matches the reference on fresh random inputs")
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
            return mistake_outcome(self.target, tuple(matches))
        return Outcome(False, msg, kind=getattr(msg, "kind", V.WRONG_VALUES))


def mistake_outcome(target: str, matches: tuple[str, ...]) -> Outcome:
    """The verdict for a value that matches the known mistakes ``matches`` (catalogue names):
    one is named with its words; several (they coincide on these inputs) are all named."""
    if len(matches) == 1:
        text = f"the result matches a known mistake: {mistake_text(matches[0])}"
    else:
        text = "the result matches known mistakes that give the same values here: " + \
            "; or ".join(mistake_text(m) for m in matches)
    return Outcome(False, f"{target}: {text}", mistake=matches[0], matches=matches)


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


def _plainify(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _plainify(v) for k, v in x.items()}
    if isinstance(x, str):
        return x
    if isinstance(x, (tuple, list)) and x and not _is_numeric_list(list(x)):
        return tuple(_plainify(v) for v in x)
    if x is None:
        return None
    return _to_array(x)


#: (skill, key, learner id) -> that learner's expected by-hand answer (parsed), per grading process.
_EXPECTED: dict[tuple[str, str, str], Any] = {}


@dataclass
class ByHandCheck:
    """Numbers the student computed by hand, checked against *their own* variant.

    ``grade_id``: the test cell ``test_<what>_by_hand``; ``variable``: the name the answer cell
    assigns; ``skill``: an ``attnlab.practice`` skill.  Derived from ``grade_id`` unless given:
    ``cell`` = the answer cell ``<what>_by_hand`` (``grade_id`` without ``test_``), and ``key`` =
    ``"<assignment>/<grade_id>"`` (set by :func:`load_spec`), the seed key the notebook's
    ``show_problem(skill, key)`` uses.  The answer cell must assign a **literal** to ``variable``; the
    grader reads it with ``ast.literal_eval`` -- it is never executed, so code earns nothing.
    """

    grade_id: str
    variable: str
    skill: str
    cell: str = ""
    key: str = ""

    def __post_init__(self) -> None:
        self.cell = self.cell or self.grade_id.removeprefix("test_")

    kind = "by_hand"
    target = None
    forbid_attrs: tuple[str, ...] = ()

    def jobs(self, rng: np.random.Generator):
        return None  # read statically, never run

    def variant(self, student: str):
        """The variant of learner ``student`` (passed explicitly, as ``seed_for(student, key)``)."""
        from attnlab.practice import get_skill, seed_for
        from attnlab.practice.seeding import as_learner_id
        return get_skill(self.skill).variant(seed_for(as_learner_id(student), self.key))

    def read(self, cells: list[tuple[str, str]]) -> Any:
        """The literal assigned to ``variable`` in ``cell``; raises ``ValueError`` with a reason.

        Accepted: ``x = <literal>``, ``x: list = <literal>`` (annotated), a string of numbers
        (``x = "[[1, 2], [3, 4]]"``, read later by ``attnlab.practice.answers.parse``) and a literal
        wrapped in ``np.array(...)``/``torch.tensor(...)``/``list(...)``/``tuple(...)``/``float(...)``/
        ``int(...)``.  The last assignment in the cell wins.  Never executed."""
        import ast
        src = dict(cells).get(self.cell)
        if src is None:
            raise _unread(f"answer cell '{self.cell}' is missing", V.NOT_ANSWERED)
        try:
            tree = ast.parse(src)
        except SyntaxError as err:
            raise _unread(f"answer cell '{self.cell}' is not valid Python ({err.msg}, line {err.lineno})",
                          V.NOT_PYTHON) from None
        except (ValueError, RecursionError, MemoryError):
            raise _unread(f"answer cell '{self.cell}' could not be read (too deeply nested or not text)",
                          V.UNREADABLE) from None
        node_value, found = None, False
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == self.variable
                                                     for t in node.targets):
                node_value, found = node.value, True
            elif (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                  and node.target.id == self.variable and node.value is not None):
                node_value, found = node.value, True
        if not found:
            raise _unread(f"answer cell '{self.cell}' does not assign `{self.variable}`", V.NOT_ANSWERED)
        return _literal(node_value, self.variable)

    def judge(self, value: Any, raw: dict, student: str) -> Outcome:
        """Check ``value`` against ``student``'s own variant; never raises (a malformed answer
        fails this item only, with the reason)."""
        from attnlab.practice import get_skill
        if value is None:
            return Outcome(False, f"`{self.variable}` is still None: enter your answer", kind=V.NOT_ANSWERED)
        skill, answer = get_skill(self.skill), _to_plain_answer(value)
        try:
            fb = skill.check(self.variant(student), answer)
        except Exception as err:  # noqa: BLE001 - one malformed answer must not stop the submission
            return Outcome(False, f"`{self.variable}`: could not read this answer ({type(err).__name__}: "
                                  f"{str(err)[:200]}); write the numbers as in the comment above the cell, "
                                  "e.g. [[0.5, 1.0], [1.5, 2.0]]", kind=V.UNREADABLE)
        if not fb.correct:
            other = self.other_learner(answer, student, raw.get("other_learners", ()))
            if other is not None:
                return Outcome(False, f"`{self.variable}`: these are the right numbers for learner id {other!r}, "
                                      f"not for {student!r} (the id this work is graded under); no credit "
                                      "until your instructor reviews it (the notebook may have run under "
                                      "another learner id: see the setup cell)",
                               flag=f"by-hand numbers of learner id {other!r}, graded as {student!r}: review")
        return Outcome(bool(fb.correct), f"`{self.variable}`: {fb.message}",
                       mistake=None if fb.correct else fb.misconception,
                       kind=None if fb.correct or fb.misconception else
                       V.WRONG_VALUES if getattr(fb, "readable", True) else V.UNREADABLE)

    def other_learner(self, answer: Any, student: str, others) -> str | None:
        """The first id in ``others`` (not ``student``) whose right answer ``answer`` is, else None.
        Each id's expected answer is computed once per grading process (cached)."""
        from attnlab.practice import get_skill
        from attnlab.practice.answers import AnswerFormatError, compare, parse
        skill = get_skill(self.skill)
        try:
            given = parse(answer, skill.kind)
        except (AnswerFormatError, ValueError, TypeError):
            return None
        own = as_learner_id_safe(student)
        for other in dict.fromkeys(as_learner_id_safe(o) for o in others if o):
            if other == own:
                continue
            key = (self.skill, self.key, other)
            if key not in _EXPECTED:
                _EXPECTED[key] = parse(self.variant(other).answer, skill.kind)
            try:
                if compare(_EXPECTED[key], given, skill.kind, skill.decimals) is None:
                    return other
            except Exception:  # noqa: BLE001 - shapes that cannot be compared do not match
                continue
        return None

    def answer_literal(self, student: str, mistake: str | None = None) -> Any:
        """QA helper: the right (or a named mistake's) numbers for ``student``, rounded, plain."""
        from attnlab.practice import get_skill
        v = self.variant(student)
        value = v.answer if mistake is None else get_skill(self.skill).mistakes[mistake](v.data)
        return _round(_to_plain_answer(value))

    def literal_for(self, student: str, mistake: str | None = None) -> str:
        """QA helper: an answer cell source with the right (or a named mistake's) numbers."""
        return f"{self.variable} = {self.answer_literal(student, mistake)!r}\n"


def as_learner_id_safe(name: str) -> str:
    from attnlab.practice.seeding import as_learner_id
    return as_learner_id(name)


def printed_learner_ids(nb) -> list[str]:
    """Learner ids a notebook's own outputs say it ran under (``learner_note()`` in the setup
    cell: "... drawn for learner id 'alice' ..."; older notebooks: "learner: alice").  Read from
    the submission before its outputs are cleared; untrusted: used only to FLAG by-hand numbers
    that fit another id, never to credit them."""
    import re
    found = []
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            text = out.get("text", "")
            text = "".join(text) if isinstance(text, list) else str(text)
            found += re.findall(r"drawn for learner id '([^'\n]{1,64})'", text[:20000])
            found += re.findall(r"^learner: (\S{1,64})$", text[:20000], flags=re.M)
    return list(dict.fromkeys(found))[:8]


def _unread(message: str, kind: str) -> ValueError:
    """The ``ValueError`` :meth:`ByHandCheck.read` raises, carrying its verdict kind."""
    err = ValueError(message)
    err.kind = kind
    return err


_WRAPPERS = {"array", "asarray", "tensor", "as_tensor", "list", "tuple", "float", "int"}


def _literal(node: Any, variable: str) -> Any:
    """``ast.literal_eval`` of an answer, also through one ``np.array(<literal>)``-style wrapper."""
    import ast
    if (isinstance(node, ast.Call) and len(node.args) == 1
            and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) in _WRAPPERS):
        node = node.args[0]
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        raise _unread(f"`{variable}` must be the numbers themselves (a list literal such as "
                      "[[0.5, 1.0], [1.5, 2.0]]), not code that computes them", V.WRITTEN_AS_CODE) from None


def _round(v: Any) -> Any:
    if isinstance(v, list):
        return [_round(x) for x in v]
    if isinstance(v, float):
        return round(v, 4)
    return v


def _to_plain_answer(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (list, tuple)):
        return [_to_plain_answer(x) for x in v]
    return v


@dataclass
class Case:
    """A QA submission written as a real Python file: ``solutions/<A>/wrong/<name>.py`` (a realistic
    mistake) or ``solutions/<A>/honest/<name>.py`` (a correct solution written differently).

    File format (py:percent-like)::

        # breaks: test_mha_forward, test_other     (wrong/ only: the items it must lose)
        # mistake: combine_with_or          (optional: a name in attnlab.practice.misconceptions)
        # xfail: reason                            (optional, honest/ only: a known false refusal)
        # %% cell: causal_mask                     (replaces that answer cell of the reference;
        ...source...                                in a by-hand cell, {answer} stands for the
                                                    student's right numbers)
        # %% patch: mha_forward                    (the reference cell with lines replaced:
        # - old text                                each '# - ' line's text, which must occur once,
        # + new text                                becomes the following '# + ' lines, indented
        # + second new line                         like the old text's line)
        # %% added                                 (a cell the student added, inserted before the
        ...source...                                next section's cell, else at the end)

    ``sections`` is ``[(kind, grade_id or None, text)]`` in file order, ``kind`` one of
    ``"cell"``, ``"patch"``, ``"added"``."""

    name: str
    path: Path
    sections: list[tuple[str, str | None, str]]
    breaks: tuple[str, ...] = ()
    mistake: str | None = None
    xfail: str | None = None

    @property
    def cells(self) -> set[str]:
        """The answer cells this case changes."""
        return {gid for _, gid, _ in self.sections if gid}

    def patches(self, text: str) -> list[tuple[str, str]]:
        """``[(old, new)]`` of a patch section's text: each ``# - old`` line is followed by one or
        more ``# + new`` lines (joined with newlines; a bare ``# +`` is an empty line)."""
        edits: list[tuple[str, list[str]]] = []
        for ln in text.splitlines():
            if ln.startswith("# - "):
                edits.append((ln[4:], []))
            elif (ln.startswith("# + ") or ln == "# +") and edits:
                edits[-1][1].append(ln[4:])
        if not edits or any(not new for _, new in edits):
            raise ValueError(f"{self.path}: a patch section needs '# - old' lines, each followed by '# + new' lines")
        return [(old, "\n".join(new)) for old, new in edits]


def _parse_case(path: Path) -> Case:
    import re
    head: dict[str, str] = {}
    sections: list[tuple[str, str | None, list[str]]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.fullmatch(r"# %% (?:(cell|patch): *(\w+)|(added))\s*", line)
        if m:
            sections.append((m.group(1) or "added", m.group(2), []))
        elif sections:
            sections[-1][2].append(line)
        else:
            h = re.fullmatch(r"# *(breaks|mistake|xfail): *(.*)", line)
            if h:
                head[h.group(1)] = h.group(2).strip()
    if not any(gid for _, gid, _ in sections):
        raise ValueError(f"{path}: no '# %% cell: <grade_id>' or '# %% patch: <grade_id>' section")
    breaks = tuple(b.strip() for b in head.get("breaks", "").split(",") if b.strip())
    case = Case(path.stem, path, [(k, gid, "\n".join(lines).strip() + "\n") for k, gid, lines in sections],
                breaks, head.get("mistake"), head.get("xfail"))
    for kind, _, text in case.sections:
        if kind == "patch":
            case.patches(text)
    return case


def load_cases(folder: str | os.PathLike, kind: str) -> dict[str, Case]:
    """``{name: Case}`` from ``folder/<kind>/*.py`` (``kind`` = ``"wrong"`` or ``"honest"``), sorted."""
    return {p.stem: _parse_case(p) for p in sorted(Path(folder, kind).glob("*.py"))}


@dataclass
class AssignmentSpec:
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


__all__ = ["FunctionCheck", "ByHandCheck", "takes_trial", "Case", "load_cases", "AssignmentSpec", "load_spec", "Outcome",
           "named_mistakes", "unknown_mistakes",
           "compare_values", "decode", "encode", "rng_from_urandom", "math"]
