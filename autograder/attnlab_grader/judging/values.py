"""The values that cross the sandbox's boundary, and how the grader compares them.

Inputs drawn in the grader are encoded for the sandbox (:func:`encode`, decoded there by
:data:`DECODE`); the plain values the sandbox sends back are decoded here (:func:`decode`) and
compared with the reference (:func:`compare_values`), whose message carries its
:mod:`attnlab_grader.judging.verdict` kind (:class:`Mismatch`).  A check's own judgement is a
:class:`attnlab_grader.judging.verdict.Verdict`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from attnlab_grader.judging import verdict as V

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
    """Decode a sandbox value (see ``attnlab_grader.sandbox.watch.make_plain``) into numpy arrays / Python values.

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
    """A comparison's message (a ``str``) that also carries its :mod:`attnlab_grader.judging.verdict` kind."""

    kind: V.Kind = V.WRONG_VALUES


def _mm(message: str, kind: V.Kind) -> Mismatch:
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


def nested_too_deeply(err: BaseException) -> bool:
    """Whether ``err`` is a ``RecursionError`` (a value nested too deeply to decode or compare) or was raised
    while handling one (its ``__cause__``/``__context__`` chain): read from the exception classes, never from
    the message."""
    seen: set[int] = set()
    cur: BaseException | None = err
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, RecursionError):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False
