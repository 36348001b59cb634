"""Crafted hostile submissions, graded in ONE class run next to an honest student.

Each case proves one promise of autograder/SECURITY.md: the affected items get no credit
with a clear reason (and a flag where it is tampering), nothing else in the class is
affected, and the feedback never shows hidden tests.
"""
from __future__ import annotations

import copy
import csv
import os
from pathlib import Path

import nbformat
import pytest

from attnlab_grader.tests import qa
from attnlab_grader.records.course import REPO
from attnlab_grader.classroom.pipeline import grade

from attnlab_grader.tests.conftest import needs_sandbox

A = "02_scaled_dot_product_attention"
FUNCS = ("test_attention_scores", "test_softmax", "test_sdpa")
BY_HAND = ("test_scores_by_hand", "test_weights_by_hand", "test_output_by_hand")
ALL = FUNCS + BY_HAND

SOFTMAX_DEF = "def softmax(x, dim=-1):\n"
SDPA_OK = ("def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0):\n"
           "    s = attention_scores(q, k)\n"
           "    if mask is not None:\n        s = s.masked_fill(~mask, float('-inf'))\n"
           "    w = softmax(s, dim=-1)\n    return w @ v, w\n")


def _set(nb, gid, source):
    qa.cell(nb, gid).source = source
    return nb


def _prepend(nb, gid, code):
    c = qa.cell(nb, gid)
    c.source = code + "\n" + c.source
    return nb


def _nb(student):
    return qa.reference_submission(A, student)


def case_loop(nb):  # infinite loop that swallows KeyboardInterrupt
    return _set(nb, "softmax", SOFTMAX_DEF + "    while True:\n        try:\n            pass\n"
                "        except KeyboardInterrupt:\n            pass\n")


def case_membomb(nb):
    return _set(nb, "attention_scores", "def attention_scores(q, k):\n    junk = torch.empty(2**40)\n    return junk\n")


def case_sysexit(nb):
    return _prepend(nb, "softmax", "raise SystemExit(0)")


def case_osexit(nb):
    return _set(nb, "sdpa", "import os\n" + SDPA_OK.replace("    s = attention", "    os._exit(3)\n    s = attention"))


def case_killparent(nb):
    return _prepend(nb, "sdpa", "import os, signal\nfor pid in (os.getppid(), 1):\n    try:\n"
                                "        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass")


def case_forkbomb(nb):
    return _set(nb, "softmax", "import os\n" + SOFTMAX_DEF + "    while True:\n        try:\n"
                "            os.fork()\n        except OSError:\n            pass\n")


def case_deleted(nb):
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "test_softmax"]
    return nb


def case_duplicated(nb):
    i = next(i for i, c in enumerate(nb.cells) if c.metadata["nbgrader"]["grade_id"] == "softmax")
    dup = copy.deepcopy(nb.cells[i])
    dup.id = "softmax-copy"
    nb.cells.insert(i + 1, dup)
    return nb


def case_kernelspec(nb):
    nb.metadata.kernelspec = {"name": "ir", "display_name": "R", "language": "R"}
    return nb


def case_fake_grade_cell(nb):
    cell = nbformat.v4.new_code_cell("print('free points')")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "points": 100,
                                 "grade_id": "bonus", "schema_version": 3}
    nb.cells.append(cell)
    return nb


def case_edited_test(nb):
    qa.cell(nb, "test_softmax").source = "pass"
    return _set(nb, "softmax", SOFTMAX_DEF + "    return x\n")


def case_unlocked_test(nb):
    qa.cell(nb, "test_sdpa").metadata["nbgrader"]["locked"] = False
    return nb


def case_monkeypatch(nb):
    return _set(nb, "sdpa", "np.allclose = lambda *a, **k: True\ntorch.allclose = lambda *a, **k: True\n"
                "torch.testing.assert_close = lambda *a, **k: None\n"
                "def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0):\n"
                "    return torch.zeros(1), torch.zeros(1)\n")


def case_tensor_subclass(nb):
    return _set(nb, "sdpa", "class AlwaysEqual(torch.Tensor):\n    def __eq__(self, other):\n        return True\n\n"
                "def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0):\n"
                "    z = torch.zeros(q.shape[:-1] + v.shape[-1:]).as_subclass(AlwaysEqual)\n"
                "    return z, z\n")


def case_ndarray_subclass(nb):
    return _set(nb, "attention_scores", "class Yes(np.ndarray):\n    def __eq__(self, other):\n"
                "        return np.ones(self.shape, bool)\n\n"
                "def attention_scores(q, k):\n    return np.zeros((1,)).view(Yes)\n")


def case_input_transformer(nb):
    return _prepend(nb, "scores_by_hand", "get_ipython().input_transformers_post.append("
                    "lambda lines: [l.replace('assert', 'pass #') for l in lines])")


def case_silenced_tracebacks(nb):
    return _prepend(nb, "softmax", "import sys\nsys.excepthook = lambda *a: None\n"
                    "from IPython.core.interactiveshell import InteractiveShell\n"
                    "InteractiveShell.showtraceback = lambda *a, **k: None")


def case_read_solutions(nb):
    path = REPO / "solutions" / A / f"{A}.ipynb"
    return _prepend(nb, "softmax", f"try:\n    LEAK = open({str(path)!r}).read()\nexcept OSError:\n    LEAK = None")


def case_import_reference(nb):
    return _set(nb, "sdpa", "from attnlab.nn import scaled_dot_product_attention\n")


def case_fused_kernel(nb):
    return _set(nb, "sdpa", SDPA_OK.replace("    w = softmax(s, dim=-1)\n    return w @ v, w\n",
                "    w = softmax(s, dim=-1)\n    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask), w\n"))


def case_hidden_aten_op(nb):  # passes the static scan; caught at run time by the dispatch watch
    return _set(nb, "sdpa", "def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0):\n"
                "    return torch.ops.aten._scaled_dot_product_attention_math(q, k, v, attn_mask=mask)\n")


def case_network(nb):
    return _prepend(nb, "softmax", "import socket\ntry:\n    socket.create_connection(('127.0.0.1', 9), timeout=1)\n"
                                   "except OSError:\n    pass")


# --- "write it yourself" bypasses: each must lose the item and be flagged ---
SOFTMAX_IN_THREAD = (SOFTMAX_DEF + "    out = []\n"
                     "    t = threading.Thread(target=lambda: out.append(torch.ops.aten._softmax(x, dim, False)))\n"
                     "    t.start()\n    t.join()\n    return out[0]\n")


def case_thread_from_torch(nb):  # the watch of the calling thread never sees the other thread
    return _set(nb, "softmax", "from torch import threading\n" + SOFTMAX_IN_THREAD)


def case_thread_via_attribute(nb):
    return _set(nb, "softmax", "threading = torch.threading\n" + SOFTMAX_IN_THREAD)


def case_multiprocessing(nb):
    return _set(nb, "softmax", "import torch.multiprocessing as mp\n" + SOFTMAX_DEF +
                "    with mp.get_context('fork').Pool(1) as pool:\n"
                "        return pool.apply(torch.ops.aten._softmax, (x, dim, False))\n")


def case_clear_record(nb):  # reach the watch's record through frames and empty it
    return _set(nb, "softmax", "from torch import sys\n" + SOFTMAX_DEF +
                "    r = torch.ops.aten._softmax(x, dim, False)\n    f = sys._getframe(1)\n"
                "    while f is not None:\n        for v in list(f.f_locals.values()):\n"
                "            if type(v) is list and all(type(s) is str for s in v):\n                v.clear()\n"
                "        f = f.f_back\n    return r\n")


def case_clear_record_traceback(nb):  # frames without sys: a caught exception's traceback
    return _set(nb, "softmax", SOFTMAX_DEF + "    r = torch.ops.aten._softmax(x, dim, False)\n"
                "    try:\n        raise ValueError\n    except ValueError as e:\n        f = e.__traceback__.tb_frame\n"
                "    while f is not None:\n        for v in list(f.f_locals.values()):\n"
                "            if type(v) is list and all(type(s) is str for s in v):\n                v.clear()\n"
                "        f = f.f_back\n    return r\n")


def case_forge_channel(nb):  # gather the four trials' values, write a made-up result, leave
    return _set(nb, "softmax", "from torch import os\n_rs = []\n" + SOFTMAX_DEF +
                "    r = torch.ops.aten._softmax(x, dim, False)\n    _rs.append(r)\n"
                "    if len(_rs) == 4:  # test_softmax draws 4 trials\n"
                "        ts = ['{\"status\": \"ok\", \"forbidden_ops\": [], \"value\": {\"__array__\": ' + str(t.double().tolist())"
                " + ', \"shape\": ' + str(list(t.shape)) + ', \"dtype\": \"torch.float32\"}}' for t in _rs]\n"
                "        fake = ('{\"cell_errors\": [], \"status\": \"ok\", \"trials\": [' + ', '.join(ts) + ']}').encode()\n"
                "        for fd in range(3, 64):\n            try:\n                os.write(fd, fake)\n"
                "            except OSError:\n                pass\n        os._exit(0)\n    return r\n")


def case_builtins_getattr(nb):  # a banned builtin reached through an allowed module
    return _set(nb, "softmax", SOFTMAX_DEF + "    return torch.builtins.getattr(F, 'soft' + 'max')(x, dim)\n")


def case_typing_sys(nb):
    return _set(nb, "softmax", "import typing\n" + SOFTMAX_DEF +
                "    return typing.sys.modules['torch'].nn.functional.__dict__['soft' + 'max'](x, dim)\n")


def case_private_module(nb):
    return _set(nb, "softmax", SOFTMAX_DEF + "    return torch._C._nn.softmax(x, dim) if False else "
                "torch._softmax(x, dim, False)\n")


def case_transformer_syntax_error(nb):  # valid Python, but IPython's prompt stripper breaks it
    _prepend(nb, "attention_scores", "In = {}")
    return _set(nb, "softmax", "In [1]: 1 = 1\nfrom torch import threading\n" + SOFTMAX_IN_THREAD)


def case_generator_frame(nb):
    return _set(nb, "softmax", SOFTMAX_DEF + "    def g():\n        yield 1\n    it = g()\n"
                "    it.gi_frame.f_back\n    return torch.ops.aten._softmax(x, dim, False)\n")


def case_import_as_other_name(nb):  # the library function named like the target, under another name
    return _set(nb, "softmax", "from torch.nn.functional import softmax as _sm\n" + SOFTMAX_DEF + "    return _sm(x, dim)\n")


def case_module_form(nb):  # the module form of the library function (nn.Softmax for softmax)
    return _set(nb, "softmax", SOFTMAX_DEF + "    return nn.Softmax(dim)(x)\n")


def case_shadow_shape(nb):  # an added attribute shadowing the C type's own, through a call the scan cannot follow
    return _prepend(nb, "softmax", "type(torch.zeros(1)).shape = property(lambda s: torch.Size([1]))")


def case_function_list(nb):  # a library function found in a list of every function, by a computed name
    return _set(nb, "sdpa", "_fs = [f for f in torch.overrides.get_overridable_functions()[F]\n"
                "       if f.__name__ == 'multi_head_' + 'attention_forward']\n" + SDPA_OK)


HONEST_ALT = {  # written differently, all correct: full credit, no flag (no false positive)
    "attention_scores": "def attention_scores(q, k):\n    \"\"\"My version of attnlab's attention_scores.\"\"\"\n"
                        "    input = q.to(torch.float64)\n"
                        "    s = torch.einsum('...id,...jd->...ij', input, k.to(torch.float64))\n"
                        "    return (s / math.sqrt(q.shape[-1])).to(q.dtype)\n",
    "softmax": "def softmax(x, dim=-1):\n    m = torch.amax(x, dim=dim, keepdim=True)\n"
               "    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))\n"
               "    return torch.exp(x - m - torch.logsumexp(x - m, dim=dim, keepdim=True))\n",
    "sdpa": "def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0):\n"
            "    s = attention_scores(q, k)\n    if mask is not None:\n"
            "        s = s.masked_fill(~mask, float('-inf'))\n    w = softmax(s, dim=-1)\n"
            "    outs = [(w[..., i:i + 1, :] @ v)[..., 0, :] for i in range(w.shape[-2])]\n"
            "    return torch.stack(outs, dim=-2), w\n",
}


def case_honest_alternative(nb):
    for gid, src in HONEST_ALT.items():
        _set(nb, gid, src)
    return nb


# student -> (builder, status, {grade_id: substring of the message}, items that must still pass)
CASES = {
    "loop": (case_loop, "graded", {"test_softmax": "timed out", "test_sdpa": "timed out"}, BY_HAND + ("test_attention_scores",)),
    "membomb": (case_membomb, "graded", {"test_attention_scores": "out of memory", "test_sdpa": "out of memory"}, BY_HAND + ("test_softmax",)),
    "sysexit": (case_sysexit, "graded", {g: "crashed" for g in FUNCS}, BY_HAND),
    "osexit": (case_osexit, "flagged", {"test_sdpa": "crashed"}, ()),
    "killparent": (case_killparent, "flagged", {"test_sdpa": "pending instructor review"}, ()),
    "forkbomb": (case_forkbomb, "flagged", {"test_softmax": "timed out"}, ()),
    "deleted": (case_deleted, "error", {}, ()),
    "duplicated": (case_duplicated, "error", {}, ()),
    "kernelspec": (case_kernelspec, "error", {}, ()),
    "fakegrade": (case_fake_grade_cell, "error", {}, ()),
    "editedtest": (case_edited_test, "flagged", {"test_softmax": "tampered"}, BY_HAND + ("test_attention_scores",)),
    "unlockedtest": (case_unlocked_test, "flagged", {"test_sdpa": "tampered"}, BY_HAND + ("test_attention_scores", "test_softmax")),
    "monkeypatch": (case_monkeypatch, "flagged", {"test_sdpa": "monkeypatching"}, ()),
    "tensorsub": (case_tensor_subclass, "flagged", {"test_sdpa": "subclass"}, BY_HAND + ("test_attention_scores", "test_softmax")),
    "ndarraysub": (case_ndarray_subclass, "flagged", {"test_attention_scores": "subclass"}, BY_HAND + ("test_softmax",)),
    "inputtransformer": (case_input_transformer, "flagged", {"test_scores_by_hand": "get_ipython"}, ()),
    "silenced": (case_silenced_tracebacks, "flagged", {"test_softmax": "pending instructor review"}, ()),
    "readsolutions": (case_read_solutions, "flagged", {"test_softmax": "open"}, ()),
    "importref": (case_import_reference, "flagged", {"test_sdpa": "attnlab"}, ()),
    "fused": (case_fused_kernel, "flagged", {"test_sdpa": "scaled_dot_product_attention"}, BY_HAND + ("test_attention_scores", "test_softmax")),
    # a private torch.ops name is also flagged by the scan now; the run-time watch still reports it
    "hiddenop": (case_hidden_aten_op, "flagged", {"test_sdpa": "library operation"}, ()),
    "thread": (case_thread_from_torch, "flagged", {"test_softmax": "threading"}, ()),
    "threadattr": (case_thread_via_attribute, "flagged", {"test_softmax": "threading"}, ()),
    "multiproc": (case_multiprocessing, "flagged", {"test_softmax": "multiprocessing"}, ()),
    # torch.ops.aten._softmax is now also a static reference use (names compared without case and
    # underscores); that the run-time record survives clearing is proven without the scan in test_sandbox
    "clearrecord": (case_clear_record, "flagged", {"test_softmax": "_softmax"}, ()),
    "cleartb": (case_clear_record_traceback, "flagged", {"test_softmax": "_softmax"}, ()),
    "forge": (case_forge_channel, "flagged", {"test_softmax": "pending instructor review"}, ()),
    "builtinsgetattr": (case_builtins_getattr, "flagged", {"test_softmax": "builtins"}, ()),
    "typingsys": (case_typing_sys, "flagged", {"test_softmax": "pending instructor review"}, ()),
    "privatetorch": (case_private_module, "flagged", {"test_softmax": "private"}, ()),
    "transformer": (case_transformer_syntax_error, "flagged", {"test_softmax": "IPython"}, ()),
    "genframe": (case_generator_frame, "flagged", {"test_softmax": "_softmax"}, ()),
    "importasother": (case_import_as_other_name, "flagged", {"test_softmax": "'softmax' uses 'softmax'"},
                      BY_HAND + ("test_attention_scores", "test_sdpa")),
    "moduleform": (case_module_form, "flagged", {"test_softmax": "uses 'Softmax'"}, BY_HAND + ("test_attention_scores", "test_sdpa")),
    "shadowshape": (case_shadow_shape, "flagged", {g: "torch.Tensor.shape" for g in FUNCS}, BY_HAND),
    "functionlist": (case_function_list, "flagged", {"test_sdpa": "overrides"}, ()),
    "honestalt": (case_honest_alternative, "graded", {}, ALL),
    "network": (case_network, "flagged", {"test_softmax": "socket"}, ()),
}


@pytest.fixture(scope="module")
def attacked_class(tmp_path_factory):
    root = tmp_path_factory.mktemp("attacks")
    qa.write(root, "honest", A, _nb("honest"))
    for student, (build, *_rest) in CASES.items():
        qa.write(root, student, A, build(_nb(student)))
    qa.write(root, "malformed", A, '{"cells": [ this is not json')
    # copying a classmate's by-hand numbers earns nothing: variants are per student
    copy_nb = _nb("copycat")
    honest = _nb("honest")
    for gid in ("scores_by_hand", "weights_by_hand", "output_by_hand"):
        qa.cell(copy_nb, gid).source = qa.cell(honest, gid).source
    qa.write(root, "copycat", A, copy_nb)
    # every execution of a grading.py during the run, by process (the workers are forked)
    from unittest import mock

    from attnlab_grader.judging import spec as spec_module
    loads = tmp_path_factory.mktemp("spec-loads") / "spec-loads.txt"
    real = spec_module._load_spec

    def counted(path):
        with open(loads, "a") as fh:
            fh.write(f"{os.getpid()}\t{path}\n")
        return real(path)
    with mock.patch.object(spec_module, "_load_spec", counted):
        summary = grade(root, A, jobs=2, feedback=True, progress=False, item_timeout=3)
    summary.spec_loads = loads
    return root, summary, {r["student"]: r for r in summary.reports}


def test_each_grading_spec_is_loaded_once_per_run(attacked_class):
    """grading.py is executed once per grading run (at most once per process: the run's parent, whose
    load the forked workers share), never once per submission."""
    _, summary, _ = attacked_class
    rows = [line.split("\t") for line in summary.spec_loads.read_text().splitlines()]
    pids = [pid for pid, _ in rows]
    assert 1 <= len(rows) <= 1 + 2 and len(set(pids)) == len(pids), rows  # the parent + at most one per worker
    assert {Path(p).name for _, p in rows} == {"grading.py"}
    assert len(summary.reports) > 3 * len(rows)


pytestmark = [needs_sandbox, pytest.mark.slow, pytest.mark.xdist_group("grading-2")]


def test_honest_student_unaffected(attacked_class):
    _, summary, reps = attacked_class
    assert reps["honest"]["status"] == "graded"
    assert reps["honest"]["score"] == reps["honest"]["max_score"] == 9.0
    assert len(summary.reports) == len(CASES) + 3


@pytest.mark.parametrize("student", sorted(CASES))
def test_attack(attacked_class, student):
    _, _, reps = attacked_class
    _, status, broken, intact = CASES[student]
    rep = reps[student]
    assert rep["status"] == status, rep
    if status == "error":
        assert rep["reason"] and "Traceback" not in rep["reason"], rep
        return
    for gid, needle in broken.items():
        item = rep["items"][gid]
        assert not item.ok and needle in item.message, (gid, item)
    for gid in intact:
        assert rep["items"][gid].ok, (gid, rep["items"][gid])
    if status == "flagged":
        assert rep["flags"]
    else:
        assert not rep["flags"]
    untouched = set(ALL) - set(broken) - set(intact)
    if status == "flagged" and not intact:  # deny by default: everything withheld
        assert all(not rep["items"][g].ok for g in untouched)


def test_error_reasons_are_specific(attacked_class):
    _, _, reps = attacked_class
    assert "not valid notebook JSON" in reps["malformed"]["reason"]
    assert "deleted" in reps["deleted"]["reason"]
    assert "appears 2 times" in reps["duplicated"]["reason"]
    assert "not Python" in reps["kernelspec"]["reason"]  # a kernel of another language (R)
    assert "bonus" in reps["fakegrade"]["reason"]


def test_copied_numbers_earn_nothing(attacked_class):
    _, _, reps = attacked_class
    rep = reps["copycat"]
    if all(qa.cell(_nb("copycat"), g).source == qa.cell(_nb("honest"), g).source
           for g in ("scores_by_hand", "weights_by_hand", "output_by_hand")):
        pytest.fail("the two students drew identical variants; pick other ids")
    lost = [g for g in BY_HAND if not rep["items"][g].ok]
    assert lost, rep["items"]
    assert all(rep["items"][g].ok for g in FUNCS)


def test_csv_and_feedback(attacked_class):
    root, summary, _ = attacked_class
    rows = {r["student_id"]: r for r in csv.DictReader(open(summary.csv))}
    assert rows["malformed"]["status"] == "error" and rows["malformed"]["score"] == ""
    assert rows["honest"]["status"] == "graded" and float(rows["honest"]["score"]) == 9.0
    assert rows["fused"]["status"] == "flagged" and rows["fused"]["flags"]
    # the verdict's kind, as the grader made it, reaches the sheet
    from attnlab_grader.judging import verdict as V
    assert V.LIBRARY in rows["fused"]["failed_items"] and rows["honest"]["failed_items"] == ""
    html = (root / "feedback" / "fused" / A / f"{A}.html").read_text()
    assert "library" in html or "scaled_dot_product_attention" in html
    for secret in ("BEGIN HIDDEN TESTS", "Graded outside your kernel", "v_scores.answer"):
        assert secret not in html
    text = summary.text()
    assert "failed 5" in text and "malformed" in text
    assert f"sandbox: {summary.sandbox}" in text and summary.sandbox.split()[0] in ("root", "userns", "bwrap")


def test_gradebook_intact(attacked_class):
    root, _, reps = attacked_class
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "attnlab") as gb:
        assert gb.find_submission(A, "honest").code_score == 9.0
        assert gb.find_submission(A, "fused").code_score < 9.0
