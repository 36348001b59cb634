"""The course registry: the one home of the course's lessons, their order, titles, notebooks,
exercise sets, gate prerequisites and estimated times.

Everything else reads it: :func:`attnlab.practice.gate` and the mastery engine
(:mod:`attnlab.practice.mastery`: ``LESSONS``, ``LAST_LESSON``, ``PREREQUISITES`` are derived from
it), the grader's assignment list (:func:`autograder.course.assignments`), the ``attnlab gate`` command,
and the README's course table (:func:`course_table_markdown`, written by
``python scripts/render_tables.py --write``; ``tests/test_course_registry.py`` fails when the
README, the lesson notebooks' titles or the ``solutions/`` and ``exercises/`` folders disagree with it).

Times are **estimates**, not measurements with learners:

* ``minutes`` (a lesson): the lesson authors' estimates, as the README's course table gave them
  before this registry existed;
* ``exercise_minutes``: estimated at about 5 minutes per graded nbgrader point of the set, rounded to
  5 minutes (points in ``solutions/`` when this was written: 01-03: 11, 04: 9, 05: 12, 06-07: 10,
  08: 12, 09: 11, 10: 9). Nobody has timed a student on them yet.

Source: the course's own design (README "The course", the lessons' "You will be able to" cells); no
paper.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Lesson", "UnknownLesson", "lesson_id", "lessons", "lesson", "exercise_sets", "course_table_markdown"]


@dataclass(frozen=True)
class Lesson:
    """One lesson of the course and the exercise set that follows it.

    ``id``: two digits, ``"00"`` .. ``"10"``. ``title``: the notebook's heading after
    ``"Lesson NN · "`` (a test compares). ``notebook``: the file name in ``lessons/`` (its text source
    is ``lessons/src/<stem>.py``). ``outcomes``: what a learner will be able to do (the README's
    "you will be able to"). ``prerequisites``: skill names (``attnlab.practice`` skills of earlier
    lessons) that the lesson's gate checks. ``minutes`` / ``exercise_minutes``: estimated working time
    (see the module docstring); ``time_note``: a remark shown after the lesson time. ``exercise``: the
    nbgrader assignment name (folder of ``solutions/`` and ``exercises/``), or None (lesson 00 has none).
    """

    id: str
    title: str
    notebook: str
    outcomes: str
    prerequisites: tuple[str, ...]
    minutes: int
    exercise: str | None = None
    exercise_minutes: int | None = None
    time_note: str = ""

    @property
    def number(self) -> int:
        """The lesson number as an int (``"03"`` -> 3)."""
        return int(self.id)

    @property
    def notebook_path(self) -> str:
        """The notebook relative to the repository root, POSIX style (``lessons/03_masks.ipynb``)."""
        return f"lessons/{self.notebook}"

    @property
    def source_path(self) -> str:
        """The notebook's text source relative to the repository root (``lessons/src/03_masks.py``)."""
        return f"lessons/src/{self.notebook.removesuffix('.ipynb')}.py"

    @property
    def exercise_path(self) -> str | None:
        """The student notebook of the exercise set relative to the repository root, or None."""
        return f"exercises/{self.exercise}/{self.exercise}.ipynb" if self.exercise else None


_LESSONS: tuple[Lesson, ...] = (
    Lesson("00", "Orientation", "00_orientation.ipynb",
           "use the course loop (lesson → mastery check → exercise → gate), read the notation (B, L, S, d_model, "
           "d_k, d_v, H), compute a softmax and matrix shapes",
           (), 20),
    Lesson("01", "The routing problem", "01_routing_problem.ipynb",
           "compare path lengths and sequential operations of RNNs, CNNs and attention, explain vanishing products "
           "of Jacobians, the agreement trap and the seq2seq bottleneck that additive (Bahdanau) attention removed, "
           "compute a soft lookup",
           ("warmup_softmax",), 55, "01_routing_and_soft_lookup", 55),
    Lesson("02", "Scaled dot-product attention", "02_scaled_dot_product_attention.ipynb",
           "compute QKᵀ/√d_k, the row softmax and AV by hand (the 2-token example), explain the √d_k scale with the "
           "variance argument, use a boolean mask and attention dropout",
           ("soft_lookup_weights", "soft_lookup_output"), 60, "02_scaled_dot_product_attention", 55),
    Lesson("03", "Masks: who is allowed to look at whom", "03_masks.ipynb",
           "build causal (square and rectangular, S > L) and padding masks, combine them, spot mask-after-softmax, "
           "inverted polarity and fully masked rows, convert between library conventions",
           ("sdpa_softmax_row", "sdpa_full"), 50, "03_masks", 55),
    Lesson("04", "Order and position", "04_positional_encoding.ipynb",
           "show permutation equivariance (and why it is not invariance), compute sinusoidal encodings, use learned "
           "and rotary positions and relative position biases, know the extrapolation caveat",
           ("causal_mask_build", "masked_softmax"), 55, "04_positional_encoding", 45),
    Lesson("05", "Multi-head attention", "05_multi_head_attention.ipynb",
           "trace every shape (B, L, d_model) → (B, H, L, d_k) → back, split/merge heads, work an \"it → animal\" "
           "head with numbers, count parameters, compare MQA/GQA",
           ("sdpa_scale", "sdpa_full"), 65, "05_multi_head_attention", 60),
    Lesson("06", "The Transformer block", "06_transformer_block.ipynb",
           "explain FFN (ReLU and GELU), residuals, LayerNorm, pre-LN vs post-LN (with an experiment), count a "
           "block's parameters",
           ("mha_shape_trace", "mha_param_count"), 60, "06_transformer_block", 50),
    Lesson("07", "Encoders, decoders and cross-attention", "07_encoder_decoder.ipynb",
           "choose masks and Q/K/V streams per family, use cross-attention with source padding, train a small "
           "encoder–decoder and read its alignment, explain pre-training, BERT's MLM and pooling, test causality by "
           "perturbation",
           ("combine_masks_build", "block_param_count"), 65, "07_encoder_decoder", 50),
    Lesson("08", "Training and decoding", "08_training_and_decoding.ipynb",
           "use teacher forcing, the shifted loss, `<bos>` and `ignore_index` padding, perplexity and label "
           "smoothing, decode greedily, with beam search and with temperature/top-k/top-p, measure the KV cache",
           ("choose_mask", "causal_mask_build"), 75, "08_training_and_decoding", 60),
    Lesson("09", "Capstone: train your own GPT", "09_capstone_gpt.ipynb",
           "measure what each piece buys on a ladder (bigram → attention → heads → FFN → residual & LayerNorm → stack), train a character-level GPT on Tiny Shakespeare, sample from it, read its heads",
           ("next_token_targets", "top_k_probs"), 60, "09_capstone", 70,
           time_note="+ about 2 min of training on 2 cores"),
    Lesson("10", "Costs, results and limits", "10_costs_and_limits.ipynb",
           "measure the O(L²·d) cost, place the original results, name the failure modes",
           ("mha_param_count", "gpt_param_count"), 45, "10_costs_and_limits", 45),
)
_BY_ID = {entry.id: entry for entry in _LESSONS}


class UnknownLesson(ValueError):
    """Raised by :func:`lesson` for a lesson the course does not have (or an id that is not a number).

    The message says what was asked for and the valid range, e.g. ``there is no lesson 11 in this
    course: the lessons are 00 to 10``; ``requested`` holds the argument as given.
    """

    def __init__(self, requested: object):
        self.requested = requested
        text = str(requested).strip()
        try:
            lesson_id(text)
            shown = text
        except ValueError:
            shown = repr(requested)
        super().__init__(f"there is no lesson {shown} in this course: the lessons are "
                         f"{_LESSONS[0].id} to {_LESSONS[-1].id}")


def lesson_id(lesson: str | int) -> str:
    """Normalise ``3``, ``"3"``, ``"03"`` or ``"03_masks"`` to ``"03"`` (whether or not the course has it).

    Raises ValueError (``lesson must look like '03' or 3``) when the text does not start with digits.
    """
    text = str(lesson).strip()
    digits = text.split("_", 1)[0]
    if not digits.isdigit():
        raise ValueError(f"lesson must look like '03' or 3, got {lesson!r}")
    return f"{int(digits):02d}"


def lessons() -> tuple[Lesson, ...]:
    """Every lesson of the course, in order (``"00"`` first)."""
    return _LESSONS


def lesson(which: str | int) -> Lesson:
    """The lesson ``which`` names: ``3``, ``"3"``, ``"03"`` or ``"03_masks"``.

    Raises :class:`UnknownLesson` (a ValueError) naming the argument and the valid range when the
    course has no such lesson or the argument is not a lesson number.
    """
    try:
        return _BY_ID[lesson_id(which)]
    except (KeyError, ValueError):
        raise UnknownLesson(which) from None


def exercise_sets() -> tuple[str, ...]:
    """The nbgrader assignment names (folders of ``solutions/`` and ``exercises/``), in lesson order."""
    return tuple(entry.exercise for entry in _LESSONS if entry.exercise)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def course_table_markdown() -> str:
    """The README's course table (GitHub Markdown, links relative to the repository root), with a
    closing line giving the total estimated time. Ends with a newline."""
    rows = ["| # | lesson | you will be able to | gate: skills needed first | time | exercise (autograded) |",
            "|---|---|---|---|---|---|"]
    for entry in _LESSONS:
        gate = ", ".join(f"`{name}`" for name in entry.prerequisites) or "–"
        time = f"{entry.minutes} min" + (f" ({entry.time_note})" if entry.time_note else "")
        exercise = (f"[{entry.exercise}]({entry.exercise_path}), about {entry.exercise_minutes} min"
                    if entry.exercise else "–")
        rows.append(f"| {entry.id} | [{_cell(entry.title)}]({entry.notebook_path}) | {_cell(entry.outcomes)} | "
                    f"{gate} | {time} | {exercise} |")
    lesson_total = sum(entry.minutes for entry in _LESSONS)
    exercise_total = sum(entry.exercise_minutes or 0 for entry in _LESSONS)
    rows += ["", f"In all about {lesson_total / 60:.0f} h of lessons and {exercise_total / 60:.0f} h of exercises. "
                 "Every time is an estimate: lesson times are the authors', exercise times about 5 minutes per "
                 "graded point; nobody has timed learners yet."]
    return "\n".join(rows) + "\n"
