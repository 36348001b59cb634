"""How concept answers and numbers are read: an option by its letter, number or text (never by a stray letter
inside other words), a letter that names no option asked again at no cost, a decimal comma read as the
expected value suggests, and exact counts written as powers of ten."""
import pytest

from attnlab.practice import ProgressStore, get_skill, mastery
from attnlab.practice.answers import AnswerFormatError, NoSuchOption, parse, read_decimal_comma


def _variant(skill, question):
    s = get_skill(skill)
    return next(s.variant(seed) for seed in range(200) if s.variant(seed).data["question"] == question)


def _letter(v, tag):
    return next(chr(65 + i) for i, (_, t) in enumerate(v.data["options"]) if t == tag)


@pytest.mark.parametrize("form", ["{l}", "{low}", "({low})", "{l})", "{l}.", "Option {l}", "answer: {low}",
                                  "{n}", "({n})", "{text}", "{text_lower}", "{l}. {text}", "({low}) {text}"])
def test_the_right_option_is_read_in_every_form(form):
    """concept_routing "output": the right option's letter, number and text in the forms learners type."""
    v = _variant("concept_routing", "output")
    letter = _letter(v, None)
    text = v.data["options"][ord(letter) - 65][0]
    typed = form.format(l=letter, low=letter.lower(), n=ord(letter) - 64, text=text,
                        text_lower=text.lower().replace("·", " * "))
    fb = v.check(typed)
    assert fb.correct, (typed, fb.message)


def test_a_wrong_options_text_is_charged_to_its_own_mistake():
    v = _variant("concept_routing", "output")
    for i, (text, tag) in enumerate(v.data["options"]):
        if tag is None:
            continue
        for typed in (text, text.lower(), f"{chr(65 + i)}) {text}", str(i + 1)):
            fb = v.check(typed)
            assert not fb.correct and fb.readable and fb.misconception == tag, (typed, fb.message)


@pytest.mark.parametrize("typed", ["a hard lookup of the best key, I think", "the d of d_model", "n",
                                   "it depends on n_heads and d_k", "I would say a or b"])
def test_a_stray_letter_inside_other_words_is_not_an_option(typed):
    """Text that reads as no option is asked again (nothing charged), whatever one-letter words it holds;
    "n" alone is the letter N, which names no option here."""
    v = _variant("concept_heads", "dk")
    fb = v.check(typed)
    assert not fb.correct and not fb.readable and not fb.misconceptions, (typed, fb.message)


def test_options_that_are_values_are_read_by_value():
    """concept_heads "dk": the options are values (64 = d_model / n_heads, ...): "64" is that option, "4" is
    no option's value (not option D), and the formula alone reads as its option."""
    v = _variant("concept_heads", "dk")
    right = _letter(v, None)
    assert parse("64", "choice", options=[t for t, _ in v.data["options"]]) == right
    assert v.check("64").correct and v.check("d_model / n_heads").correct
    fb = v.check("4")
    assert not fb.readable and "No option has the value 4" in fb.message
    assert v.check("option 1").readable  # "option 1" is the first option, whatever its value


def test_a_letter_naming_no_option_is_asked_again_at_no_cost(tmp_path):
    store = ProgressStore("no-such-option", tmp_path)
    skill = get_skill("concept_scale")
    v = mastery.current_variant(store, skill.name)
    n = len(v.data["options"])
    beyond = chr(65 + n)
    out = mastery.submit(store, skill.name, beyond.lower())
    assert not out.feedback.readable and out.feedback.message.startswith(f"There is no option {beyond}: the options "
                                                                         f"are A–{chr(64 + n)}")
    out = mastery.submit(store, skill.name, str(n + 1))
    assert not out.feedback.readable and f"There is no option {n + 1}" in out.feedback.message
    assert store.get(skill.name).attempts == 0 and store.get(skill.name).history == ()
    with pytest.raises(NoSuchOption):
        parse(f"A, {beyond}", "choices", options=[t for t, _ in v.data["options"]])


def test_a_pasted_label_that_disagrees_with_its_text_is_asked_about():
    v = _variant("concept_routing", "output")
    right = _letter(v, None)
    other = next(chr(65 + i) for i in range(len(v.data["options"])) if chr(65 + i) != right)
    text = v.data["options"][ord(right) - 65][0]
    fb = v.check(f"{other}. {text}")
    assert not fb.readable and "answer with the one letter you mean" in fb.message


def test_several_options_by_text_and_number():
    s = get_skill("concept_kv_cache")
    v = next(s.variant(seed) for seed in range(100) if s.variant(seed).data["question"] == "five options")
    right = [i for i, (_, (yes, _m)) in enumerate(v.data["options"]) if yes == "yes"]
    texts = [v.data["options"][i][0] for i in right]
    assert s.check(v, "\n".join(texts)).correct and s.check(v, "; ".join(reversed(texts))).correct
    assert s.check(v, ", ".join(str(i + 1) for i in right)).correct
    assert s.check(v, " and ".join(texts)).correct


@pytest.mark.parametrize(("text", "kind", "expected", "value"), [
    ("3,258", "number", 3.258, 3.258), ("3,258", "number", 3.3, 3.258), ("3,258", "number", 3258.0, 3258.0),
    ("3,258", "int", 3258, 3258), ("3,258", "int", None, 3258), ("0,73", "number", None, 0.73),
    ("≈ 0,73", "number", 0.7, 0.73), ("12,5", "number", None, 12.5), ("1.234,5", "number", None, 1234.5),
    ("-3,258", "number", -3.2, -3.258), ("12,288,000", "int", None, 12288000), ("0,258", "number", None, 0.258),
])
def test_a_decimal_comma_is_read_as_the_expected_value_suggests(text, kind, expected, value):
    assert parse(text, kind, expected=expected) == pytest.approx(value)


@pytest.mark.parametrize(("text", "expected"), [("3,258", None), ("3,258", 60.0), ("3,258", 100.0)])
def test_a_really_ambiguous_decimal_comma_is_asked_about(text, expected):
    with pytest.raises(AnswerFormatError, match="could be 3.258 .* or 3258"):
        read_decimal_comma(text, "number", expected)


def test_a_decimal_comma_on_a_skill_is_judged_without_cost():
    skill = get_skill("uniform_loss")  # ln V to 3 decimals: about 2 .. 10
    v = skill.variant(1)
    typed = f"{v.answer:.3f}".replace(".", ",")
    assert skill.check(v, typed).correct
    fb = skill.check(v, f"{v.answer + 0.5:.3f}".replace(".", ","))
    assert not fb.correct and fb.readable


@pytest.mark.parametrize("text", ["4.129024*10^6", "4.129024e6", "4.129024 × 10^6", "4.129024·10⁶", "4.129024 * 10**6",
                                  "4129024", "4,129,024"])
def test_an_exact_count_written_as_a_power_of_ten(text):
    assert parse(text, "int") == 4129024


@pytest.mark.parametrize("text", ["4.1290245*10^6", "4.13e6.5"])
def test_a_power_of_ten_that_is_no_whole_number_is_not_one(text):
    with pytest.raises(AnswerFormatError):
        parse(text, "int")


def test_a_count_skill_accepts_its_answer_as_a_power_of_ten():
    skill = get_skill("kv_cache_bytes")
    for seed in range(10):
        v = skill.variant(seed)
        digits = str(v.answer)
        typed = f"{digits[0]}.{digits[1:].rstrip('0') or '0'}*10^{len(digits) - 1}"
        assert skill.check(v, typed).correct, (typed, v.answer)
        assert not skill.check(v, f"{digits[0]}.{digits[1:]}1*10^{len(digits) - 1}").correct
