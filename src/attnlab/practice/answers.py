"""Parse learners' answers and compare them with tolerance.

Every answer kind accepts the forms a learner would naturally type or return:

========  ==========================================================================
kind      accepted forms
========  ==========================================================================
number    ``0.73``, ``"0.73"``, ``"3/4"``, ``"≈ 0.73"``, numpy/torch scalars; for a skill with hand working, any
          value rounding the working reaches (:class:`~attnlab.practice.working.Reach`), else
          equal within half a unit of the stated number of decimals (``decimals=2`` -> ±0.005)
int       ``12``, ``"12,288"``, ``"12 288"``, ``"12_288"``, ``"1.2288e4"``, ``12.0``, ``"12288 bytes"``,
          a calculator expression ``"4*96^2 + 4*96"`` (also for numbers); exact
shape     ``(2, 4, 8)``, ``[2, 4, 8]``, ``torch.Size``, ``"(2, 4, 8)"``, ``"2x4x8"``
matrix    nested lists, numpy arrays, torch tensors, ``"[[1, 2], [3, 4]]"``, ``"1 2; 3 4"``, one row per line
vector    like matrix, one axis: ``[0.1, 0.9]``, ``"0.1 0.9"``
mask      bool (True = may attend; ``T F; T T``), 0/1 (1 = may attend) or additive 0/-inf (0 = may attend; ``-inf``,
          ``−∞``, ``float('-inf')``, ``-np.inf``); printed arrays ``[[ True False] [ True  True]]``
int_list  ordered integers ``[3, 1, 2]``, ``"3 1 2"``
int_set   integers in any order ``{0, 2}``, ``"2, 0"``
choice    one option letter: ``"B"``, ``"b"``, ``"(b)"``, ``"B)"``
choices   option letters in any order: ``"A, C"``, ``"ca"``, ``["A", "C"]``
order     option letters in order: ``"C A B"``, ``"CAB"``, ``"C, A, B"``
========  ==========================================================================

Anything that cannot be read raises :class:`AnswerFormatError` with a message saying what
could not be read (never another exception: ``1/0`` is "cannot divide by zero").
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

KINDS = ("number", "int", "shape", "matrix", "vector", "mask", "int_list", "int_set", "choice", "choices", "order")
LETTER_KINDS = ("choice", "choices", "order")


class AnswerFormatError(ValueError):
    """The answer could not be read; the message says what form is expected."""


@dataclass(frozen=True)
class Difference:
    """Where a given answer first differs from the expected one.

    ``where`` is an index tuple (``()`` for a single number); ``given`` is the
    learner's value there; ``reason`` is ``"value"``, ``"shape"`` or ``"length"``.
    ``expected_shape`` is only set for a shape mismatch (it reveals no values).
    """

    reason: str
    where: tuple[int, ...] = ()
    given: Any = None
    given_shape: tuple[int, ...] | None = None
    expected_shape: tuple[int, ...] | None = None


def tolerance(decimals: int | None) -> float:
    """Absolute tolerance for an answer asked to ``decimals`` places (None: 1e-6)."""
    return 1e-6 if decimals is None else 0.5 * 10.0 ** (-decimals) + 1e-9


# ----------------------------------------------------------------------------- parsing
_FRACTION = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)(?![\w.])")


def _fraction(m: re.Match) -> str:
    num, den = float(m.group(1)), float(m.group(2))
    if den == 0:
        raise AnswerFormatError(f"{m.group(0)!r} divides by zero. Type the value itself, e.g. 0.25 or 1/4.")
    return repr(num / den)


def _text_to_python(text: str) -> Any:
    s = text.strip().replace("−", "-").replace("∞", "inf").replace("×", "x")
    if not s:
        raise AnswerFormatError("The answer is empty. Type a number, a list like [1, 2] or a shape like (2, 3).")
    s = re.sub(r"\btorch\.Size\(\s*(\[.*\])\s*\)", r"\1", s)
    pasted = re.fullmatch(r"(?:torch\.|np\.|numpy\.)?(?:tensor|array)\((.*?)(?:,\s*dtype\s*=\s*[\w.]+)?\)", s, re.S)
    if pasted:  # printed tensor/array pasted back: tensor([[1., 0.], [1., 1.]])
        s = pasted.group(1)
    s = re.sub(r"\bfloat\(\s*(['\"])\s*([-+]?\s*inf(?:inity)?)\s*\1\s*\)", r"\2", s, flags=re.I)  # float('-inf')
    s = re.sub(r"\b(?:np|numpy|math|torch)\.inf\b", "inf", s)  # -np.inf, math.inf
    s = re.sub(r"(?i)\btrue\b", "True", s)
    s = re.sub(r"(?i)\bfalse\b", "False", s)
    s = re.sub(r"(?i)(?<![\w.])-\s*inf(inity)?\b", "-1e999", s)
    s = re.sub(r"(?i)(?<![\w.])inf(inity)?\b", "1e999", s)
    s = _FRACTION.sub(_fraction, s)
    if re.fullmatch(r"\s*\d+(\s*x\s*\d+)+\s*", s):  # 2x4x8
        return tuple(int(t) for t in s.split("x"))
    if ";" in s and "[" not in s:  # MATLAB style rows: "1 0; 1 1"
        return [_text_to_python(row) for row in s.split(";") if row.strip()]
    if "\n" in s and "[" not in s and "(" not in s:  # one row per line: "1 0\n1 1"
        rows = [_text_to_python(row) for row in s.splitlines() if row.strip()]
        return rows if len(rows) > 1 else rows[0]
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+", s):  # 12,288 -> 12288
        s = s.replace(",", "")
    s = s.replace("_", "")
    if "[" in s:  # NumPy-style printing without commas: [[1 0] [1 1]]
        s = re.sub(r"(?<=[\d.\]e])\s+(?=[-+\d.\[TF])", ", ", s.strip())  # also [[ True False] [ True  True]]
    try:
        value = ast.literal_eval(s)
    except (ValueError, SyntaxError):
        tokens = s.replace(",", " ").split()
        try:
            value = [ast.literal_eval(t) for t in tokens]
        except (ValueError, SyntaxError):
            raise AnswerFormatError(
                f"Could not read {text!r}. Use numbers (0.25 or 1/4), lists like [[1, 0], [1, 1]] "
                "or rows separated by ';' like '1 0; 1 1'."
            ) from None
        if len(value) == 1:
            value = value[0]
    if isinstance(value, (set, frozenset)):
        value = sorted(value)
    return value


def _to_python(answer: Any) -> Any:
    """Strings, tensors, arrays and nested sequences -> plain Python / numpy values."""
    if isinstance(answer, str):
        return _text_to_python(answer)
    if hasattr(answer, "detach"):  # torch.Tensor without importing torch
        answer = answer.detach().cpu().numpy()
    if isinstance(answer, tuple) and type(answer).__name__ == "Size":
        return tuple(int(d) for d in answer)
    if isinstance(answer, (set, frozenset)):
        return sorted(answer)
    return answer


def _array(value: Any, what: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise AnswerFormatError(
            f"Could not read the answer as {what}: rows must all have the same length and contain only numbers."
        ) from None
    return arr


def parse(answer: Any, kind: str) -> Any:
    """Normalise ``answer`` for ``kind`` (see the module table).

    Returns float (number), int (int), tuple[int, ...] (shape), float ndarray
    (matrix/vector), bool ndarray (mask), list[int] (int_list), sorted list[int] (int_set).
    Raises:
        AnswerFormatError: the answer cannot be read as that kind (message says how to write it).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown answer kind {kind!r}; expected one of {KINDS}")
    if kind in LETTER_KINDS:
        return _letters(answer, kind)
    if isinstance(answer, str):
        _check_text_size(answer)
    try:
        return _parse(answer, kind)
    except AnswerFormatError:
        raise
    except OverflowError:
        raise AnswerFormatError("This answer holds a number larger than 1.8e308, too large to be an answer; "
                                "type the value itself.") from None
    except (ArithmeticError, ValueError, TypeError, RecursionError, MemoryError) as err:
        shown = answer if len(repr(answer)) < 80 else repr(answer)[:77] + "..."
        raise AnswerFormatError(f"Could not read {shown!r} ({type(err).__name__}: {err}). "
                                "Type numbers such as 0.25 or 1/4, or lists like [[1, 0], [1, 1]].") from None


def _check_text_size(text: str) -> None:
    """Refuse typed text past the bounds of :mod:`attnlab.practice.arithmetic` before any parsing:
    :data:`~attnlab.practice.arithmetic.MAX_TEXT_CHARS` characters, and a run of more than
    :data:`~attnlab.practice.arithmetic.MAX_DIGITS` digits (a number past 1e308, which no answer is).

    Raises:
        AnswerFormatError: the bound passed, in words."""
    from .arithmetic import MAX_DIGITS, MAX_TEXT_CHARS
    if len(text) > MAX_TEXT_CHARS:
        raise AnswerFormatError(f"This answer has {len(text):,} characters, over the {MAX_TEXT_CHARS:,} an answer "
                                "may have: type the numbers the exercise asks for.")
    if re.search(rf"\d{{{MAX_DIGITS + 1}}}", text):
        raise AnswerFormatError(f"This answer holds a number of more than {MAX_DIGITS} digits, larger than any "
                                "answer: type the value itself.")


def _letters(answer: Any, kind: str) -> Any:
    """Option letters: ``"b"``, ``"(B)"``, ``"A, C"``, ``"CAB"``, ``["A", "C"]``."""
    if isinstance(answer, (list, tuple, set, frozenset)):
        text = " ".join(str(a) for a in answer)
    else:
        text = str(answer)
    letters = re.findall(r"(?<![A-Za-z])[A-Za-z](?![A-Za-z])", text)
    if not letters and re.fullmatch(r"[\s,;()\[\]]*[A-Za-z]+[\s,;()\[\]]*", text):
        letters = list(re.sub(r"[^A-Za-z]", "", text))  # "CAB"
    letters = [c.upper() for c in letters]
    if not letters:
        raise AnswerFormatError(f"Could not read {text!r}: answer with the option letter(s), e.g. B"
                                + (" or A, C." if kind == "choices" else " or C A B." if kind == "order" else "."))
    if kind == "choice":
        if len(letters) != 1:
            raise AnswerFormatError(f"Give exactly one option letter (you gave {len(letters)}: {', '.join(letters)}).")
        return letters[0]
    if kind == "order":
        if len(set(letters)) != len(letters):
            raise AnswerFormatError("Each option appears once in an order; you repeated one: " + " ".join(letters))
        return letters
    return sorted(set(letters))


_GROUPED = re.compile(r"\s*-?\d{1,3}(?:[ \u00a0\u2009\u202f']\d{3})+\s*")  # 12 288, 12'288 (thin spaces too)
_APPROX = re.compile(r"^\s*(?:≈|~|=|about|approx(?:\.|imately)?)\s*", re.I)  # ≈ 0.73, about 0.73
_UNIT = re.compile(r"(?<=[\d)])\s*(?:bytes?|B|parameters|params|FLOPs?|flops|nats?)\s*\.?\s*$")  # 12288 bytes
_ARITH = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
          ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b}
_FUNCTIONS = {"sqrt": math.sqrt, "exp": math.exp, "ln": math.log, "log2": math.log2, "log10": math.log10,
              "sin": math.sin, "cos": math.cos}


def _arithmetic(text: str) -> float | int | None:
    """The value of a calculator expression (numbers, + − * / ^ or **, brackets, sqrt/√, exp, ln, log2, log10,
    sin, cos; ``4*512^2 + 4*512``, ``√64``, ``ln(65)``), or None when ``text`` is not one. Evaluated under the
    bounds of :mod:`attnlab.practice.arithmetic` (length, size, depth, magnitude of every partial result).
    Raises AnswerFormatError on a division by zero, a value past a bound, a function outside its domain or a
    bare ``log``."""
    from .arithmetic import MAX_CHARS, ArithmeticBoundError, NotArithmetic, check_size, evaluate
    if len(text) > MAX_CHARS:
        raise AnswerFormatError(f"This answer has {len(text):,} characters, over the {MAX_CHARS:,} an answer "
                                "may have: type the number itself.")
    s = text.replace("^", "**").replace("·", "*").replace("×", "*").replace("−", "-")
    s = re.sub(r"√\s*(\d+(?:\.\d+)?|\([^()]*\))", r"sqrt(\1)", s)  # √64, √(512/8)
    if re.search(r"\blog\s*\(", s):
        raise AnswerFormatError(f"In {text!r}, 'log' is ambiguous (ln in Python, log₁₀ on a calculator): write "
                                "ln(...), log2(...) or log10(...), or the number itself.")
    names = set(re.findall(r"[A-Za-z_]\w*", s)) - {"e", "E"}
    if not re.fullmatch(r"[\w\s.+\-*/()]+", s) or not names <= set(_FUNCTIONS) or not (
            names or re.search(r"\d\s*[-+*/]", s)):
        return None
    shown = text if len(text) <= 60 else text[:57] + "..."
    try:
        tree = ast.parse(s.strip(), mode="eval")
        check_size(tree)
        return evaluate(tree.body, ops=_ARITH, functions=_FUNCTIONS)
    except (SyntaxError, NotArithmetic, RecursionError, MemoryError):
        return None
    except ArithmeticBoundError as err:
        raise AnswerFormatError(f"{shown!r} holds {err}; type the value itself.") from None


def _parse(answer: Any, kind: str) -> Any:
    if kind in ("number", "int") and isinstance(answer, str):
        answer = _UNIT.sub("", _APPROX.sub("", answer)).rstrip(". ") or answer  # "≈ 0.73.", "12288 bytes"
        if _GROUPED.fullmatch(answer):
            answer = re.sub(r"[ \u00a0\u2009\u202f']", "", answer)  # one number written with grouped thousands
        computed = _arithmetic(answer)
        if computed is not None:
            answer = repr(computed)
    if kind == "mask" and isinstance(answer, str) and re.fullmatch(r"[TFtf\s,;\[\]()]*[TFtf][TFtf\s,;\[\]()]*", answer):
        answer = re.sub(r"[Tt]", "1", re.sub(r"[Ff]", "0", answer))  # "T F; T T"
    value = _to_python(answer)
    if kind in ("number", "int"):
        if isinstance(value, (list, tuple, np.ndarray)) and np.size(value) == 1:
            value = np.asarray(value).reshape(-1)[0]
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise AnswerFormatError(f"Expected a single number, got {answer!r}.") from None
        if kind == "number":
            return number
        if not np.isfinite(number) or number != round(number):
            raise AnswerFormatError(f"Expected a whole number (an integer count), got {answer!r}.")
        return int(round(number))
    if kind in ("shape", "int_list", "int_set"):
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            value = [value]
        arr = np.asarray(value)
        if arr.ndim != 1 or arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            label = "a shape like (2, 4, 8)" if kind == "shape" else "a list of whole numbers like [0, 2]"
            raise AnswerFormatError(f"Expected {label}, got {answer!r}.")
        ints = [int(v) for v in arr]
        if kind == "shape":
            return tuple(ints)
        return sorted(ints) if kind == "int_set" else ints
    if kind in ("matrix", "vector"):
        arr = _array(value, "a matrix" if kind == "matrix" else "a list of numbers")
        if kind == "vector" and arr.ndim == 0:
            arr = arr.reshape(1)
        return arr
    # mask
    try:
        arr = np.asarray(value)
    except ValueError:  # ragged rows: say so, as for a matrix
        arr = _array(value, "a mask")
    if arr.dtype == bool:
        return arr
    arr = _array(value, "a mask")
    if np.all(np.isin(arr, (0.0, 1.0))):
        return arr == 1.0
    if np.all((arr == 0.0) | np.isneginf(arr)):
        return arr == 0.0
    raise AnswerFormatError(
        "A mask must be True/False (True = may attend), 0/1 (1 = may attend) or additive 0/-inf "
        "(0 = may attend); do not mix 1 and -inf."
    )


# ----------------------------------------------------------------------------- comparing
def compare(expected: Any, given: Any, kind: str, decimals: int | None = None, tol: Any = None) -> Difference | None:
    """First difference between parsed ``given`` and ``expected`` (both normalised), or None if equal.

    ``tol``: accepted absolute distance, a number or one per entry (same nesting as the answer);
    default :func:`tolerance` of ``decimals``. Or a :class:`~attnlab.practice.working.Reach`: the values
    rounding the working reaches, per entry (see :meth:`Reach.accepts`).
    """
    from .working import Reach

    reach = tol if isinstance(tol, Reach) else None
    if tol is None:
        tol = tolerance(decimals)
    if kind in LETTER_KINDS:
        if kind == "choice":
            return None if given == expected else Difference("value", (), given)
        gl, el = list(given), list(expected)
        if gl == el:
            return None
        first = next((i for i, (a, b) in enumerate(zip(gl, el, strict=False)) if a != b), min(len(gl), len(el)))
        return Difference("value" if len(gl) == len(el) else "length", (first,), None, (len(gl),), (len(el),))
    if kind in ("number", "int"):
        if kind == "int":
            return None if int(given) == int(expected) else Difference("value", (), given)
        if reach is not None:
            return None if bool(np.all(reach.accepts(float(given)))) else Difference("value", (), given)
        return None if abs(float(given) - float(expected)) <= float(np.max(tol)) else Difference("value", (), given)
    if kind in ("shape", "int_list", "int_set"):
        gl, el = list(given), list(expected)
        if kind == "shape" and len(gl) != len(el):  # a wrong number of axes is the first thing to fix
            return Difference("length", (min(len(gl), len(el)),), None, (len(gl),), (len(el),))
        for i, (a, b) in enumerate(zip(gl, el, strict=False)):
            if a != b:
                return Difference("value", (i,), a)
        if len(gl) != len(el):
            return Difference("length", (min(len(gl), len(el)),), None, (len(gl),), (len(el),))
        return None
    g, e = np.asarray(given), np.asarray(expected)
    if g.shape != e.shape:
        return Difference("shape", (), None, tuple(g.shape), tuple(e.shape))
    if kind == "mask":
        bad = np.argwhere(g.astype(bool) != e.astype(bool))
    else:
        gf, ef = g.astype(float), e.astype(float)
        if reach is not None and np.shape(reach.lo) == ef.shape:
            with np.errstate(invalid="ignore"):
                same = reach.accepts(gf) | ((gf == ef) & np.isinf(ef))
        else:
            tol = np.asarray(reach.hi if reach is not None else tol, dtype=float)
            if reach is not None:  # a reach made for another shape: its widest spread
                tol = np.max(np.abs(tol - np.asarray(reach.exact, dtype=float))) + tolerance(reach.decimals)
            if tol.shape not in ((), ef.shape):  # a per-entry tolerance made for another shape: use its widest
                tol = tol.max()
            with np.errstate(invalid="ignore"):
                same = (np.abs(gf - ef) <= tol) | ((gf == ef) & np.isinf(ef))
        bad = np.argwhere(~same)
    if len(bad) == 0:
        return None
    where = tuple(int(i) for i in bad[0])
    value = g[where] if where else g.item()
    return Difference("value", where, value.item() if hasattr(value, "item") else value)


def equivalent(expected: Any, answer: Any, kind: str, decimals: int | None = None) -> bool:
    """True if ``answer`` (any accepted form) equals ``expected`` (normalised) for ``kind``."""
    try:
        return compare(expected, parse(answer, kind), kind, decimals) is None
    except AnswerFormatError:
        return False


def format_answer(value: Any, kind: str, decimals: int | None = None) -> str:
    """The text a learner would type for ``value`` (used by tests, the CLI and the e2e test)."""
    value = parse(value, kind)
    if kind == "choice":
        return value
    if kind in ("choices", "order"):
        return ", ".join(value) if kind == "choices" else " ".join(value)
    if kind == "number":
        return f"{value:.{decimals}f}" if decimals is not None else repr(value)
    if kind == "int":
        return str(value)
    if kind == "shape":
        return "(" + ", ".join(str(v) for v in value) + ")"
    if kind in ("int_list", "int_set"):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if kind == "mask":
        return repr(np.asarray(value).astype(int).tolist())

    def fmt(x: float) -> str:
        if decimals is not None:
            return f"{x:.{decimals}f}"
        return str(int(x)) if float(x).is_integer() else repr(float(x))  # token ids and counts print as ints

    arr = np.asarray(value, dtype=float)
    if arr.ndim == 1:
        return "[" + ", ".join(fmt(x) for x in arr) + "]"
    return "[" + ", ".join("[" + ", ".join(fmt(x) for x in row) + "]" for row in arr) + "]"


def plain(value: Any) -> Any:
    """Tensors/arrays -> nested Python lists (JSON friendly); other values unchanged."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value
