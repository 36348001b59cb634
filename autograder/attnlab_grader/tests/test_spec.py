"""Fast unit tests of attnlab_grader.judging.spec: value comparison and by-hand answer reading (no sandbox)."""
from __future__ import annotations

import numpy as np
import pytest

from attnlab_grader.tests import qa
from attnlab_grader.judging.spec import ByHandCheck, compare_values

from attnlab_grader.tests.conftest import GRADED

INF = float("inf")


@pytest.mark.parametrize("got", [
    [[1.0, INF], [0.5, 2.0]],           # +inf where the reference has -inf (sign slip in a top-k filter)
    [[1.0, float("nan")], [0.5, 2.0]],  # NaN where the reference has -inf
    [[1.0, 0.0], [0.5, 2.0]],           # a finite number where the reference has -inf
    [[-INF, 1.0], [0.5, 2.0]],          # -inf at another position
    [[1.0, -INF], [0.5, -INF]],         # an extra -inf
])
def test_non_finite_values_must_match_in_kind_sign_and_position(got):
    ref = np.array([[1.0, -INF], [0.5, 2.0]])
    msg = compare_values(np.array(got), ref, "top_k_filter", 1e-4, 1e-5)
    assert msg and "non-finite" in msg


def test_equal_non_finite_values_compare_equal():
    ref = np.array([[1.0, -INF, float("nan")], [INF, 2.0, -INF]])
    assert compare_values(ref.copy(), ref, "f", 1e-4, 1e-5) is None
    assert compare_values(ref.tolist(), ref, "f", 1e-4, 1e-5) is None


def _read(src, variable="scores"):
    return ByHandCheck("t", cell="c", variable=variable, skill="sdpa_scores", key="k").read([("c", src)])


@pytest.mark.parametrize("src, value", [
    ("scores: list = [[1.0, 2.0], [3.0, 4.0]]\n", [[1.0, 2.0], [3.0, 4.0]]),
    ("scores = '[[1.0, 2.0], [3.0, 4.0]]'\n", "[[1.0, 2.0], [3.0, 4.0]]"),
    ("scores = np.array([[1.0, 2.0], [3.0, 4.0]])\n", [[1.0, 2.0], [3.0, 4.0]]),
    ("scores = torch.tensor([[1.0, 2.0]])\n", [[1.0, 2.0]]),
    ("scores = None\nscores = [[1, 2]]  # corrected\n", [[1, 2]]),
    # arithmetic between numbers is what a learner writes with a pen
    ("scores = [1/4, 1/2, 1/4]\n", [0.25, 0.5, 0.25]),
    ("scores = [[-2**0.5, (3 + 1) * 0.5], [7 // 2, 10 % 4]]\n", [[-2 ** 0.5, 2.0], [3, 2]]),
    ("scores = np.array([1/3, -1/3])\n", [1 / 3, -1 / 3]),
])
def test_by_hand_reads_honest_forms(src, value):
    assert _read(src) == value


@pytest.mark.parametrize("src", ["scores = v_scores.answer\n", "scores = np.array(v.answer)\n",
                                 "scores = [x for x in range(3)]\n", "scores = [math.exp(1) / 2]\n",
                                 "scores = [1 / n]\n", "scores = [1 << 3]\n"])
def test_by_hand_code_is_not_an_answer(src):
    with pytest.raises(ValueError, match="numbers themselves"):
        _read(src)


@pytest.mark.parametrize("src, why", [("scores = [10 ** 10 ** 10]\n", "power above 64"),
                                      ("scores = [1 / 0]\n", "divides by zero"),
                                      ("scores = [1e308 * 10]\n", "not a finite"),
                                      ("scores = [(-8) ** 0.5]\n", "not a real number")])
def test_by_hand_arithmetic_that_cannot_be_an_answer_says_why_at_once(src, why):
    with pytest.raises(ValueError, match=why):
        _read(src)


def _by_hand_checks():
    return [(a, c) for a in GRADED for c in qa.spec(a).checks if isinstance(c, ByHandCheck)]


@pytest.mark.parametrize("assignment, check", _by_hand_checks(), ids=lambda x: getattr(x, "grade_id", x))
def test_malformed_by_hand_answer_fails_only_its_item(assignment, check):
    """A row one entry short, a string of garbage, a nested dict: the item fails with a reason;
    nothing raises (which would error the whole submission)."""
    right = check.variant("alice").answer
    short = right[:-1] if isinstance(right, list) and right else [1.0]
    if isinstance(right, list) and right and isinstance(right[0], list):
        short = [right[0][:-1]] + right[1:]  # first row one entry short
    for value in (short, "1, 2, x", {"a": 1}, [[1, 2], [3]], [], "", [[[[]]]]):
        out = check.judge(value, {}, "alice")
        assert out.ok is False and out.message, (check.grade_id, value)
    assert check.judge(right, {}, "alice").ok, check.grade_id


def test_by_hand_variant_is_the_students_own_without_touching_the_environment(monkeypatch):
    import os

    from attnlab.practice import get_skill, learner_id, seed_for
    check = ByHandCheck("t", cell="c", variable="scores", skill="sdpa_scores", key="02/test_scores_by_hand")
    monkeypatch.setenv("ATTNLAB_LEARNER", "someone-else")
    v = check.variant("alice")
    assert os.environ["ATTNLAB_LEARNER"] == "someone-else"
    monkeypatch.setenv("ATTNLAB_LEARNER", "alice")
    assert v.answer == get_skill("sdpa_scores").variant(seed_for(learner_id(), check.key)).answer


def test_by_hand_numbers_of_another_learner_are_flagged_not_silently_zeroed(monkeypatch):
    """Right numbers for the id the notebook ran under ('alice') while graded as 'stu6': no credit,
    a flag for review that names both ids.  Wrong numbers that fit nobody: no flag."""
    check = ByHandCheck("t", cell="c", variable="scores", skill="sdpa_scores", key="02/test_scores_by_hand")
    alice = check.variant("alice").answer
    out = check.judge(alice, {"other_learners": ["stu1", "alice", "stu6"]}, "stu6")
    assert not out.ok and out.flag and "'alice'" in out.flag and "review" in out.message
    assert check.judge(alice, {"other_learners": ["alice"]}, "alice").ok
    wrong = check.judge([[99.0] * len(alice[0])] * len(alice), {"other_learners": ["alice"]}, "stu6")
    assert not wrong.ok and wrong.flag is None


def test_learner_id_crosses_as_data_not_prose(monkeypatch):
    """The setup cell's ``learner_note()`` publishes the id as a ``display_data`` record of its own
    MIME type, and the grader reads that record (NFC-normalised: 'é' typed as e + combining accent
    is the same id); printed prose naming an id is not read at all (it is text the student can
    write), and a record of the wrong shape is skipped."""
    import json
    import unicodedata

    import nbformat
    from IPython.core.interactiveshell import InteractiveShell
    from attnlab.identity import LEARNER_MIME, learner_ids_in
    from attnlab.practice.problem import learner_note
    from attnlab_grader.judging.by_hand import submitted_learner_ids
    shell = InteractiveShell.instance()
    published = []
    monkeypatch.setattr(shell.display_pub, "publish", lambda data, **kw: published.append(data))
    decomposed = unicodedata.normalize("NFD", "zoé")
    monkeypatch.setenv("ATTNLAB_LEARNER", decomposed)
    try:
        text = learner_note()
    finally:
        InteractiveShell.clear_instance()
    assert published == [{LEARNER_MIME: {"learner_id": unicodedata.normalize("NFC", "zoé")}}]
    record = nbformat.v4.new_output("display_data", data=json.loads(json.dumps(published[0])))
    prose = nbformat.v4.new_output("stream", name="stdout", text=text.replace("zo", "mallory-zo") + "\n"
                                   "By-hand numbers in this notebook are drawn for learner id 'bob'\nlearner: carol\n")
    odd = nbformat.v4.new_output("display_data", data={LEARNER_MIME: ["not", "an", "object"]})
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(learner_note())")])
    nb.cells[0].outputs = [prose, odd, record]
    assert submitted_learner_ids(nb) == learner_ids_in(nb) == ["zoé"]
    nb.cells[0].outputs = [prose]  # a notebook saved before the record existed: nothing to flag
    assert submitted_learner_ids(nb) == []


def test_sandbox_gpt_matches_attnlab_gpt(monkeypatch):
    """The GPT that sets 08/09 build in the sandbox (autograder/attnlab_grader/judging/reference_gpt.py) is attnlab.nn.GPT's
    own code, built without ``attnlab`` importable (as in the sandbox): same bytecode for every
    method, same logits and loss with the same weights (tied output layer), the grader's weight
    exchange without ``lm_head.weight``, no decoding method, and nothing left behind but
    ``_GraderGPT`` (no private module in ``sys.modules``)."""
    import inspect
    import math
    import sys

    import torch
    import torch.nn.functional as F
    from torch import nn

    from attnlab.nn import GPT, GPTConfig
    from attnlab_grader.judging.reference_gpt import GPT_SETUP, PRIVATE, REMOVED
    monkeypatch.setitem(sys.modules, "attnlab", None)  # the sandbox hides attnlab: any import of it fails
    ns = {"__name__": "__main__", "torch": torch, "nn": nn, "F": F, "math": math}
    exec(compile(GPT_SETUP, "<grader setup>", "exec"), ns)  # noqa: S102 - the course's own setup code
    assert set(ns) - {"__builtins__"} == {"__name__", "torch", "nn", "F", "math", "_GraderGPT"}
    assert not [m for m in sys.modules if m.startswith(PRIVATE)]
    torch.manual_seed(0)
    cfg = (11, 8, 8, 2, 2)
    ref = GPT(GPTConfig(*cfg)).double().eval()
    ours = ns["_GraderGPT"](*cfg).double().eval()
    built = type(ours)
    assert built is not GPT and built.__module__ == f"{PRIVATE}.gpt"  # a private copy, not the grader's class
    for name, member in vars(GPT).items():  # ... of the same code, method by method
        if inspect.isfunction(member) and name not in REMOVED:
            assert vars(built)[name].__code__.co_code == member.__code__.co_code, name
    for sub_ref, sub_ours in zip(ref.modules(), ours.modules()):  # and so are its submodules' classes
        assert type(sub_ref).__qualname__ == type(sub_ours).__qualname__
        if type(sub_ref).__module__.startswith("attnlab."):
            assert type(sub_ours).forward.__code__.co_code == type(sub_ref).forward.__code__.co_code
    assert not any(hasattr(ours, name) for name in REMOVED)  # the student writes decoding (set 08)
    state = {k: v for k, v in ref.state_dict().items() if k != "lm_head.weight"}
    assert set(ours.state_dict()) == set(state)
    ours.load_state_dict(state, strict=True)
    assert ours.lm_head.weight is ours.tok_emb.weight
    idx, targets = torch.randint(0, 11, (3, 8)), torch.randint(0, 11, (3, 8))
    with torch.no_grad():
        (l_ref, loss_ref), (l_ours, loss_ours) = ref(idx, targets), ours(idx, targets)
    assert torch.equal(l_ref, l_ours) and torch.equal(loss_ref, loss_ours)


def test_a_recognised_mistake_is_reported_by_name_and_a_plain_wrong_answer_is_not():
    """The class report ranks ``Verdict.mistake``; only a matched mistake sets it."""
    from attnlab_grader.judging.spec import FunctionCheck

    check = FunctionCheck("test_double", target="double", inputs=lambda rng: {"x": np.arange(3.0)},
                          call="double(_I['x'])", reference=lambda x: 2 * x,
                          mistakes={"no_scale": lambda x: x})
    raw = {"x": np.arange(3.0)}
    assert check.judge(np.arange(3.0) * 2, raw, "s").mistake is None
    matched = check.judge(np.arange(3.0), raw, "s")
    assert not matched.ok and matched.mistake == "no_scale"
    other = check.judge(np.arange(3.0) + 7, raw, "s")
    assert not other.ok and other.mistake is None


def test_a_by_hand_mistake_is_reported_by_its_catalogue_name():
    from attnlab.practice import get_skill

    check = ByHandCheck("test_scores_by_hand", cell="c", variable="scores", skill="sdpa_scores", key="k")
    skill, v = get_skill("sdpa_scores"), check.variant("ada")
    wrong = skill.mistakes["no_scale"](v.data)
    out = check.judge(np.asarray(wrong).tolist(), {}, "ada")
    assert not out.ok and out.mistake == "no_scale"


def test_coinciding_mistakes_are_all_named_and_later_trials_tell_them_apart():
    """n_layers = 2 makes 'forgot the layers' and 'forgot K and V' give one number: the first trial
    names both; a later trial with n_layers = 3 keeps only the one that was made."""
    from attnlab_grader.judging.engine import _narrow
    from attnlab_grader.judging.spec import FunctionCheck, encode

    def ref(n_layers, n):
        return 2 * n_layers * n

    check = FunctionCheck("test_kv", target="kv", inputs=lambda rng: {}, call="kv()", reference=ref,
                          mistakes={"forget_layers": lambda n_layers, n: 2 * n,
                                    "kv_forget_factor_two": lambda n_layers, n: n_layers * n})
    first = check.judge(2 * 5, {"n_layers": 2, "n": 5}, "s")  # forgot the layers, at n_layers = 2
    assert not first.ok and set(first.mistakes) == {"forget_layers", "kv_forget_factor_two"}
    assert "forgot" in first.message or "same values" in first.message
    later = [({"status": "ok", "value": encode(2 * 7)}, {"n_layers": 3, "n": 7})]
    narrowed = _narrow(check, first, later, "s")
    assert narrowed.mistake == "forget_layers" and narrowed.mistakes == ("forget_layers",)
    assert _narrow(check, first, [], "s").mistakes == first.mistakes  # nothing to tell them apart


def test_a_grading_spec_is_loaded_once_per_process(tmp_path):
    """Each grading.py runs once per grading process (not once per submission), and again when
    the file changes."""
    from attnlab_grader.judging.spec import load_spec
    path = tmp_path / "01_x" / "grading.py"
    path.parent.mkdir()
    path.write_text("LOADS = []\nLOADS.append(1)\nCHECKS = []\n")
    first = load_spec(path)
    assert load_spec(path) is first
    path.write_text("LOADS = []\nCHECKS = []\nTIMEOUT = 3\n")
    assert load_spec(path) is not first and load_spec(path).timeout == 3.0


def test_a_spec_in_several_files_loads_each_part_once_and_says_which_is_missing(tmp_path):
    """A grading spec split into ``grading_*.py`` siblings: each sibling is executed once per process
    (its caches shared by every submission), again when it changes, and a missing one is named."""
    import os

    from attnlab_grader.judging.spec import load_sibling, load_spec
    folder = tmp_path / "01_x"
    folder.mkdir()
    (folder / "grading_part.py").write_text("RUNS = []\nRUNS.append(1)\nVALUE = 1\n")
    (folder / "grading.py").write_text("from attnlab_grader.judging.spec import load_sibling\n"
                                       "part = load_sibling(__file__, 'grading_part')\nCHECKS = []\n")
    first = load_sibling(folder / "grading.py", "grading_part")
    assert load_sibling(folder / "grading.py", "grading_part") is first and first.RUNS == [1]
    assert load_spec(folder / "grading.py") is not None
    assert load_sibling(folder / "grading.py", "grading_part") is first, "loading the spec ran its part again"
    (folder / "grading_part.py").write_text("VALUE = 2\n")
    os.utime(folder / "grading_part.py", ns=(1, 1))
    assert load_sibling(folder / "grading.py", "grading_part").VALUE == 2
    with pytest.raises(FileNotFoundError, match="grading_gone.py"):
        load_sibling(folder / "grading.py", "grading_gone")


def test_checks_that_bring_reference_code_into_the_sandbox_run_alone():
    """A check whose setup builds the grader's GPT (attnlab.nn's own source) is marked to run apart
    from the others, so that reference code is never in the process while a function that does not
    use it is graded; the set's other checks are not."""
    from attnlab_grader.judging.reference_gpt import GPT_SETUP, builds_reference
    from attnlab_grader.judging.spec import rng_from_urandom
    jobs = [j[0] for c in qa.spec("08_training_and_decoding").checks if (j := c.jobs(rng_from_urandom())) is not None]
    marked = [j["id"] for j in jobs if builds_reference(j)]
    assert marked and all(GPT_SETUP in j["setup"] for j in jobs if j["id"] in marked)
    assert len(marked) < len(jobs)


#: by-hand answer cells of each adversarial kind, written as a literal and as a string (read later by
#: ``attnlab.practice.answers.parse``): (what, cell source, words of the verdict)
ADVERSARIAL_BY_HAND = [
    ("nested powers", "n = ((9**64)**64)**64\n", "larger than 1.8e308"),
    ("nested powers, string", "n = '((9^64)^64)^64'\n", "larger than 1.8e308"),
    ("tower of powers", "n = 9**9**9**9\n", "power above 64"),
    ("long digit string", "n = " + "9" * 4000 + "\n", "larger than 1.8e308"),
    ("long digit string, string", "n = '" + "9" * 4000 + "'\n", "more than 320 digits"),
    ("digits past Python's int limit", "n = " + "9" * 5000 + "\n", "not valid Python"),
    ("huge factors", "n = " + "*".join(["999999**51"] * 40) + "\n", "larger than 1.8e308"),
    ("huge factors, string", "n = '" + "*".join(["9" * 300] * 6) + "'\n", "larger than 1.8e308"),
    ("deep parentheses", "n = " + "(" * 5000 + "1" + ")" * 5000 + "\n", "not valid Python"),
    ("deep signs", "n = " + "-" * 20_000 + "1\n", "too deeply nested"),
    ("long chain", "n = " + "+".join(["1"] * 600) + "\n", "levels deep"),
    ("huge repetition", "n = " + "+".join(["1"] * 12_000) + "\n", "could not be read"),
    ("huge repetition, string", "n = '" + "1+" * 20_000 + "1'\n", "over the 2,000"),
    ("many elements", "n = [" + ", ".join(["1"] * 6000) + "]\n", "more than 5,000"),
]


@pytest.mark.parametrize("what, src, words", ADVERSARIAL_BY_HAND, ids=[a[0] for a in ADVERSARIAL_BY_HAND])
def test_adversarial_by_hand_answer_is_a_verdict_in_words_at_once(what, src, words):
    """The grader's own process reads and judges each within its bounds: a verdict for that item, in words,
    in well under a second (before the bounds, the nested powers took 26-43 s, one level more never ended)."""
    import time
    check = ByHandCheck("test_params_by_hand", variable="n", skill="gpt_param_count",
                        key="09_capstone/test_params_by_hand")
    check.judge(1, {}, "alice")  # imports and the variant: not part of the bound
    start = time.perf_counter()
    try:
        message = check.judge(check.read([("params_by_hand", src)]), {}, "alice").message
    except ValueError as err:  # read() refuses with the item's verdict
        message = str(err)
    took = time.perf_counter() - start
    assert words in message, (what, message)
    assert "OverflowError" not in message and "could not be checked" not in message, message
    assert took < 1.0, f"{what}: {took:.2f} s"


def test_a_by_hand_verdict_quotes_a_long_answer_only_in_part():
    """A 40 000-character unreadable answer: the verdict (which reaches feedback, report and CSV) stays short
    and says it was cut."""
    from attnlab_grader.judging.by_hand import MAX_MESSAGE_CHARS
    check = ByHandCheck("t", cell="c", variable="scores", skill="sdpa_scores", key="k")
    out = check.judge("[[" + "1 x " * 10_000 + "]]", {}, "alice")
    assert not out.ok and len(out.message) <= MAX_MESSAGE_CHARS + 20 and "characters in all" in out.message
