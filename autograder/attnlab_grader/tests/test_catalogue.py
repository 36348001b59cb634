"""One catalogue of named mistakes: every name a grading spec uses -- a key
of ``FunctionCheck.mistakes`` or a QA case's ``# mistake:`` header -- is an entry of
``attnlab.practice.misconceptions.MISCONCEPTIONS``, so feedback, the class report and practice
cards speak with one set of words.  Fast: reads the specs, grades nothing."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from attnlab.practice.misconceptions import MISCONCEPTIONS
from attnlab_grader.judging.spec import FunctionCheck, load_spec, mistake_text, named_mistakes, unknown_mistakes

SOLUTIONS = Path(__file__).resolve().parents[3] / "solutions"
SETS = sorted(p.parent.name for p in SOLUTIONS.glob("*/grading.py"))

#: QA wrong cases that deliberately name no catalogue entry, by category: they are not a mistake
#: about the concept (the stub left, a crash, a library call the rules forbid, ...), so no
#: feedback text would teach anything.  Every other wrong case must name its mistake.
UNNAMED = {
    # calls the library function the exercise asks the student to write (flagged "used the library version")
    "01_routing_and_soft_lookup": ["soft_lookup_calls_library_attention"],
    "02_scaled_dot_product_attention": ["sdpa_uses_fused_kernel", "softmax_calls_torch"],
    "08_training_and_decoding": ["loss_uses_cross_entropy"],
    # the interface, not the concept: a broadcastable (B, 1, S) mask where (B, S, S) is asked; GiB, not bytes
    "07_encoder_decoder": ["masks_unexpanded"],
    "10_costs_and_limits": ["kv_returns_float", "count_dedupes_by_data_ptr"],
    # an implementation detail that shows at one parity of d_model / 2 only (what the trials force)
    "04_positional_encoding": ["pe_two_pairs_per_step"],
    # a storage address taken as a parameter's identity: wrong only where storage has no address (meta);
    # ... and torch's own TransformerEncoderLayer counted instead of the formula (the library version)
    "06_transformer_block": ["count_dedupes_by_data_ptr", "block_count_builds_torch_layer"],
    # a doubled gradient (backward twice): what clipping hides unless a trial leaves the clip inactive
    # ... and the interface: a TinyGPT that returns the logits alone (no (logits, loss) pair)
    "09_capstone": ["gpt_returns_logits_only", "step_backward_twice", "step_fakes_the_loss"],
}
#: adversarial by-hand text (nested powers, long digit strings, huge factors, long chains): no concept is
#: mistaken; the bounds on typed arithmetic refuse it in words
for _set, _name in [("05_multi_head_attention", "by_hand_params_huge_factors"),
                    ("08_training_and_decoding", "by_hand_cache_bytes_long_chain"),
                    ("09_capstone", "by_hand_params_nested_powers"),
                    ("10_costs_and_limits", "by_hand_memory_long_digits")]:
    UNNAMED.setdefault(_set, []).append(_name)
#: a crash at a boundary (top_k = V, n = 0), a contract kept on one branch only, and set 09's training loops that
#: under-train or return weights from elsewhere: the trials and the training run's provenance rule catch them,
#: and the verdict says what happened in words; no concept of the catalogue is mistaken
#: ... and softmaxes shifted by the minimum or not at all in a hand-written loss, whose overflow the trials catch
#: on every draw but whose output no mistake model reproduces on every draw (the no-shift model matches on some)
for _set, _name in [("08_training_and_decoding", "top_k_threshold_index_crashes_at_k_eq_v"),
                    ("09_capstone", "sample_top_k_index_crashes_at_k_eq_v"),
                    ("08_training_and_decoding", "greedy_crashes_at_n_0"),
                    ("01_routing_and_soft_lookup", "soft_lookup_min_shift"),
                    ("02_scaled_dot_product_attention", "softmax_min_shift"),
                    ("08_training_and_decoding", "loss_log_of_softmax_by_hand"),
                    ("04_positional_encoding", "pe_checks_only_odd_d_model"),
                    *(("09_capstone", n) for n in ("step_accumulates_four_batches", "step_freezes_layernorms",
                                                   "step_loads_weights_trained_elsewhere", "step_loss_divided_by_batch",
                                                   "step_sets_its_own_learning_rate",
                                                   "step_updates_every_other_call"))]:
    UNNAMED.setdefault(_set, []).append(_name)


@pytest.fixture(scope="module")
def specs():
    return {a: load_spec(SOLUTIONS / a / "grading.py") for a in SETS}


def test_every_mistake_name_of_every_set_is_in_the_catalogue(specs):
    assert len(SETS) >= 10
    problems = [line for spec in specs.values() for line in unknown_mistakes(spec)]
    assert not problems, "\n".join(problems)
    keys = [k for spec in specs.values() for c in spec.checks if isinstance(c, FunctionCheck) for k in c.mistakes]
    assert len(keys) >= 80  # the sets' FunctionCheck.mistakes, all by name now


def test_a_name_outside_the_catalogue_is_reported_with_where_it_is_used(specs):
    spec = specs["02_scaled_dot_product_attention"]
    check = spec.check_for("test_attention_scores")
    saved = dict(check.mistakes)
    try:
        check.mistakes["no 1/√d_k scale"] = lambda q, k: q  # the old free-text style
        problems = unknown_mistakes(spec)
    finally:
        check.mistakes.clear()
        check.mistakes.update(saved)
    assert len(problems) == 1 and "'no 1/√d_k scale'" in problems[0] and "test_attention_scores" in problems[0]
    assert named_mistakes(spec)["no_scale"][0] == "test_attention_scores"


def test_feedback_words_come_from_the_catalogue():
    m = MISCONCEPTIONS["mask_after_softmax"]
    assert mistake_text("mask_after_softmax") == f"{m.title}. {m.why}"
    for m in MISCONCEPTIONS.values():  # every entry reads as feedback: "you ...", and says why
        assert m.title.startswith(("you ", "your ")), m
        assert len(m.why) > 20, m


def test_one_name_for_a_mistake_made_in_several_ways():
    """``mistakes[name]`` may be a tuple of models (e.g. ReLU always or GELU always = the activation
    ignored): any of them names the mistake; a plain wrong value names none."""
    import numpy as np
    check = FunctionCheck("t", target="f", inputs=lambda rng: {"x": np.arange(3.0)}, call="f(_I['x'])",
                          reference=lambda x: x + 1,
                          mistakes={"temperature_ignored": (lambda x: x, lambda x: x + 2)})
    raw = {"x": np.arange(3.0)}
    assert check.judge(np.arange(3.0) + 1, raw, "s").ok
    for made in (np.arange(3.0), np.arange(3.0) + 2):
        out = check.judge(made, raw, "s")
        assert not out.ok and out.mistake == "temperature_ignored"
        assert MISCONCEPTIONS["temperature_ignored"].title in out.message
    assert check.judge(np.arange(3.0) * 5, raw, "s").mistake is None


def test_every_wrong_case_names_its_mistake_unless_listed_as_not_a_concept_mistake(specs):
    unnamed = sorted(f"{a}/{n}" for a, spec in specs.items() for n, c in spec.wrong.items() if not c.mistake)
    listed = sorted(f"{a}/{n}" for a, names in UNNAMED.items() for n in names)
    assert unnamed == listed, (f"name these (# mistake: <catalogue name>): {sorted(set(unnamed) - set(listed))}; "
                               f"no longer unnamed: {sorted(set(listed) - set(unnamed))}")


def test_headers_are_read_by_the_loader_not_by_a_second_parser(specs):
    """A ``# mistake:`` line the loader does not see (a typo such as ``# mistakes:``) would
    silently leave a case unnamed: every header-like line must be one the loader reads."""
    for spec in specs.values():
        for case in spec.wrong.values():
            head = case.path.read_text(encoding="utf-8").split("# %%", 1)[0]
            for line in head.splitlines():
                if re.match(r"# *\w+:", line):
                    assert re.fullmatch(r"# *(breaks|mistake|xfail): *.*", line), f"{case.path}: {line!r}"


from attnlab_grader.tests.conftest import GRADED, needs_sandbox  # noqa: E402


def _recognisable(spec, case) -> bool:
    """True when one of the items ``case`` breaks knows its named mistake: a key of that check's
    ``mistakes`` or a mistake of the by-hand skill it checks."""
    from attnlab.practice import get_skill
    from attnlab_grader.judging.spec import ByHandCheck
    for gid in case.breaks:
        check = spec.check_for(gid)
        known = (get_skill(check.skill).mistakes if isinstance(check, ByHandCheck)
                 else getattr(check, "mistakes", None) or {})
        if case.mistake in known:
            return True
    return False


@needs_sandbox
@pytest.mark.slow
@pytest.mark.xdist_group("grading")
@pytest.mark.parametrize("assignment", GRADED)
def test_the_grader_recognises_the_named_mistake_of_each_wrong_case(qa_graded, assignment):
    """Where a broken item knows the case's ``# mistake:`` (see :func:`_recognisable`), the grade
    report names exactly that mistake for at least one broken item (``Verdict.mistake``): the feedback
    and the class report then use the catalogue's words for it.  A case whose code raises is shown
    the exception instead (nothing to compare)."""
    from attnlab_grader.judging.verdict import Kind
    cases, reports, error = qa_graded[assignment]
    if not cases and not error:
        pytest.skip(f"{assignment} was not graded in this session (select its course QA test too)")
    assert not error, error
    spec = load_spec(SOLUTIONS / assignment / "grading.py")
    problems, checked = [], 0
    for name, case in spec.wrong.items():
        if not case.mistake or not _recognisable(spec, case):
            continue
        items = reports[cases[name]]["items"]
        if all(items[g].kind is Kind.RAISED for g in case.breaks if g in items):
            continue  # the code raised (e.g. equiv_batch_axis: x[perm] on a short batch axis): no value to name
        checked += 1
        got = {g: list(items[g].mistakes) or [items[g].mistake] for g in case.breaks if g in items}
        if not any(case.mistake in names for names in got.values()):
            problems.append(f"{name}: named {case.mistake!r}, the grader reported {got}")
    assert not problems, "\n".join(problems)
    assert checked or not any(c.mistake and _recognisable(spec, c) for c in spec.wrong.values()), \
        f"{assignment}: no case was checked"
