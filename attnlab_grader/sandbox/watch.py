"""The run-time watch of student code in the sandbox, and what the grader's steps hold on to.

* :data:`PREAMBLE`: what the student's cells find already imported (as in the notebook's setup cell).
* :func:`make_plain`: turns a student's return value into plain JSON data through references taken
  before any student code runs.
* :func:`library_snapshot` / :func:`library_changes`: which library attributes student code
  replaced or deleted.
* :func:`make_watch`: the dispatch mode and profiler that record every forbidden library operation
  as it runs.

Loaded into the zygote as source text (:mod:`attnlab_grader.sandbox.zygote`) and imported by the
grader's in-process runs (QA tests) from here: one home.  Imports nothing from the course.
"""
from __future__ import annotations

#: What the student's cells find already imported (as in the notebook's setup cell).
PREAMBLE = ("import math\nimport numpy as np\nimport torch\nimport torch.nn as nn\n"
            "import torch.nn.functional as F\nfrom torch import Tensor\n"
            "from typing import Any, Callable, Optional, Sequence\n")


def make_plain():
    """``_plain`` bound to references taken *now* (before any student code runs): replacing
    ``torch.Tensor.detach``/``tolist``/``to`` or ``numpy.asarray`` later changes nothing here."""
    import numpy as np
    import torch
    refs = {"detach": torch.Tensor.detach, "to": torch.Tensor.to, "tolist": torch.Tensor.tolist,
            "f64": torch.float64, "asarray": np.asarray, "ndtolist": np.ndarray.tolist, "Tensor": torch.Tensor,
            "ndarray": np.ndarray, "np_scalars": (np.floating, np.integer, np.bool_), "np_int": np.integer,
            "type": type, "isinstance": isinstance, "float": float, "str": str, "list": list, "tuple": tuple,
            "dict": dict, "int": int, "bool": bool, "TypeError": TypeError}

    def _plain(obj, depth=0, r=refs):
        """Turn a student's return value into JSON-safe plain Python values.

        Only exact ``torch.Tensor``/``numpy.ndarray``/scalar/list/tuple/dict types are accepted;
        subclasses (e.g. an ndarray whose ``==`` is always true) are reported, not converted.
        """
        if depth > 8:
            raise r["TypeError"]("value nested too deeply")
        t = r["type"](obj)
        if obj is None or t is r["bool"] or t is r["str"]:
            return obj
        if t is r["int"] or t is r["float"]:
            return {"__scalar__": r["float"](obj), "int": t is r["int"]}
        if t is r["Tensor"]:
            a = r["to"](r["detach"](obj), "cpu")
            return {"__array__": r["tolist"](r["to"](a, r["f64"])), "shape": r["list"](a.shape),
                    "dtype": r["str"](a.dtype)}
        if t is r["ndarray"]:
            return {"__array__": r["ndtolist"](r["asarray"](obj, dtype="float64")),
                    "shape": r["list"](obj.shape), "dtype": r["str"](obj.dtype)}
        if r["isinstance"](obj, r["np_scalars"]) and t.__module__ == "numpy":
            return {"__scalar__": r["float"](obj), "int": r["isinstance"](obj, r["np_int"])}
        if t is r["list"] or t is r["tuple"]:
            return {"__seq__": [_plain(x, depth + 1) for x in obj], "tuple": t is r["tuple"]}
        if t is r["dict"]:
            return {"__dict__": {r["str"](k): _plain(v, depth + 1) for k, v in obj.items()}}
        return {"__unsupported__": f"{t.__module__}.{t.__qualname__}",
                "subclass_of": [b.__module__ + "." + b.__qualname__ for b in t.__mro__[1:3]]}

    return _plain


def library_snapshot():
    """``{name: value}`` of every attribute of the library objects the grader's steps and the
    student's code share (``torch``, ``torch.Tensor``, ``torch.nn.functional``, every class of
    ``torch.nn`` and ``torch.optim``, ``numpy``, ``math``, ``builtins``), taken before student code
    runs; :func:`library_changes` lists what was replaced or deleted since."""
    import builtins
    import math
    import numpy as np
    import torch
    import torch.nn.functional as F
    owners = [("torch", torch), ("torch.Tensor", torch.Tensor), ("torch.nn.functional", F), ("torch.nn", torch.nn),
              ("numpy", np), ("math", math), ("builtins", builtins), ("torch.optim", torch.optim),
              ("torch.linalg", torch.linalg), ("torch.autograd", torch.autograd)]
    for mod_name, mod in (("torch.nn", torch.nn), ("torch.optim", torch.optim)):
        owners += [(f"{mod_name}.{k}", v) for k, v in list(vars(mod).items()) if isinstance(v, type)]
    snap = {}
    for label, owner in owners:
        for key, value in list(vars(owner).items()):
            snap[(label, key)] = (owner, value)
    return snap


def library_changes(snap):
    """Names of library attributes replaced or deleted since :func:`library_snapshot` (at most 5)."""
    missing = object()
    out = []
    for (label, key), (owner, value) in snap.items():
        now = vars(owner).get(key, missing)
        if now is not value:
            out.append(f"{label}.{key}")
            if len(out) >= 5:
                break
    return out


def make_watch(forbid, record):
    """``(watch, profile)`` for a check that forbids the library operations ``forbid`` (substrings
    of an operation's name, e.g. ``"aten._softmax"``): ``watch()`` is a context manager (a
    ``TorchDispatchMode``) and ``profile`` a ``sys.setprofile`` function; both call ``record(name)``
    for every forbidden operation *when it runs*.  Composite operations (e.g.
    ``aten._scaled_dot_product_attention_math``) decompose before the dispatch mode sees them, so
    the profiler also watches Python-level calls of builtins and of ``torch.ops``.  With nothing
    forbidden, ``(contextlib.nullcontext, None)``: nothing to record, and a training run would be
    about twice as slow under a watch."""
    import contextlib
    forbid = tuple(forbid)
    if not forbid:
        return contextlib.nullcontext, None
    from torch.utils._python_dispatch import TorchDispatchMode

    class _Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = str(func)
            if any(f in name for f in forbid):
                record(name)
            return func(*args, **(kwargs or {}))

    def _profile(frame, event, arg):
        name = None
        if event == "c_call":
            name = getattr(arg, "__qualname__", None) or getattr(arg, "__name__", "")
        elif event == "call" and frame.f_code.co_name == "__call__" and frame.f_code.co_filename.endswith("_ops.py"):
            name = str(frame.f_locals.get("self", ""))
        if name and any(f in name for f in forbid):
            record(name)

    return _Watch, _profile
