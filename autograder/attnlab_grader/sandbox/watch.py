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
    ``torch.Tensor.detach``/``tolist``/``to``/``shape``/``dtype`` or ``numpy.asarray`` later changes
    nothing here, and no method of the student's objects is looked up on the object (a class's
    ``__module__`` or a dict key cannot run student code while its value is turned into data)."""
    import numpy as np
    import torch
    np_types = {t for t in set(np.sctypeDict.values()) if isinstance(t, type) and issubclass(t, np.generic)
                and issubclass(t, (np.floating, np.integer, np.bool_))}
    refs = {"detach": torch.Tensor.detach, "to": torch.Tensor.to, "tolist": torch.Tensor.tolist,
            "size": torch.Tensor.size, "dtype": torch.Tensor.dtype.__get__,
            "f64": torch.float64, "asarray": np.asarray, "ndtolist": np.ndarray.tolist, "Tensor": torch.Tensor,
            "ndarray": np.ndarray, "ndshape": np.ndarray.shape.__get__, "nddtype": np.ndarray.dtype.__get__,
            "np_scalars": frozenset(np_types), "np_int": np.integer, "np_bool": np.bool_,
            "issubclass": issubclass, "type_repr": type.__repr__, "mro": type.__dict__["__mro__"].__get__,
            "type": type, "float": float, "str": str, "list": list, "tuple": tuple, "len": len,
            "dict": dict, "int": int, "bool": bool, "TypeError": TypeError, "items": dict.items,
            "strstr": str.__str__}

    def _name(t, r=refs):  # "<class 'mod.Qual'>" -> "mod.Qual", without running the class's code
        text = r["type_repr"](t)
        return text[8:-2] if text.startswith("<class '") and text.endswith("'>") else text

    def _plain(obj, depth=0, r=refs):
        """Turn a student's return value into JSON-safe plain Python values.

        Only exact ``torch.Tensor``/``numpy.ndarray``/scalar/list/tuple/dict types are accepted
        (dict keys: exact ``str``/``int``/``bool``); subclasses (e.g. an ndarray whose ``==`` is
        always true) are reported, not converted.
        """
        if depth > 8:
            raise r["TypeError"]("value nested too deeply")
        t = r["type"](obj)
        if obj is None or t is r["bool"]:
            return obj
        if t is r["str"]:
            return r["strstr"](obj)
        if t is r["int"] or t is r["float"]:
            return {"__scalar__": r["float"](obj), "int": t is r["int"]}
        if t is r["Tensor"]:
            a = r["to"](r["detach"](obj), "cpu")
            return {"__array__": r["tolist"](r["to"](a, r["f64"])), "shape": r["list"](r["size"](a)),
                    "dtype": r["str"](r["dtype"](a))}
        if t is r["ndarray"]:
            return {"__array__": r["ndtolist"](r["asarray"](obj, dtype="float64")),
                    "shape": r["list"](r["ndshape"](obj)), "dtype": r["str"](r["nddtype"](obj))}
        if t in r["np_scalars"]:
            return {"__scalar__": r["float"](obj), "int": r["issubclass"](t, r["np_int"])}
        if t is r["list"] or t is r["tuple"]:
            return {"__seq__": [_plain(x, depth + 1) for x in obj], "tuple": t is r["tuple"]}
        if t is r["dict"]:
            out = {}
            for k, v in r["items"](obj):
                kt = r["type"](k)
                if kt is not r["str"] and kt is not r["int"] and kt is not r["bool"]:
                    raise r["TypeError"](f"a dict with a key of type {_name(kt)} (use str or int keys)")
                out[r["strstr"](k) if kt is r["str"] else r["str"](k)] = _plain(v, depth + 1)
            return {"__dict__": out}
        return {"__unsupported__": _name(t), "subclass_of": [_name(b) for b in r["mro"](t)[1:3]]}

    return _plain


def library_snapshot():
    """``{(owner, name): (object, value)}`` of every attribute of the library objects the grader's
    steps and the student's code share (``torch``, ``torch.Tensor``, ``torch.nn.functional``,
    ``torch.nn.init``, ``torch.random``, ``torch.testing``, ``torch.special``, every class of
    ``torch.nn`` and ``torch.optim``, ``numpy`` and ``numpy.random``, ``math``, ``builtins``), plus
    ``{(owner, ""): (object, names)}`` (the names it had), taken before student code runs;
    :func:`library_changes` lists what was replaced, deleted or added since."""
    import builtins
    import importlib
    import math
    import numpy as np
    import torch
    import torch.nn.functional as F
    owners = [("torch", torch), ("torch.Tensor", torch.Tensor), ("torch.nn.functional", F), ("torch.nn", torch.nn),
              ("numpy", np), ("math", math), ("builtins", builtins), ("torch.optim", torch.optim),
              ("torch.linalg", torch.linalg), ("torch.autograd", torch.autograd)]
    for name in ("torch.nn.init", "torch.random", "torch.testing", "torch.special", "torch.nn.utils",
                 "numpy.random", "numpy.linalg", "torch.Size",
                 # what the run-time watch itself runs on (its dispatch mode's base class and helpers)
                 "torch.utils._python_dispatch", "torch.utils._python_dispatch.TorchDispatchMode", "contextlib"):
        mod, _, attr = name.rpartition(".") if name.rpartition(".")[2][:1].isupper() else (name, "", "")
        try:
            obj = getattr(importlib.import_module(mod), attr) if attr else importlib.import_module(name)
        except (ImportError, AttributeError):
            continue
        owners.append((name, obj))
    for mod_name, mod in (("torch.nn", torch.nn), ("torch.optim", torch.optim)):
        owners += [(f"{mod_name}.{k}", v) for k, v in list(vars(mod).items()) if isinstance(v, type)]
    snap = {}
    for label, owner in owners:
        attrs = dict(vars(owner))
        snap[(label, "")] = (owner, frozenset(attrs))
        for key, value in attrs.items():
            snap[(label, key)] = (owner, value)
    # the modules an ``import`` statement of the grader's setup code (e.g. the reference GPT's) finds
    import sys
    for label, owner in owners:
        if isinstance(owner, type(math)) and sys.modules.get(label) is owner:
            snap[("sys.modules", label)] = (sys.modules, owner)
    return snap


def library_changes(snap):
    """Names of library attributes replaced, deleted or added since :func:`library_snapshot` (at most
    5).  An added attribute counts (``torch.Tensor.shape = property(...)`` shadows the C type's own
    ``shape``), except a module: importing a sub-module (``import torch.distributions``, or torch
    importing one lazily) adds it to its parent."""
    import types
    missing = object()
    out = []
    for (label, key), (owner, value) in snap.items():
        now = owner if type(owner) is dict else vars(owner)  # sys.modules itself, else an object's attributes
        if key == "":
            out += [f"{label}.{k}" for k in now.keys() - value
                    if not issubclass(type(now.get(k)), types.ModuleType)][:5]
        elif now.get(key, missing) is not value:
            out.append(f"{label}.{key}")
        if len(out) >= 5:
            break
    return out[:5]


def make_watch(forbid, record, names=()):
    """``(watch, profile)`` for a check that forbids the library operations ``forbid`` (substrings
    of an operation's name, e.g. ``"aten._softmax"``) and the library functions and classes named
    ``names`` (e.g. ``"multi_head_attention_forward"``, ``"MultiheadAttention"``): ``watch()`` is a
    context manager (a ``TorchDispatchMode``, or a null context when no operation is forbidden) and
    ``profile`` a ``sys.setprofile`` function; both call ``record(kind, name)`` (``kind``: ``"op"`` or ``"call"``,
    the record kinds of :mod:`.wire`) for every forbidden
    operation or call *when it runs*.

    * Composite operations (e.g. ``aten._scaled_dot_product_attention_math``) decompose before the
      dispatch mode sees them, so the profiler also watches Python-level calls of builtins and of
      ``torch.ops``.
    * A library function reached by a name the static scan cannot read (a computed string, a list
      such as ``torch.overrides.get_overridable_functions()``) is recognised by what runs: a call of
      library code (a frame whose file is a real file, not a cell or the grader's snippet) whose
      qualified name has a part in ``names`` (``MultiheadAttention.__init__``,
      ``multi_head_attention_forward``), or a builtin of that name; recorded as a ``call`` of ``<qualified name> (in <module>)``.

    With nothing forbidden, ``(contextlib.nullcontext, None)``: nothing to record, and a training run
    would be about twice as slow under a watch.  With only ``names``, the profiler alone (cheap)."""
    import contextlib
    # names compared without case and underscores (softmax ~ Softmax.forward), as the static scan does
    forbid, names = tuple(forbid), frozenset(n.replace("_", "").lower() for n in names)
    if not forbid and not names:
        return contextlib.nullcontext, None
    watch = contextlib.nullcontext
    if forbid:
        from torch.utils._python_dispatch import TorchDispatchMode

        class _Watch(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                name = str(func)
                if any(f in name for f in forbid):
                    record("op", name)
                return func(*args, **(kwargs or {}))
        watch = _Watch

    named: dict = {}  # qualified name (or code object) -> forbidden?  Computed once each: a profile runs on every call

    def _named(qualname):
        hit = named.get(qualname)
        if hit is None:
            hit = named[qualname] = bool(names) and not names.isdisjoint(
                p.replace("_", "").lower() for p in qualname.split("."))
        return hit

    def _profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            hit = named.get(code)
            if hit is None:  # library code (not a cell's, not the grader's snippets) of a forbidden name
                hit = named[code] = bool(names) and code.co_filename[:1] != "<" and _named(code.co_qualname)
            if hit:
                record("call", f"{code.co_qualname} (in {frame.f_globals.get('__name__', '?')})")
            elif forbid and code.co_name == "__call__" and code.co_filename.endswith("_ops.py"):
                name = str(frame.f_locals.get("self", ""))
                if any(f in name for f in forbid):
                    record("op", name)
        elif event == "c_call":
            name = getattr(arg, "__qualname__", None) or getattr(arg, "__name__", "")
            if not isinstance(name, str):
                return
            if names and _named(name):
                mod = getattr(arg, "__module__", None)
                record("call", f"{name} (in {mod})" if isinstance(mod, str) else name)
            elif forbid and any(f in name for f in forbid):
                record("op", name)

    return watch, _profile
