"""Arithmetic a learner typed, evaluated under stated bounds.

A by-hand answer may be arithmetic between numbers (``1/3``, ``4*96^2 + 4*96``, ``-2**0.5``): what a
learner writes with a pen or a calculator.  Python's own integer arithmetic is exact and unbounded, so
``9**64**64``-style text would cost minutes and gigabytes.  Every evaluation here is bounded *before*
it is done, so its cost is small and fixed by the size of the text:

===============================  =====================================================================
bound                            value
===============================  =====================================================================
characters of typed text         :data:`MAX_TEXT_CHARS` (50 000), at most :data:`MAX_DIGITS` (320)
                                 digits in a row
characters of one expression     :data:`MAX_CHARS` (2 000)
syntax elements of one answer    :data:`MAX_NODES` (5 000: numbers, operators, brackets' contents)
nesting depth                    :data:`MAX_DEPTH` (200 levels: nested operations, or a chain of them)
every number and partial result  a finite real with magnitude at most :data:`MAX_MAGNITUDE`
                                 (1.8e308, the largest float): ints of at most 1 024 bits
an exponent                      at most :data:`MAX_EXPONENT` (64) in magnitude, and a power is
                                 refused *before* it is computed when its result would pass
                                 :data:`MAX_MAGNITUDE`
===============================  =====================================================================

With every operand at most 1 024 bits, each operation costs microseconds, so one answer costs at most
``MAX_NODES`` such operations (``tests/practice/test_arithmetic_bounds.py`` asserts that each adversarial kind
ends in under 0.5 s).  Past a bound, :class:`ArithmeticBoundError` says in words what was too large and what
to type instead.
"""
from __future__ import annotations

import ast
import math
import sys
from typing import Any, Callable, Mapping

#: characters of one typed answer (a matrix written as text); what the grader reads is at most an answer cell
MAX_TEXT_CHARS = 50_000
#: digits in a row in typed text: more is a number past 1e308 (or a fraction no answer needs)
MAX_DIGITS = 320
#: characters of one typed expression (a number answer); a matrix answer is many expressions
MAX_CHARS = 2_000
#: syntax elements (AST nodes) of one answer
MAX_NODES = 5_000
#: nesting depth of operators, brackets and calls in one answer
MAX_DEPTH = 200
#: magnitude of every number and every partial result: the largest finite float (about 1.8e308)
MAX_MAGNITUDE = sys.float_info.max
#: magnitude of an exponent
MAX_EXPONENT = 64

_MAX_INT = int(MAX_MAGNITUDE)
_LOG2_MAX = math.log2(MAX_MAGNITUDE)  # 1024

#: the operators of a pen's arithmetic (``//`` and ``%`` are allowed where a caller asks for them)
BASIC_OPS: Mapping[Any, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b}
INTEGER_OPS: Mapping[Any, Callable[[Any, Any], Any]] = {
    ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}


class ArithmeticBoundError(ValueError):
    """Arithmetic whose value cannot be an answer: past a bound of this module, a division by zero,
    a value that is not a finite real, or a function outside its domain.  ``str(err)`` is a phrase
    that completes "this answer holds ..." (e.g. ``"a number larger than 1.8e308"``)."""


class NotArithmetic(ValueError):
    """Text or syntax that is not arithmetic between numbers (names, calls outside the allowed
    functions, other operators): code, or another kind of answer."""


def check_size(tree: ast.AST) -> None:
    """Refuse ``tree`` (an answer's syntax tree) past :data:`MAX_NODES` elements or :data:`MAX_DEPTH`
    levels, iteratively (a deep tree never exhausts the Python stack here).

    Raises:
        ArithmeticBoundError: too many elements or too deep, with the bound in words."""
    count = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise ArithmeticBoundError(f"more than {MAX_NODES:,} numbers and operators")
        if depth > MAX_DEPTH:
            raise ArithmeticBoundError(f"arithmetic nested more than {MAX_DEPTH} levels deep (or a chain of more "
                                       f"than {MAX_DEPTH} operations)")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def bounded(value: Any) -> float | int:
    """``value`` (an int or float partial result) when it is a finite real number of magnitude at
    most :data:`MAX_MAGNITUDE`.

    Raises:
        ArithmeticBoundError: complex, infinite, NaN, or larger than :data:`MAX_MAGNITUDE`."""
    if isinstance(value, complex):
        raise ArithmeticBoundError("a value that is not a real number (a root of a negative number)")
    if isinstance(value, int):
        if -_MAX_INT <= value <= _MAX_INT:
            return value
        raise ArithmeticBoundError("a number larger than 1.8e308, too large to be an answer")
    if not math.isfinite(value):
        raise ArithmeticBoundError("a value that is not a finite real number")
    return value


def power(base: float | int, exponent: float | int) -> float | int:
    """``base ** exponent``, refused before it is computed when the exponent passes
    :data:`MAX_EXPONENT` or the result would pass :data:`MAX_MAGNITUDE`.

    Raises:
        ArithmeticBoundError: past a bound, ``0`` to a negative power, or a complex result."""
    if abs(exponent) > MAX_EXPONENT:
        raise ArithmeticBoundError(f"a power above {MAX_EXPONENT}, too large to be an answer")
    if base != 0 and exponent > 0 and math.log2(abs(base)) * exponent > _LOG2_MAX:
        raise ArithmeticBoundError("a power larger than 1.8e308, too large to be an answer")
    try:
        return bounded(base ** exponent)
    except ZeroDivisionError:
        raise ArithmeticBoundError("a part that divides by zero (0 to a negative power)") from None
    except OverflowError:
        raise ArithmeticBoundError("a power larger than 1.8e308, too large to be an answer") from None


def evaluate(node: ast.AST, *, ops: Mapping[Any, Callable[[Any, Any], Any]] = BASIC_OPS,
             functions: Mapping[str, Callable[[float], float]] | None = None) -> float | int:
    """The value of ``node`` (an ``ast`` expression: numbers, ``+ - * /`` and ``**``, the operators in
    ``ops``, unary signs, and one-argument calls of ``functions`` by name), every partial result
    bounded (:func:`bounded`, :func:`power`).  The caller bounds the tree first (:func:`check_size`);
    the recursion depth is then at most :data:`MAX_DEPTH`.

    Raises:
        NotArithmetic: anything else (a name, a string, another operator or call).
        ArithmeticBoundError: a bound passed, a division by zero, a function outside its domain."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return bounded(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = evaluate(node.operand, ops=ops, functions=functions)
        return -inner if isinstance(node.op, ast.USub) else inner
    if (functions and isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in functions and len(node.args) == 1 and not node.keywords):
        arg = evaluate(node.args[0], ops=ops, functions=functions)
        try:
            return bounded(functions[node.func.id](arg))
        except OverflowError:
            raise ArithmeticBoundError(f"{node.func.id}(...) larger than 1.8e308, too large to be an answer") from None
        except ValueError:
            raise ArithmeticBoundError(f"{node.func.id}(...) of a value where {node.func.id} is not defined there") from None
    if isinstance(node, ast.BinOp) and type(node.op) in ops:
        left = evaluate(node.left, ops=ops, functions=functions)
        right = evaluate(node.right, ops=ops, functions=functions)
        if isinstance(node.op, ast.Pow):
            return power(left, right)
        try:  # operands are at most 1 024 bits: each operation costs microseconds
            return bounded(ops[type(node.op)](left, right))
        except ZeroDivisionError:
            raise ArithmeticBoundError("a part that divides by zero") from None
        except OverflowError:  # an int quotient beyond the float range
            raise ArithmeticBoundError("a number larger than 1.8e308, too large to be an answer") from None
    raise NotArithmetic("not arithmetic between numbers")


__all__ = ["MAX_TEXT_CHARS", "MAX_DIGITS", "MAX_CHARS", "MAX_NODES", "MAX_DEPTH", "MAX_MAGNITUDE", "MAX_EXPONENT", "BASIC_OPS", "INTEGER_OPS",
           "ArithmeticBoundError", "NotArithmetic", "check_size", "bounded", "power", "evaluate"]
