# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: all
#     notebook_metadata_filter: all,-jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] id="0" nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false}
# # Exercise 07 · Encoders, decoders and cross-attention
#
# Lesson 07 put the block into three families: **encoder-only** (BERT: every token sees every real token),
# **decoder-only** (GPT: a causal mask in every self-attention layer) and **encoder–decoder** (the original
# Transformer: an encoder, a causal decoder, and cross-attention from the decoder to the encoder's output).
# The families differ only in their masks and in where keys and values come from. Here you choose masks and
# shapes **by hand**, build every mask of an encoder–decoder **in code**, and write the perturbation test that
# checks a model cannot see the future.
#
# * Cells marked *answer* are yours; every other cell is locked.
# * Run the *check* cell under each answer: for code it tells you right away what is wrong (without giving the answer away); for numbers computed by hand it only says whether your answer can be read. To check your work as the grader does (your numbers, your code on its own inputs), save and run `attnlab check` on this notebook in a terminal (or `from attnlab.check import check; check()` in a cell).
# * Your numbers are personal: they come from your learner id, so a classmate's numbers will not match yours. The setup cell prints that id; it must be the id your course grades you under.
# * Graded: the two by-hand answers (1 point each), `padding_mask` (1), `encoder_decoder_masks` (2),
#   `depends_on_future` (3), and a short written answer (2, graded by your instructor). When your instructor
#   grades, your functions also run on fresh inputs and fresh models (some of them deliberately leaky).
# * Masks are boolean with **True = may attend**, as everywhere in the course.
# * Write your own code with plain tensor operations; importing the course library earns no credit.
#   Allowed imports: `math`, `numpy`, `torch`, `typing`, `functools`, `itertools`, `collections`,
#   `dataclasses`, `einops`.
# * Answer cells may use `math`, `np`, `torch`, `nn`, `F`, `Tensor`, `Optional`, `Sequence` and your own earlier
#   answers; other names defined in locked cells are not available when your work is graded.

# %% id="1" nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from typing import Optional, Sequence
from IPython.display import Markdown, display

from attnlab.nn import DecoderBlock, EncoderBlock, FeedForward
from attnlab.practice import gate
from attnlab.practice.problem import check_form, learner_note, show_problem

ASSIGNMENT = "07_encoder_decoder"
gate("07")  # lists any lesson-07 skill you have not mastered yet; never blocks
print(learner_note())

# %% [markdown] id="2" nbgrader={"grade": false, "grade_id": "by_hand_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1 · By hand
#
# Type **the answer itself** into the answer cell (a mask as a list of rows of `True`/`False` or `1`/`0`,
# a shape as a tuple). Code that computes the answer is not accepted here.

# %% by-hand skill="choose_mask" item="mask" variable="mask" ids="3 4 5"
# answer: mask = [[...], [...], ...], one row per query, 1/0 or True/False (e.g. [[1, 0, 0], [1, 1, 0]])
# Graded outside your kernel: the mask in `mask` is checked against your own variant.

# %% by-hand skill="cross_attention_shapes" item="cross_shape" variable="shape" ids="6 7 8"
# answer: shape = (..., ...), a tuple of integers such as (2, 3, 4, 5)
# Graded outside your kernel: the shape in `shape` is checked against your own variant.

# %% [markdown] id="9" nbgrader={"grade": false, "grade_id": "masks_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2 · In code
#
# ### Every mask of an encoder–decoder
#
# A batch of B source sentences (padded to length S) and B target sentences (padded to length L), right-padded.
# First the padding mask itself, then the three masks that the three attentions of an encoder–decoder need,
# each expanded to its full `(B, queries, keys)` shape:
#
# | attention | queries × keys | what it must hide |
# |---|---|---|
# | encoder self-attention (also every layer of an encoder-only model) | S × S | ? |
# | decoder self-attention (also every layer of a decoder-only model) | L × L | ? |
# | cross-attention (decoder queries, encoder keys and values) | L × S | ? |
#
# Filling in the last column is the exercise.

# %% id="10" nbgrader={"grade": false, "grade_id": "padding_mask", "locked": false, "schema_version": 3, "solution": true}
def padding_mask(lengths: Tensor | list[int], S: int) -> Tensor:
    """Key padding mask from sequence lengths: True = real token that may be attended.

    Sequences are right-padded: example b has real tokens at positions ``0 .. lengths[b] - 1`` and
    padding after (the padding mask of Vaswani et al. 2017, §3.2.3, kept True where attention is allowed).

    Args:
        lengths: ``(B,)`` integer tensor or list of ints, each in ``1 .. S``.
        S: padded sequence length.

    Returns:
        ``(B, S)`` bool tensor. Add axes before use: ``pad[:, None, :]`` -> ``(B, 1, S)``.

    Raises:
        ValueError: if a length is < 1 or > S (a sequence with no real token, or longer than the batch).

    ``attnlab.nn.masks.padding_mask`` also refuses lengths that are not 1-D or not integers; this
    exercise asks only for the range check above.
    """
    ### BEGIN SOLUTION
    lengths = torch.as_tensor(lengths)
    if bool((lengths < 1).any()) or bool((lengths > S).any()):
        raise ValueError(f"every length must be in 1 .. S = {S}, got {lengths.tolist()}")
    return torch.arange(S)[None, :] < lengths[:, None]  # (1, S) < (B, 1) -> (B, S)
    ### END SOLUTION


# %% id="11" nbgrader={"grade": true, "grade_id": "test_padding_mask", "locked": true, "points": 1, "schema_version": 3, "solution": false}
pad = padding_mask([2, 4], 4)
assert isinstance(pad, torch.Tensor) and pad.dtype == torch.bool, "return a bool tensor (True = real token)"
assert tuple(pad.shape) == (2, 4), f"lengths [2, 4] with S = 4 must give (B, S) = (2, 4), got {tuple(pad.shape)}"
assert not pad[0].tolist() == [False, False, True, True], "inverted polarity: True marks the REAL tokens, which may be attended"
assert not pad[0].tolist() == [True, True, True, False], "length 2 means 2 real tokens: positions 0 and 1 (off by one?)"
assert pad.tolist() == [[True, True, False, False], [True, True, True, True]], "right padding: real tokens first, padding after"
assert padding_mask(torch.tensor([1, 3, 2]), 5).tolist()[1] == [True, True, True, False, False], "lengths may also come as a tensor"
for bad in ([0, 2], [5, 2]):
    try:
        padding_mask(bad, 4)
    except ValueError:
        pass
    else:
        raise AssertionError(f"lengths {bad} with S = 4 must raise ValueError (every length must be in 1 .. S)")
print("padding_mask: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: padding_mask runs on fresh lengths and is compared with the
# reference by the grader; lengths outside 1 .. S must raise ValueError.
### END HIDDEN TESTS

# %% id="12" nbgrader={"grade": false, "grade_id": "encoder_decoder_masks", "locked": false, "schema_version": 3, "solution": true}
def encoder_decoder_masks(src_lengths: Tensor | list[int], tgt_lengths: Tensor | list[int], S: int, L: int
                          ) -> tuple[Tensor, Tensor, Tensor]:
    """The three attention masks of an encoder-decoder Transformer (Vaswani et al. 2017, §3.2.3), True = may attend.

    Args:
        src_lengths: ``(B,)`` ints in ``1 .. S``, real lengths of the right-padded source sentences.
        tgt_lengths: ``(B,)`` ints in ``1 .. L``, real lengths of the right-padded target sentences.
        S: padded source length; L: padded target length.

    Returns:
        ``(encoder_self, decoder_self, cross)``, bool tensors of shapes ``(B, S, S)``, ``(B, L, L)``
        and ``(B, L, S)`` (queries × keys), each fully expanded.
    """
    ### BEGIN SOLUTION
    src = padding_mask(src_lengths, S)  # (B, S) real source tokens
    tgt = padding_mask(tgt_lengths, L)  # (B, L) real target tokens
    B = src.shape[0]
    causal = torch.ones(L, L, dtype=torch.bool).tril()  # (L, L): query i sees keys j <= i
    encoder_self = src[:, None, :].expand(B, S, S)  # every query sees every real source token
    decoder_self = causal[None] & tgt[:, None, :]  # (B, L, L): no future, no target padding
    cross = src[:, None, :].expand(B, L, S)  # decoder queries see every real source token
    return encoder_self, decoder_self, cross
    ### END SOLUTION


# %% id="13" nbgrader={"grade": true, "grade_id": "test_encoder_decoder_masks", "locked": true, "points": 2, "schema_version": 3, "solution": false}
result = encoder_decoder_masks([2, 3], [3, 2], S=3, L=4)
assert isinstance(result, tuple) and len(result) == 3, "return a tuple (encoder_self, decoder_self, cross)"
enc, dec, cross = result
for name, m, want in (("encoder_self", enc, (2, 3, 3)), ("decoder_self", dec, (2, 4, 4)), ("cross", cross, (2, 4, 3))):
    assert isinstance(m, torch.Tensor) and m.dtype == torch.bool, f"{name} must be a bool tensor (True = may attend)"
    assert tuple(m.shape) == want, f"{name} must have the full shape (B, queries, keys) = {want}, got {tuple(m.shape)}"
assert enc[0, 0].tolist() != [True, False, False], \
    "the encoder may look at later source tokens: no causal mask in encoder self-attention"
assert enc[0, 2].tolist() != [False, False, False], \
    "mask the padded KEYS (columns), not the padded queries (rows): a padded query row must still see the real tokens"
assert enc[0, 0].tolist() == [True, True, False], "encoder self-attention must hide the padded source keys (and only those)"
assert enc[0, 2].tolist() == [True, True, False], "every query row of the encoder must see the same real source tokens"
assert dec[1, 0].tolist() != [True, True, False, False], "the decoder must not see future target tokens: add the causal mask"
assert dec[0, 3].tolist() != [True, True, True, True], "the decoder must also hide padded target keys"
assert dec[0].tolist() == [[True, False, False, False], [True, True, False, False], [True, True, True, False],
                           [True, True, True, False]], "decoder self-attention: causal AND target key padding"
assert cross[0, 0].tolist() != [True, False, False], \
    "cross-attention needs no causal mask: the whole source sentence is known before decoding starts"
assert cross[:, 0].tolist() == [[True, True, False], [True, True, True]], \
    "cross-attention keys are SOURCE tokens: hide the source padding (src_lengths), not the target's"
print("encoder_decoder_masks: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: encoder_decoder_masks runs on fresh lengths and sizes and the
# three masks are compared with masks built from the library's causal_mask, padding_mask
# and combine_masks by the grader.
### END HIDDEN TESTS

# %% [markdown] id="14" nbgrader={"grade": false, "grade_id": "perturb_intro", "locked": true, "schema_version": 3, "solution": false}
# ### The perturbation test
#
# Lesson 07 proved that a stack of causally masked layers cannot look ahead, and checked it by changing tokens and
# watching the outputs. Write that check as a function. `model` maps `x: (B, L, d_model)` to `(B, L, d_model)`.
# Change the inputs at **every** position `>= t` by random noise (keep the ones before `t`), run the model on both inputs, and
# report whether any output at a position `< t` moved (beyond float rounding: use `torch.allclose` with `atol=1e-6`).
# Do not modify the caller's `x` in place. Return a Python `bool`.

# %% id="15" nbgrader={"grade": false, "grade_id": "depends_on_future", "locked": false, "schema_version": 3, "solution": true}
def depends_on_future(model, x: Tensor, t: int) -> bool:
    """Whether some output at a position ``< t`` changes when the inputs at positions ``>= t`` change.

    A causal (decoder) model must return False for every ``t`` (lesson 07, the causality proof).

    Args:
        model: callable ``(B, L, d_model) -> (B, L, d_model)``, sequence axis 1.
        x: ``(B, L, d_model)`` float input; not modified.
        t: a position in ``1 .. L - 1``: inputs ``t .. L-1`` are perturbed, outputs ``0 .. t-1`` compared.

    Returns:
        ``True`` if an output before ``t`` moved (the model sees the future), else ``False``.
    """
    ### BEGIN SOLUTION
    changed = x.clone()  # never touch the caller's tensor
    changed[:, t:] = changed[:, t:] + 1.0 + torch.randn_like(changed[:, t:])  # every future position moves
    with torch.no_grad():
        before, after = model(x), model(changed)  # (B, L, d_model) each
    return not torch.allclose(before[:, :t], after[:, :t], atol=1e-6)
    ### END SOLUTION


# %% id="16" nbgrader={"grade": true, "grade_id": "test_depends_on_future", "locked": true, "points": 3, "schema_version": 3, "solution": false}
torch.manual_seed(0)
blk = DecoderBlock(16, 2, 64, cross_attention=False, norm_first=True).eval()
x = torch.randn(2, 6, 16)  # (B, L, d_model)
x_copy = x.clone()
causal_model = lambda t: blk(t)                     # noqa: E731  (is_causal=True by default)
leaky_model = lambda t: blk(t, is_causal=False)      # noqa: E731  the same weights, no causal mask
answer = depends_on_future(causal_model, x, 3)
assert isinstance(answer, bool), f"return a Python bool (use bool(...)), got {type(answer).__name__}"
assert torch.equal(x, x_copy), "depends_on_future modified the caller's x in place: perturb a copy (x.clone())"
assert not answer, "a causal decoder block must not depend on the future: compare only the outputs at positions < t"
assert depends_on_future(leaky_model, x, 3), \
    ("the block without its causal mask sees the future: perturb the inputs at positions >= t with random noise "
     "(a LayerNorm erases a constant shift of all features) and compare the outputs < t")
keep = torch.ones(6, 6, dtype=torch.bool).tril()
keep[:, -1] = True  # every position may also peek at the LAST token
last_peek = lambda t: blk(t, is_causal=False, attn_mask=keep)  # noqa: E731
assert depends_on_future(last_peek, x, 2), \
    "this model peeks only at the last token: perturb EVERY position >= t, not just position t"
assert not depends_on_future(FeedForward(16, 32).eval(), x, 4), "a position-wise FFN mixes no positions"
assert not depends_on_future(causal_model, x, 5) and not depends_on_future(causal_model, x, 1), \
    "causal for every t: check the slices [:, t:] (perturbed) and [:, :t] (compared)"
print("depends_on_future: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: depends_on_future runs on fresh models built at grading time
# (causal ones, and leaky ones that peek one step ahead, at the last token, or everywhere),
# fresh inputs and positions t; its answers are compared with the grader's.
### END HIDDEN TESTS

# %% [markdown] id="17" nbgrader={"grade": false, "grade_id": "written_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 3 · Written answer

# %% [markdown] id="18" nbgrader={"grade": true, "grade_id": "why_no_causal_cross", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# **Which attentions need the causal mask?** In four or five sentences: why the decoder's self-attention needs a
# causal mask during training with teacher forcing, why cross-attention does not, and why a decoder-only model
# with the mask removed in **one** of its layers is no longer causal even if every other layer keeps it.
#
# ### BEGIN SOLUTION
# With teacher forcing the whole target sentence is fed in at once, so without the mask position i could read the
# token it is asked to predict (and later ones) and training would learn to copy instead of to predict; the causal
# mask makes training match generation, where future tokens do not exist yet. Cross-attention reads the encoder's
# output, which summarises the source sentence; the source is entirely known before decoding starts, so every
# decoder position may look at every real source token and only the source padding is hidden. The causality proof
# is an induction over layers: row i depends only on inputs up to i as long as every layer keeps that property. One
# unmasked layer lets row i mix in the rows j > i, and all later layers (even masked ones) carry that information
# forward, so the outputs depend on the future.
#
# **Rubric (2 points).** 1 point: teacher forcing feeds the whole target at once, so without the mask a position
# reads the token it must predict; cross-attention reads the source, which is fully known before decoding, so
# only source padding is masked. 1 point: causality holds by induction over the layers, and one unmasked layer
# mixes future rows into row i, which every later layer carries forward.
# ### END SOLUTION
