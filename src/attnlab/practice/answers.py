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
choice    one option letter: ``"B"``, ``"b"``, ``"(b)"``, ``"B)"``, ``"Option B"``; with the options shown
          (:func:`read_options`) also its number (``"2"``) or its text, typed or pasted, exactly or closely
choices   option letters in any order: ``"A, C"``, ``"ca"``, ``["A", "C"]`` (with the options: numbers, texts)
order     option letters in order: ``"C A B"``, ``"CAB"``, ``"C, A, B"``, ``"C → A → B"`` (numbers, texts)
========  ==========================================================================

Numbers also read ``4.129024*10^6`` / ``4.129024 × 10^6`` / ``4.129024·10⁶`` exactly (an exact count so written
is a whole number), and a decimal comma as the expected value suggests (:func:`read_decimal_comma`).

Anything that cannot be read raises :class:`AnswerFormatError` with a message saying what
could not be read (never another exception: ``1/0`` is "cannot divide by zero").
"""
from __future__ import annotations

import ast
import difflib
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Sequence

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


def parse(answer: Any, kind: str, *, options: Sequence[str] | None = None, expected: Any = None) -> Any:
    """Normalise ``answer`` for ``kind`` (see the module table).

    ``options``: for the option kinds (choice, choices, order), the texts of the options shown as A, B, ...;
    with them an option may also be named by its number or its text (:func:`read_options`). ``expected``:
    for number and int, the expected value, which decides how a decimal comma is read ("3,258" is 3.258 when
    about 3 is expected, 3258 when about 3000 is; :func:`read_decimal_comma`).

    Returns float (number), int (int), tuple[int, ...] (shape), float ndarray
    (matrix/vector), bool ndarray (mask), list[int] (int_list), sorted list[int] (int_set), a letter (choice),
    sorted letters (choices), letters in order (order).
    Raises:
        AnswerFormatError: the answer cannot be read as that kind (message says how to write it);
        :class:`NoSuchOption` (a subclass) for an option letter or number that names no option shown.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown answer kind {kind!r}; expected one of {KINDS}")
    if kind in LETTER_KINDS:
        return read_options(answer, kind, options) if options is not None else _letters(answer, kind)
    if isinstance(answer, str):
        _check_text_size(answer)
    try:
        if kind in ("number", "int") and isinstance(answer, str):
            answer = read_decimal_comma(answer, kind, expected)
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
    """Option letters alone, without the options' texts: ``"b"``, ``"(B)"``, ``"A, C"``, ``"C → A → B"``,
    ``"CAB"``, ``["A", "C"]``. A letter inside other words is never read as an option."""
    if isinstance(answer, (list, tuple, set, frozenset)):
        text = " ".join(str(a) for a in answer)
    else:
        text = str(answer)
    s = _LEAD.sub("", text.strip()).strip().strip(".")
    tokens = [t for t in _SEPARATORS.split(s) if t]
    letters: list[str] = []
    if tokens and all(_TOKEN.match(t) for t in tokens):
        letters = [_TOKEN.match(t).group(1) for t in tokens]  # type: ignore[union-attr]
    elif kind != "choice" and re.fullmatch(r"[A-Za-z]{2,}", s):
        letters = list(s)  # "CAB"
    letters = [c.upper() for c in letters]
    if not letters or not all(c.isalpha() for c in letters):
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


# ----------------------------------------------------------------------------- option answers
class NoSuchOption(AnswerFormatError):
    """An option letter or number that names no option shown ("there is no option F; the options are A–D")."""


_LABEL = r"\(?\[?([a-z]|\d{1,2})\]?\)?"  # b, (b), b), [b], 2, (2)
_LEAD = re.compile(r"^\s*(?:(?:i\s+(?:think|choose|pick|go\s+with)|i'd\s+say|i\s+would\s+say)\s*:?\s+(?:it'?s\s+)?)?"
                   r"(?:(?:(?:my|the)\s+)?(?:final\s+)?(?:answer|choice|options?)\s*(?:is|are|:|=|-)?\s*)?", re.I)
_TOKEN = re.compile(r"^(?:option\s+)?" + _LABEL + r"[.:]?$", re.I)
_SEPARATORS = re.compile(r"\s*(?:,|;|/|&|\+|\band\b|\bthen\b|->|=>|→|>|\s-\s|-|\s)\s*", re.I)
_PASTED = re.compile(r"^\s*(?:option\s+)?\(?\[?([a-z]|\d{1,2})\]?(?:[.):]\s+|\s+[-–—:]\s+|\)\s*|,?\s+(?=(?:because|since|as)\b))"
                     r"(\S.*)$", re.I | re.S)
_ACCEPT, _MARGIN, _UNSURE = 0.85, 0.1, 0.6  # text close enough to one option, ahead of the next, or worth asking


def _option_text(text: str) -> str:
    """Option text reduced to what tells options apart: lower case, compatibility forms (v₁ -> v1, Kᵀ -> kt),
    operators and digits kept, spaces, underscores and other punctuation dropped."""
    s = unicodedata.normalize("NFKC", text).lower()
    s = s.replace("−", "-").replace("·", "*").replace("×", "*").replace("∙", "*").replace("√", "sqrt")
    s = re.sub(r"(?<!\d)\.|\.(?!\d)", "", s)  # a full stop, not a decimal point
    return re.sub(r"[^a-z0-9+\-*/=<>^.%≈]", "", s)


_STOP = frozenset("a an the of to is are be it its this that so and or by in on for with as at from into than "
                  "then each every one which what when will would does do".split())
_NEGATION = frozenset("not no never cannot nothing none without".split())
_NUMBER_WORDS = {"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
                 "seven": "7", "eight": "8", "nine": "9", "ten": "10"}


def _words(text: str) -> tuple[set[str], int]:
    """The content words of ``text`` (lower case, number words as digits, a plural s dropped, little words and
    single characters left out) and how many times it negates (not, no, never, n't, ..., a typo in the longer
    ones included)."""
    s = unicodedata.normalize("NFKC", text).lower().replace("n't", " not").replace("√", "sqrt ")
    tokens = re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", s.replace("_", ""))
    tokens = [_NUMBER_WORDS.get(t, t) for t in tokens]
    negations = sum(t in _NEGATION or (len(t) >= 5 and bool(difflib.get_close_matches(t, _NEGATION, 1, 0.8)))
                    for t in tokens)
    words = {t[:-1] if len(t) > 3 and t.endswith("s") and not t.endswith("ss") else t for t in tokens if len(t) > 1}
    return words - _STOP - _NEGATION, negations


def _partial(a: str, o: str) -> float:
    """How well ``a`` matches its best-aligned stretch of the longer ``o`` (1.0: ``a`` is a stretch of ``o``)."""
    if len(a) >= len(o):
        return difflib.SequenceMatcher(None, a, o).ratio()
    best = 0.0
    for block in difflib.SequenceMatcher(None, a, o, autojunk=False).get_matching_blocks():
        start = max(0, min(block.b - block.a, len(o) - len(a)))
        best = max(best, difflib.SequenceMatcher(None, a, o[start:start + len(a)]).ratio())
    return best


def _text_scores(piece: str, options: Sequence[str]) -> list[float]:
    """How closely ``piece`` reads as each option's text (1.0: the same text once normalised): the same
    characters (typos allowed), an exact part of it, or all its words in another order; at most "unsure" when
    one negates and the other does not."""
    a = _option_text(piece)
    words, negates = _words(piece)
    out = []
    for text in options:
        o = _option_text(text)
        if not a or not o:
            out.append(0.0)
            continue
        if a == o:
            out.append(1.0)
            continue
        score = difflib.SequenceMatcher(None, a, o).ratio()
        if len(a) >= 6 and a in o:  # a part of the option's text, exactly
            score = max(score, 0.99)
        elif len(a) >= 12 and len(a) >= 0.4 * len(o):  # a good part of the option, with typos
            score = max(score, 0.9 * _partial(a, o))
        option_words, option_negates = _words(text)
        if negates != option_negates and not (len(a) >= 6 and a in o):
            score = min(score, _UNSURE)  # "not" where the option affirms (or the reverse): never read as it
        elif len(words) >= 4 and len(words & option_words) >= 0.5 * len(option_words):
            score = max(score, 0.9 * len(words & option_words) / len(words))  # its words in another order
        out.append(score)
    return out


def _letter_range(n: int) -> str:
    return f"A–{chr(64 + n)}" if n > 1 else "A"


def _index(label: str, options: Sequence[str]) -> int:
    """The option a letter or a number names (0-based). Raises NoSuchOption."""
    n = len(options)
    if label.isdigit():
        if not 1 <= int(label) <= n:
            raise NoSuchOption(f"There is no option {label}: the options are numbered 1–{n} "
                               f"(letters {_letter_range(n)}). Nothing was recorded.")
        return int(label) - 1
    i = ord(label.upper()) - 65
    if not 0 <= i < n:
        raise NoSuchOption(f"There is no option {label.upper()}: the options are {_letter_range(n)}. "
                           "Nothing was recorded.")
    return i


def _valued(options: Sequence[str]) -> dict[str, int]:
    """Options that are values, every one starting with its own number ("64 = d_model / n_heads", "512 =
    d_model", ...): that number -> the option; {} for other options (then a number is the option's number)."""
    out = {}
    for i, text in enumerate(options):
        m = re.match(r"\s*(\d+(?:\.\d+)?)(?![\d.])", text)
        if not m or m.group(1) in out:
            return {}
        out[m.group(1)] = i
    return out


def _labels(text: str, kind: str, options: Sequence[str]) -> list[int] | None:
    """The options named by letters or numbers alone ("b", "(B)", "A, C", "C → A → B", "CAB", "2"), or None
    when ``text`` is not made of option labels only."""
    s = re.sub(r"[\[\]{}'\"]", " ", _LEAD.sub("", text.strip())).strip().strip(".!")
    valued = {} if re.match(r"\s*option\b", text, re.I) else _valued(options)  # "option 1" is the first
    if valued and re.fullmatch(r"\d+(?:\.\d+)?", s):  # options that are values: "64" is the value 64
        if s in valued:
            return [valued[s]]
        raise NoSuchOption(f"No option has the value {s}: answer with the letter of the option you mean "
                           f"({_letter_range(len(options))}). Nothing was recorded.")
    tokens = [t for t in _SEPARATORS.split(s) if t]
    if tokens and all(_TOKEN.match(t) for t in tokens):
        labels = [_TOKEN.match(t).group(1) for t in tokens]  # type: ignore[union-attr]
        if len({lab.isdigit() for lab in labels}) > 1:
            raise AnswerFormatError(f"{text!r} mixes option letters and numbers: answer with the letters, "
                                    "e.g. A, C.")
        return [_index(lab, options) for lab in labels]
    compact = re.sub(r"[\s,;()\[\]]", "", s)
    if kind != "choice" and re.fullmatch(r"[A-Za-z]{2,}", compact) and len(set(compact.lower())) == len(compact) \
            and len(compact) <= len(options) and " " not in s.strip():  # "CAB", "ac"
        return [_index(c, options) for c in compact]
    return None


def _one_option(piece: str, options: Sequence[str]) -> int | None:
    """The option ``piece`` names: its label, its text (close enough, and clearly closer than any other option's),
    or a pasted label with its text that agree. None: no option reads like it. Raises AnswerFormatError when
    it could be two options."""
    piece = _LEAD.sub("", piece.strip()).strip() or piece
    pasted = _PASTED.match(piece)
    if pasted and len(pasted.group(2).strip()) >= 3:
        label = _index(pasted.group(1), options)
        scores = _text_scores(pasted.group(2), options)
        best = max(range(len(options)), key=scores.__getitem__)
        if best != label and scores[best] >= _UNSURE and scores[best] - scores[label] >= _MARGIN:
            raise AnswerFormatError(f"{piece!r} names option {chr(65 + label)} but its text reads like option "
                                    f"{chr(65 + best)}: answer with the one letter you mean. Nothing was recorded.")
        return label
    scores = _text_scores(piece, options)
    ranked = sorted(range(len(options)), key=scores.__getitem__, reverse=True)
    best = ranked[0]
    second = scores[ranked[1]] if len(ranked) > 1 else 0.0
    if scores[best] >= _ACCEPT and scores[best] - second >= _MARGIN:
        return best
    if scores[best] >= _UNSURE:
        close = [chr(65 + i) for i in ranked if scores[i] >= _UNSURE and scores[best] - scores[i] < 2 * _MARGIN]
        which = (" or ".join(close) if len(close) > 1 else close[0])
        raise AnswerFormatError(f"I could not tell which option {piece!r} is (it reads a little like {which}): "
                                "answer with the option's letter. Nothing was recorded.")
    return None


def read_options(answer: Any, kind: str, options: Sequence[str]) -> Any:
    """The option(s) an answer to a concept item names, read as a tutor reads them.

    ``options`` are the texts shown as A, B, C, ... An option is named by its letter alone (``"b"``, ``"(B)"``,
    ``"B)"``, ``"Option B"``), its number counted from 1 (``"2"``; for options that are values, ``"64"`` is
    the option reading 64), or its text, typed or pasted (with or without its label), exactly or closely
    (normalised, a few typos, most of it), clearly closer to it than to any other option. Several options:
    ``"A, C"``, ``"ca"``, ``"C → A → B"``, ``"3 1 2"``, or one text per line / separated by ``;``. A letter
    inside other words (the article "a", the d of d_model) never counts as an option letter.

    Returns what :func:`parse` returns for ``kind``: a letter (choice), sorted letters (choices), letters in
    order (order).
    Raises:
        NoSuchOption: a letter or number that names no option shown (nothing should be charged).
        AnswerFormatError: no option reads like the answer, or it could be two (say which by letter).
    """
    if isinstance(answer, (list, tuple, set, frozenset)):
        items = sorted(map(str, answer)) if isinstance(answer, (set, frozenset)) else [str(a) for a in answer]
        text = "\n".join(items)
    else:
        text = str(answer)
    if not _LEAD.sub("", text.strip()).strip():
        raise AnswerFormatError("The answer is empty: answer with the option letter(s), e.g. B"
                                + (" or A, C." if kind == "choices" else " or C A B." if kind == "order" else "."))
    chosen = _labels(text, kind, options)
    if chosen is None:
        chosen = _texts(text, kind, options)
    if chosen is None:
        how = {"choice": "one option letter (e.g. B), its number or its text",
               "choices": "the letters of every option that applies (e.g. A, C) or their texts, one per line",
               "order": "the letters in order (e.g. C A B D) or the texts, one per line"}[kind]
        raise AnswerFormatError(f"I could not match {text!r} to any option: answer with {how}. "
                                "Nothing was recorded.")
    letters = [chr(65 + i) for i in chosen]
    if kind == "choice":
        if len(letters) != 1:
            raise AnswerFormatError(f"Give exactly one option (you gave {len(letters)}: {', '.join(letters)}). "
                                    "Nothing was recorded.")
        return letters[0]
    if kind == "order":
        if len(set(letters)) != len(letters):
            raise AnswerFormatError("Each option appears once in an order; you repeated one: " + " ".join(letters))
        return letters
    return sorted(set(letters))


def _texts(text: str, kind: str, options: Sequence[str]) -> list[int] | None:
    """Options named by their texts: one text, or (choices, order) several, one per line or separated by ';'
    (else by commas or 'and', when every part reads as an option)."""
    if kind != "choice":
        for splitter in (r"\s*[\n;]\s*", r"\s*(?:,|\band\b|→|->)\s*"):
            parts = [p for p in re.split(splitter, text) if p.strip()]
            if len(parts) < 2:
                continue
            try:
                found = [_one_option(p, options) for p in parts]
            except AnswerFormatError:
                if splitter.startswith(r"\s*[\n"):
                    raise
                continue
            if all(f is not None for f in found):
                return found  # type: ignore[return-value]
            if splitter.startswith(r"\s*[\n"):
                return None
    one = _one_option(text, options)
    return None if one is None else [one]


_GROUPED = re.compile(r"\s*-?\d{1,3}(?:[ \u00a0\u2009\u202f']\d{3})+\s*")  # 12 288, 12'288 (thin spaces too)
_APPROX = re.compile(r"^\s*(?:≈|~|=|about|approx(?:\.|imately)?)\s*", re.I)  # ≈ 0.73, about 0.73
_UNIT = re.compile(r"(?<=[\d)])\s*(?:bytes?|B|parameters|params|FLOPs?|flops|nats?)\s*\.?\s*$")  # 12288 bytes
_ARITH = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
          ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b}
_FUNCTIONS = {"sqrt": math.sqrt, "exp": math.exp, "ln": math.log, "log2": math.log2, "log10": math.log10,
              "sin": math.sin, "cos": math.cos}


_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
# a mantissa whose left neighbour binds no tighter than "*" (not a power, a quotient or another number), and an
# exponent not raised again: "10**64*10**64" and "1/4*10^6" keep their precedence
_TIMES_TEN = re.compile(r"(?<![\w.)\]*/^])(?<![\w.)\]*/^]\s)(\d(?:\d*\.\d+|\d*))\s*(?:\*|x|×|·|⋅)\s*10\s*"
                        r"(?:\^|\*\*)\s*\(?\s*([-+−]?\d+)\s*\)?(?![\d.])(?!\s*(?:\^|\*\*))")
_COMMA_THREE = re.compile(r"([-+]?)([1-9]\d{0,2}),(\d{3})")  # 3,258: thousands or a decimal comma
_DECIMAL_COMMA = re.compile(r"[-+]?\d+,\d+")  # 0,5 3,25 1234,5: a decimal comma
_EURO = re.compile(r"[-+]?\d{1,3}(?:\.\d{3})+,\d+")  # 1.234,5


def _scientific(text: str) -> str:
    """``4.129024*10^6``, ``4.129024 × 10^6``, ``4.129024·10⁶`` -> ``4.129024e6`` (read exactly, as Python reads
    a float literal, so an exact count written this way is a whole number)."""
    s = re.sub(r"10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+)", lambda m: "10^" + m.group(1).translate(_SUPERSCRIPT), text)
    return _TIMES_TEN.sub(lambda m: f"{m.group(1)}e{m.group(2).replace('−', '-')}", s)


def read_decimal_comma(text: str, kind: str, expected: Any = None) -> str:
    """``text`` with a decimal comma read as a tutor reads it: ``0,5``, ``3,25``, ``1.234,5`` are decimals; a comma
    before exactly three digits (``3,258``) is a thousands separator in a count (kind ``int``) and, for a value
    (kind ``number``), whichever reading lies within a factor of 10 of ``expected`` while the other does not.
    Other text is returned unchanged.

    Raises:
        AnswerFormatError: ``3,258`` where both readings are as plausible (or nothing is expected): it asks for
            3.258 or 3258.
    """
    core = _UNIT.sub("", _APPROX.sub("", text)).strip().rstrip(".").strip()
    if _EURO.fullmatch(core):
        return core.replace(".", "").replace(",", ".")
    m = _COMMA_THREE.fullmatch(core)
    if m:
        if kind == "int":
            return core
        as_decimal, as_count = float(f"{m[1]}{m[2]}.{m[3]}"), float(f"{m[1]}{m[2]}{m[3]}")
        try:
            want = abs(float(expected)) if expected is not None else None
        except (TypeError, ValueError):
            want = None
        if want is not None and want > 0:
            far_decimal = abs(math.log10(abs(as_decimal) / want))
            far_count = abs(math.log10(abs(as_count) / want))
            if far_decimal + 1 <= far_count:
                return f"{m[1]}{m[2]}.{m[3]}"
            if far_count + 1 <= far_decimal:
                return core.replace(",", "")
        raise AnswerFormatError(f"{core!r} could be {m[1]}{m[2]}.{m[3]} (a decimal comma) or {m[1]}{m[2]}{m[3]} "
                                "(a thousands separator): type it with a decimal point, or without the comma. "
                                "Nothing was recorded.")
    if _DECIMAL_COMMA.fullmatch(core) and not re.fullmatch(r"[-+]?[1-9]\d{0,2}(,\d{3})+", core):
        return core.replace(",", ".")
    return text


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
        answer = _scientific(answer)
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
        near = expected if kind in ("number", "int") else None  # how a decimal comma is read
        return compare(expected, parse(answer, kind, expected=near), kind, decimals) is None
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
