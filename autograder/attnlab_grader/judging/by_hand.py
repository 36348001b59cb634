"""Numbers a student computed by hand, checked against *their own* variant (:class:`ByHandCheck`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attnlab_grader.judging import verdict as V
from attnlab_grader.judging.verdict import Verdict

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
        """None: a by-hand answer is read from the notebook statically, never run in the sandbox."""
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
        from attnlab_grader.sandbox.scan import MAX_CELL_CHARS
        if len(src) > MAX_CELL_CHARS:  # bounded like every answer cell: parsing MBs takes seconds and GBs
            raise _unread(f"answer cell '{self.cell}' has {len(src):,} characters, over the {MAX_CELL_CHARS:,} "
                          "limit for an answer cell; write the numbers the exercise asks for", V.UNREADABLE)
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

    def judge(self, value: Any, raw: dict, student: str) -> Verdict:
        """Check ``value`` against ``student``'s own variant; never raises (a malformed answer
        fails this item only, with the reason)."""
        from attnlab.practice import get_skill
        if value is None:
            return Verdict(False, f"`{self.variable}` is still None: enter your answer", V.NOT_ANSWERED)
        skill, answer = get_skill(self.skill), _to_plain_answer(value)
        try:
            fb = skill.check(self.variant(student), answer)
        except Exception as err:  # noqa: BLE001 - one malformed answer must not stop the submission
            return Verdict(False, f"`{self.variable}`: could not read this answer ({type(err).__name__}: "
                                  f"{str(err)[:200]}); write the numbers as in the comment above the cell, "
                                  "e.g. [[0.5, 1.0], [1.5, 2.0]]", V.UNREADABLE)
        if not fb.correct:
            other = self.other_learner(answer, student, raw.get("other_learners", ()))
            if other is not None:
                return Verdict(False, f"`{self.variable}`: these are the right numbers for learner id {other!r}, "
                                      f"not for {student!r} (the id this work is graded under); no credit "
                                      "until your instructor reviews it (the notebook may have run under "
                                      "another learner id: see the setup cell)",
                               flag=f"by-hand numbers of learner id {other!r}, graded as {student!r}: review")
        message = f"`{self.variable}`: {_clip(fb.message)}"
        if not fb.correct and getattr(fb, "readable", True) and "other_learners" in raw:
            message += id_advice(raw["other_learners"], student)
        return Verdict(bool(fb.correct), message,
                       V.WRONG_VALUES if fb.correct or fb.misconception or getattr(fb, "readable", True) else
                       V.UNREADABLE, mistake=None if fb.correct else fb.misconception)

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


def id_advice(recorded, student: str) -> str:
    """The sentence a wrong by-hand verdict ends with when the notebook did not run under ``student``'s id:
    ``recorded`` (the ids the notebook's setup cell published, :func:`submitted_learner_ids`) is empty (no
    learner id recorded: the setup cell's output is missing) or lacks ``student``.  ``""`` when the notebook
    ran under ``student``'s id (its numbers were the right problem)."""
    own = as_learner_id_safe(student)
    ids = [as_learner_id_safe(r) for r in recorded if r]
    if own in ids:
        return ""
    todo = (f"set your learner id with `%env ATTNLAB_LEARNER={own}` in a cell (or ask your instructor how your "
            "course sets it), run the notebook again from the top and redo these numbers")
    if not ids:
        return (f" This notebook records no learner id (its setup cell's output is missing), so the by-hand "
                f"problems it showed may not be yours: they are checked against the problems of {own!r}, the id "
                f"this work is graded under. To fix it, {todo}.")
    ran = ", ".join(repr(i) for i in ids[:3])
    return (f" This notebook ran under learner id {ran}, not {own!r} (the id this work is graded under), so "
            f"the by-hand problems it showed were not yours. To fix it, {todo}.")


def as_learner_id_safe(name: str) -> str:
    """``name`` as a learner id (:func:`attnlab.practice.seeding.as_learner_id`: NFC, file-name safe)."""
    from attnlab.practice.seeding import as_learner_id
    return as_learner_id(name)


def submitted_learner_ids(nb) -> list[str]:
    """Learner ids the submission's own outputs record as data (the setup cell's
    :func:`attnlab.identity.publish_learner_id`; read with :func:`attnlab.identity.learner_ids_in`).
    Read before the outputs are cleared; untrusted: used only to FLAG by-hand numbers that fit
    another id, never to credit them.  A notebook without the record gives ``[]`` (nothing to flag)."""
    from attnlab.identity import learner_ids_in
    return learner_ids_in(nb)


#: characters of the checker's message kept in a by-hand verdict (it may quote the answer, up to 50 000 characters)
MAX_MESSAGE_CHARS = 600


def _clip(message: str) -> str:
    """``message`` cut to :data:`MAX_MESSAGE_CHARS`, saying how long it was."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return f"{message[:MAX_MESSAGE_CHARS - 60]} ... (cut: {len(message):,} characters in all)"


def _unread(message: str, kind: str) -> ValueError:
    """The ``ValueError`` :meth:`ByHandCheck.read` raises, carrying its verdict kind."""
    err = ValueError(message)
    err.kind = kind
    return err


_WRAPPERS = {"array", "asarray", "tensor", "as_tensor", "list", "tuple", "float", "int"}


#: Arithmetic a by-hand answer may write between numbers (``1/3``, ``-2**0.5``, ``3*4 + 1``, ``7 // 2``): what
#: a learner writes with a pen, evaluated under the bounds of :mod:`attnlab.practice.arithmetic` (size of
#: every number and partial result, exponent, syntax elements, depth).  Names and calls (``math.exp(1)``)
#: are still code.
def _ops():
    from attnlab.practice.arithmetic import BASIC_OPS, INTEGER_OPS
    return {**BASIC_OPS, **INTEGER_OPS}


def _fold(node: Any) -> Any:
    """``node`` with every number and arithmetic between numbers replaced by its bounded value (lists,
    tuples and ``np.array``-style wrappers kept as they are).  Raises
    :class:`attnlab.practice.arithmetic.ArithmeticBoundError` for a value that cannot be an answer,
    :class:`attnlab.practice.arithmetic.NotArithmetic` for names, calls and other operators (code)."""
    import ast

    from attnlab.practice.arithmetic import evaluate
    if isinstance(node, (ast.List, ast.Tuple)):
        return type(node)(elts=[_fold(e) for e in node.elts], ctx=ast.Load())
    if isinstance(node, (ast.BinOp, ast.UnaryOp)) or (isinstance(node, ast.Constant)
                                                     and type(node.value) in (int, float)):
        return ast.Constant(evaluate(node, ops=_ops()))
    return node


def _literal(node: Any, variable: str) -> Any:
    """The answer's value: a literal (``ast.literal_eval``), with arithmetic between numbers
    allowed (``[1/4, 1/2, 1/4]``), also through one ``np.array(<literal>)``-style wrapper; bounded
    (:func:`attnlab.practice.arithmetic.check_size`: syntax elements and depth).
    Raises the item's verdict in words: "written as code" for anything else (names, calls,
    comprehensions), "could not be read" past a bound."""
    import ast

    from attnlab.practice.arithmetic import ArithmeticBoundError, NotArithmetic, check_size
    if (isinstance(node, ast.Call) and len(node.args) == 1
            and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) in _WRAPPERS):
        node = node.args[0]
    try:
        check_size(node)
        return ast.literal_eval(_fold(node))
    except ArithmeticBoundError as err:
        raise _unread(f"`{variable}` holds {err}; write the numbers the exercise asks for",
                      V.UNREADABLE) from None
    except (NotArithmetic, ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        raise _unread(f"`{variable}` must be the numbers themselves (a list literal such as "
                      "[[0.5, 1.0], [1.5, 2.0]], or arithmetic between numbers such as 1/3), not code "
                      "that computes them", V.WRITTEN_AS_CODE) from None


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
