"""Typed arithmetic is evaluated under the bounds of ``attnlab.practice.arithmetic``: adversarial text of each
kind (nested powers, long digit strings, deep brackets, huge factors, huge repetition) ends at once as an
answer-format error in words, never as minutes of work or another exception; honest calculator text still
reads as before."""
import time

import pytest

from attnlab.practice.answers import AnswerFormatError, parse
from attnlab.practice.arithmetic import MAX_CHARS, MAX_DEPTH, MAX_NODES, ArithmeticBoundError, power

#: (what it attacks, text, kind, words the message must hold)
ADVERSARIAL = [
    ("nested powers", "((9**64)**64)**64", "int", "larger than 1.8e308"),
    ("nested powers, calculator", "((9^64)^64)^64", "number", "larger than 1.8e308"),
    ("tower of powers", "9^9^9", "int", "power above 64"),
    ("product past the float range", "*".join(["10**64"] * 5), "int", "larger than 1.8e308"),
    ("big base, small exponent", "99999999999**30", "int", "larger than 1.8e308"),
    ("long digit string", "9" * 4000, "int", "more than 320 digits"),
    ("long digit string in a sum", "9" * 309 + "+" + "9" * 309, "int", "larger than 1.8e308"),
    ("long digit string in a matrix", "[[" + "9" * 4000 + ", 1]]", "matrix", "more than 320 digits"),
    ("huge factors", "*".join(["9" * 300] * 6), "int", "larger than 1.8e308"),
    ("huge quotient", "9" * 310 + "/1", "number", "larger than 1.8e308"),
    ("exp past the float range", "exp(1000)", "number", "larger than 1.8e308"),
    ("deep brackets", "(1+" * 300 + "1" + ")" * 300, "int", "Could not read"),
    ("deep signs", "-" * 500 + "1+1", "int", "nested more than"),
    ("long expression", "+".join(["1"] * 1500), "int", f"over the {MAX_CHARS:,}"),
    ("huge repetition", "1+" * 20_000 + "1", "int", f"over the {MAX_CHARS:,}"),
    ("huge text", "1 " * 40_000, "vector", "over the 50,000"),
]


@pytest.mark.parametrize("what, text, kind, words", ADVERSARIAL, ids=[a[0] for a in ADVERSARIAL])
def test_adversarial_text_ends_at_once_in_words(what, text, kind, words):
    start = time.perf_counter()
    with pytest.raises(AnswerFormatError) as err:
        parse(text, kind)
    took = time.perf_counter() - start
    assert words in str(err.value), (what, str(err.value))
    assert "Error" not in str(err.value), str(err.value)  # words, not an exception's name
    assert took < 0.5, f"{what}: {took:.3f} s"  # the bounds make each of these microseconds to milliseconds


@pytest.mark.parametrize("text, kind, value", [
    ("4*96^2 + 4*96", "int", 37248), ("2**10", "int", 1024), ("2^64", "int", 2 ** 64), ("√64", "number", 8.0),
    ("(((1+2)*3)-4)/5", "number", 1.0), ("1e308", "number", 1e308), ("-2**0.5", "number", -(2 ** 0.5)),
    ("0.5^64", "number", 0.5 ** 64), ("2^-3", "number", 0.125), ("9" * 300, "int", int("9" * 300)),
    ("+".join(["1"] * 150), "int", 150), ("(1+" * 150 + "1" + ")" * 150, "int", 151),
    ("2*" + "(" * 150 + "2" + ")" * 150, "int", 4),
])
def test_honest_calculator_text_still_reads(text, kind, value):
    assert parse(text, kind) == pytest.approx(value)


def test_power_is_refused_before_it_is_computed():
    """A power whose result would pass 1.8e308 is refused from its size alone: the refusal of
    (10**300)**64, which Python would compute exactly as a 19 200-digit int, takes no time."""
    start = time.perf_counter()
    for _ in range(1000):
        with pytest.raises(ArithmeticBoundError, match="larger than 1.8e308"):
            power(10 ** 300, 64)
    assert time.perf_counter() - start < 0.5
    assert power(2, 64) == 2 ** 64 and power(0.5, 64) == 0.5 ** 64
    with pytest.raises(ArithmeticBoundError, match="not a real number"):
        power(-8, 1 / 3)


def test_bounds_are_stated_values():
    assert (MAX_CHARS, MAX_NODES, MAX_DEPTH) == (2_000, 5_000, 200)
