"""The static scan: every route to OS/introspection facilities is flagged, honest code never is.

Fast (no sandbox).  The end-to-end versions of these bypasses are in ``test_attacks.py``.
"""
from __future__ import annotations

import pytest

from attnlab_grader.sandbox import scan
from attnlab_grader.tests import qa
from attnlab_grader.judging.engine import solution_cells

from attnlab_grader.tests.conftest import GRADED

ALLOWED = ("math", "numpy", "torch", "typing", "functools", "itertools", "collections", "dataclasses",
           "__future__", "einops")

BYPASSES = {  # each reached a forbidden facility unflagged before the resolving scan
    "from_torch_os": "from torch import os\nos.system('x')",
    "from_torch_sys": "from torch import sys",
    "from_torch_threading": "from torch import threading",
    "from_torch_threading_as": "from torch import threading as t",
    "torch_builtins_getattr": "def f(x):\n    return torch.builtins.getattr(x, 'softmax')",
    "torch_os_attr": "x = torch.os.getpid()",
    "F_torch_os": "x = F.torch.os",
    "alias_then_os": "t = torch\nx = t.os",
    "list_alias_sys": "m = [np][0].sys",
    "typing_sys": "import typing\nm = typing.sys.modules",
    "dataclasses_sys": "import dataclasses\nx = dataclasses.sys",
    "from_dataclasses_sys": "from dataclasses import sys",
    "import_torch_mp": "import torch.multiprocessing",
    "import_torch_mp_as": "import torch.multiprocessing as mp",
    "from_torch_mp": "from torch import multiprocessing",
    "from_torch_mp_Process": "from torch.multiprocessing import Process",
    "torch_C": "x = torch._C",
    "from_torch_C": "from torch import _C",
    "torch_ops_private": "y = torch.ops.aten._softmax",
    "np_ctypeslib": "x = np.ctypeslib",
    "torch_utils_cpp": "import torch.utils.cpp_extension",
    "torch_library": "torch.library.Library('aten', 'IMPL')",
    "torch_inspect": "torch.inspect.currentframe()",
    "torch_load": "x = torch.load('f')",
    "tb_frame": "try:\n    raise ValueError\nexcept ValueError as e:\n    f = e.__traceback__.tb_frame.f_back",
    "gen_frame": "def g():\n    yield 1\nx = g().gi_frame.f_back.f_locals",
    "subclasses": "x = object.__subclasses__()",
    "func_globals": "x = softmax.__globals__",
    "type_hints": "import typing\ntyping.get_type_hints(f)",
    "star_import": "from torch import *",
    "monkeypatch_torch": "torch.softmax = lambda *a, **k: 0",
    "monkeypatch_F": "F.softmax = None",
    "getattr_builtin": "g = getattr",
    "transformer_breaks_it": "In [1]: 1 = 1\nimport os\n",
    # a library function reached by a name computed at run time, or code compiled from a string
    "overrides_list": "fs = torch.overrides.get_overridable_functions()[F]",
    "from_overrides": "from torch.overrides import get_testing_overrides",
    "jit_from_string": "cu = torch.jit.CompilationUnit('def f(x):\\n    return x')",
    "fx_call_method": "import torch.fx\ng = torch.fx.Graph()",
    "fx_alias": "t = torch\ng = t.fx.Interpreter",
}

HONEST = {
    "einsum": "def attention_scores(q, k):\n    return torch.einsum('...id,...jd->...ij', q, k) / math.sqrt(q.shape[-1])",
    "masked_fill_finfo": "def f(s, mask):\n    return s.masked_fill(~mask, torch.finfo(s.dtype).min)",
    "masked_fill_1e9": "def f(s, mask):\n    return s.masked_fill(mask == 0, -1e9)",
    "where": "def f(s, m):\n    return torch.where(m, s, torch.tensor(float('-inf')))",
    "float64_inside": "def softmax(x, dim=-1):\n    y = x.to(torch.float64)\n    e = torch.exp(y - y.max(dim=dim, keepdim=True).values)\n"
                      "    return (e / e.sum(dim=dim, keepdim=True)).to(x.dtype)",
    "variable_named_input": "def f(input):\n    return input * 2\ninput = 3",
    "docstring_mentions_attnlab": 'def f(x):\n    """Like attnlab.nn.softmax, mine."""\n    return x',
    "loops_over_heads": "def f(q):\n    out = []\n    for h in range(q.shape[1]):\n        out.append(q[:, h])\n    return torch.stack(out, 1)",
    "nn_module": "class M(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n        self.lin = nn.Linear(d, d)\n"
                 "        self._cache = None\n    def forward(self, x):\n        for m in self.modules():\n            pass\n        return F.relu(self.lin(x))",
    "submodule_imports": "from torch import nn\nfrom torch.nn import functional as F2\nimport torch.nn.functional as F3\nx = F2.softmax",
    "typing_and_friends": "from typing import Optional, Tuple\nimport numpy as np\nfrom collections import OrderedDict\n"
                          "from functools import partial\nimport itertools\nfrom einops import rearrange",
    "numpy_submodules": "x = np.linalg.norm(np.random.default_rng(0).normal(size=3))",
    "logsumexp": "def f(x):\n    return x - torch.logsumexp(x, -1, keepdim=True)",
    "own_object_attribute": "class C:\n    pass\nc = C()\nc.x = 1",
    "annotated_answer": "scores: list = [[1.0, 2.0]]",
}

#: replacing a library object's attribute through an alias: the scan follows the binding
BYPASSES |= {
    "tensor_method": "Tensor.detach = lambda self: self",
    "tensor_through_variable": "T = torch.Tensor\nT.detach = lambda self: self",
    "from_import_class": "from torch import Tensor as T\nT.tolist = lambda self: [1]",
    "annotated_module_alias": "m: Any = torch\nm.softmax = None",
    "private_through_variable": "t = torch\nx = t._C",
}


@pytest.mark.parametrize("name", sorted(BYPASSES))
def test_bypass_is_flagged(name):
    """Each way of reaching a forbidden library object or replacing one (aliases included) is flagged."""
    assert scan.suspicious([("c", BYPASSES[name])], ALLOWED), name


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_code_is_not_flagged(name):
    assert scan.suspicious([("c", HONEST[name])], ALLOWED) == []


def test_the_sandbox_runs_what_was_scanned():
    run, errors = scan.runnable([("a", "x = 1\n%time y = 2\n"), ("b", "In [1]: 1 = 1\nimport os\n"),
                                 ("c", "def f(:\n")])
    assert run == [("a", scan.to_python("x = 1\n%time y = 2\n"))]  # magics become calls (flagged)
    assert set(errors) == {"b", "c"} and "was not run" in errors["b"]["error"]


def _reference_and_cases(assignment, kind):
    """The reference submission of ``assignment`` and one submission per QA case of ``kind``
    (``"wrong"`` or ``"honest"``)."""
    spec = qa.spec(assignment)
    make = qa.wrong_submission if kind == "wrong" else qa.honest_submission
    return [qa.reference_submission(assignment, "ref")] + \
        [make(assignment, kind[0], name) for name in getattr(spec, kind)]


@pytest.mark.parametrize("assignment", GRADED)
def test_course_solutions_and_qa_mistakes_are_never_flagged(assignment):
    spec = qa.spec(assignment)
    for nb in _reference_and_cases(assignment, "wrong"):
        assert scan.suspicious(solution_cells(nb), spec.allowed_imports) == []


# --- reference use: names followed the way Python binds them -------------------------------------
SDPA = ("scaled_dot_product_attention", "multi_head_attention_forward", "MultiheadAttention")
ALIASED_REFERENCE = {  # each reached the library function under another name unflagged before
    "from_import_as": "from torch.nn.functional import scaled_dot_product_attention as _f\n"
                      "def sdpa(q, k, v):\n    return _f(q, k, v)",
    "import_as_inside": "def sdpa(q, k, v):\n    from torch.nn.functional import scaled_dot_product_attention as g\n"
                        "    return g(q, k, v)",
    "annotated_assignment": "f: Callable = torch.nn.functional.multi_head_attention_forward\n"
                            "def sdpa(q, k, v):\n    return f(q, k, v)",
    "tuple_assignment": "_a, _b = F.scaled_dot_product_attention, 1\ndef sdpa(q, k, v):\n    return _a(q, k, v)",
    "for_target": "for _g in [F.scaled_dot_product_attention]:\n    pass\ndef sdpa(q, k, v):\n    return _g(q, k, v)",
    "walrus": "print(_h := F.scaled_dot_product_attention)\ndef sdpa(q, k, v):\n    return _h(q, k, v)",
    "global_from_function": "def _setup():\n    global _impl\n    _impl = F.scaled_dot_product_attention\n"
                            "_setup()\ndef sdpa(q, k, v):\n    return _impl(q, k, v)",
    "chain_through_variable": "m = torch.nn\ndef sdpa(q, k, v):\n    return m.functional.multi_head_attention_forward(q, k, v)",
    "inside_if": "if True:\n    from torch.nn import MultiheadAttention as M\ndef sdpa(q, k, v):\n    return M(4, 1)(q, k, v)[0]",
    "default_argument": "def sdpa(q, k, v, impl=F.scaled_dot_product_attention):\n    return impl(q, k, v)",
    "nested_shadow_elsewhere": "from torch.nn.functional import scaled_dot_product_attention as _f\n"
                               "def sdpa(q, k, v):\n    def helper():\n        _f = 0\n    return _f(q, k, v)",
    "class_attribute": "class H:\n    impl = staticmethod(F.scaled_dot_product_attention)\n"
                       "def sdpa(q, k, v):\n    return H.impl(q, k, v)",
}


SOFTMAX = ("softmax", "log_softmax", "softmin")
#: The library function has the target's own name: importing it under another name, or its module
#: form (``nn.Softmax``, ``nn.LogSoftmax``), is a use; each was unflagged before.
SAME_NAME_REFERENCE = {
    "import_as_other_name": "from torch.nn.functional import softmax as sm\ndef softmax(x, dim=-1):\n    return sm(x, dim)",
    "import_inside": "def softmax(x, dim=-1):\n    from torch.nn.functional import softmax as s\n    return s(x, dim)",
    "module_form": "def softmax(x, dim=-1):\n    return nn.Softmax(dim)(x)",
    "module_form_log": "def softmax(x, dim=-1):\n    return nn.LogSoftmax(dim)(x).exp()",
    "subclass_of_module_form": "class S(nn.Softmax):\n    pass\ndef softmax(x, dim=-1):\n    return S(dim)(x)",
}


@pytest.mark.parametrize("name", sorted(ALIASED_REFERENCE))
def test_reference_use_follows_python_bindings(name):
    assert scan.reference_use([("c", ALIASED_REFERENCE[name])], "sdpa", SDPA), name


@pytest.mark.parametrize("name", sorted(SAME_NAME_REFERENCE))
def test_reference_use_of_a_library_function_named_like_the_target(name):
    assert scan.reference_use([("c", SAME_NAME_REFERENCE[name])], "softmax", SOFTMAX), name


def test_the_targets_own_name_is_not_a_library_use():
    """Importing the library function under the target's name and then defining the target replaces it
    (Python keeps the later binding); the run-time watch sees a call of it if the import is kept."""
    src = ("from torch.nn.functional import softmax\n"
           "def softmax(x, dim=-1):\n    e = (x - x.amax(dim, keepdim=True)).exp()\n"
           "    return e / e.sum(dim, keepdim=True)\n")
    assert scan.reference_use([("c", src)], "softmax", SOFTMAX) == []


def test_reference_use_ignores_locals_and_unrelated_code():
    """A local that shares a module-level name reads the local; top-level experiments the target
    never reads, and library calls in other functions, are not the target's."""
    src = ("x = F.scaled_dot_product_attention(torch.ones(1, 2, 2), torch.ones(1, 2, 2), torch.ones(1, 2, 2))\n"
           "def check():\n    return F.scaled_dot_product_attention\n"
           "def sdpa(q, k, v):\n    x = q @ k.transpose(-2, -1)\n    return x.softmax(-1) @ v\n")
    assert scan.reference_use([("c", src)], "sdpa", SDPA) == []




def test_scan_is_bounded_in_size_and_time():
    """A multi-MB cell is not run and not scanned: a reason per cell within a stated bound."""
    import time
    big = "x = [" + "1, " * 2_000_000 + "]\n"  # about 6 MB
    t0 = time.perf_counter()
    run, errors = scan.runnable([("a", "def f():\n    return 1\n"), ("b", big)])
    found = scan.suspicious([("b", big)], ALLOWED)
    assert time.perf_counter() - t0 < 2.0
    assert [c for c, _ in run] == ["a"] and "over the" in errors["b"]["error"] and "not run" in errors["b"]["error"]
    assert found == []
    many = [(f"c{i}", "y = 1\n" * 5_000) for i in range(8)]  # 30 KB each, 240 KB together
    _, errors = scan.runnable(many)
    assert "together" in errors["c7"]["error"] and "c0" not in errors
    deep = "x = " + "-" * 200_000 + "1\n"
    _, errors = scan.runnable([("d", deep)])
    assert "not run" in errors["d"]["error"]
    assert scan.suspicious([("c", "y = 1\n" * 500)], ALLOWED, seconds=0.0)  # the budget is a finding


def test_added_cells_are_read_within_a_bound():
    """Cells the student added are read for their definitions only up to a stated size (one cell, and
    all together): a pasted multi-MB cell or hundreds of large experiment cells cost at most a few
    seconds, and the cells not read are reported as not run with the reason; a helper in a small
    added cell before them still runs."""
    import time

    import nbformat

    from attnlab_grader.judging.engine import ADDED_CHARS
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("def helper(x):\n    return x\n"))
    nb.cells.append(nbformat.v4.new_code_cell("x = [" + "1234567," * 800_000 + "]\n"))  # 6.4 MB
    nb.cells += [nbformat.v4.new_code_cell("y = 1\n" * 8_000) for _ in range(2 * ADDED_CHARS // 48_000)]
    t0 = time.perf_counter()
    cells = solution_cells(nb)
    run, errors = scan.runnable(cells)
    assert time.perf_counter() - t0 < 6.0
    assert [c for c, _ in run] == ["added-0"]
    assert "not read" in errors["added-1"]["error"] and "limit for one added cell" in errors["added-1"]["error"]
    # the cells within the budget were read (no definitions: nothing to run), the ones after it were not
    past = sorted(int(c.split("-")[1]) for c in errors if "already hold" in errors[c]["error"])
    assert past == list(range(2 + ADDED_CHARS // 48_000, len(nb.cells))), errors


@pytest.mark.parametrize("assignment", GRADED)
def test_reference_use_never_flags_the_reference_or_honest_alternatives(assignment):
    """Following bindings must not make honest code look like a library call."""
    spec = qa.spec(assignment)
    for nb in _reference_and_cases(assignment, "honest"):
        cells = solution_cells(nb)
        for check in spec.checks:
            if getattr(check, "forbid_attrs", ()):
                assert scan.reference_use(cells, check.target, check.forbid_attrs) == [], check.grade_id


def test_a_by_hand_answer_is_read_within_the_cell_bound():
    """A by-hand cell holding megabytes of numbers is not parsed (seconds and gigabytes): that item
    fails with the size in the reason, quickly."""
    import time

    from attnlab_grader.judging.by_hand import ByHandCheck
    check = ByHandCheck("test_scores_by_hand", variable="scores", skill="sdpa_scores")
    big = "scores = [" + "1.0, " * 1_200_000 + "]\n"
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="over the 50,000 limit"):
        check.read([(check.cell, big)])
    assert time.perf_counter() - t0 < 0.5
    assert check.read([(check.cell, "scores = [[1.0, 2.0]]\n")]) == [[1.0, 2.0]]


def test_following_bindings_is_linear_in_nesting():
    """Nested comprehensions, lambdas in default values and decorated definitions are each read once:
    150 nested comprehensions took minutes (each level was read twice) and now take milliseconds; what
    a definition's defaults, decorators and base classes read is still followed."""
    import time
    deep = {"comprehensions": "y = [" + " ".join(["[a for a in"] * 150) + " [1]" + "]" * 151,
            "lambda_defaults": "y = " + "(lambda a=" * 90 + "1" + ": a)" * 90}
    for name, expr in deep.items():
        t0 = time.perf_counter()
        assert scan.reference_use([("c", f"def softmax(x, dim=-1):\n    {expr}\n    return x\n")], "softmax", SOFTMAX) == []
        assert time.perf_counter() - t0 < 1.0, name
    followed = {"default": "sm = F.softmax\ndef softmax(x, dim=-1, f=sm):\n    return f(x, dim)\n",
                "decorator": "sm = F.softmax\ndef deco(g):\n    return sm\n@deco\ndef softmax(x, dim=-1):\n    pass\n",
                "base_class": "B = nn.Softmax\nclass S(B):\n    pass\ndef softmax(x, dim=-1):\n    return S(dim)(x)\n",
                "first_iterable": "fs = [F.softmax]\nsoftmax = [f for f in fs][0]\n"}
    for name, src in followed.items():
        assert scan.reference_use([("c", src)], "softmax", SOFTMAX), name
