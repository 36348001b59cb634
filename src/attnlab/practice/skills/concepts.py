"""Conceptual items, one or more per lesson 01-10: multiple choice, multiple select and ordering.

Every wrong option is a named misconception (``attnlab.practice.misconceptions``), so a wrong choice
is diagnosed like a wrong number, and the same mastery rule applies (three in a row on fresh
problems, every kind of question of the skill met). A problem is a question (its *kind*) with its
options in a seeded random order.
"""
from __future__ import annotations

import string
from typing import Sequence

from ._common import Skill, register

LETTERS = string.ascii_uppercase

_HOW = {"choice": "Answer with one letter, e.g. B.",
        "choices": "Select **every** option that applies; answer with their letters, e.g. A, C.",
        "order": "Answer with the letters in order, e.g. C A B D."}


def _prompt(stem: str, options: Sequence[str], kind: str) -> str:
    lines = "\n".join(f"- **{LETTERS[i]}.** {text}" for i, text in enumerate(options))
    return f"{stem}\n\n{lines}\n\n{_HOW[kind]}"


def _build(questions, kind):
    """``build(rng)``: pick a question, shuffle its options. ``data["options"]`` = [[text, tag], ...] in the
    shown order; ``tag`` is the option's role (see each kind's solve/mistakes)."""
    def build(rng):
        q = rng.randrange(len(questions))
        label, stem, options = questions[q]
        order = rng.sample(range(len(options)), len(options))
        shown = [list(options[i]) for i in order]
        return _prompt(stem, [o[0] for o in shown], kind), {"question": label, "options": shown}
    return build


def _letter_of(d, tag):
    hits = [LETTERS[i] for i, (_, t) in enumerate(d["options"]) if t == tag]
    return hits[0] if hits else None


def choice_skill(name, lesson, title, questions, hints):
    """One right option per question (tag None); every other option's tag is the misconception it shows."""
    names = sorted({tag for _, _, options in questions for _, tag in options if tag})
    register(Skill(
        name=name, lesson=lesson, title=title, kind="choice", build=_build(questions, "choice"),
        solve=lambda d: _letter_of(d, None),
        mistakes={m: (lambda d, m=m: _letter_of(d, m)) for m in names},
        kinds=tuple(label for label, _, _ in questions), kind_of_data=lambda d: d["question"],
        hints=hints,
    ))


def _selected(d, flip=None):
    """Letters of the options to select (tag ``("yes", m)``), with option tagged ``m`` flipped."""
    out = []
    for i, (_, (right, m)) in enumerate(d["options"]):
        if (right == "yes") != (m == flip and flip is not None):
            out.append(LETTERS[i])
    return out


def choices_skill(name, lesson, title, questions, hints):
    """Several right options. Each option is tagged ``["yes" | "no", misconception]``: the misconception of
    leaving a "yes" option out, or of selecting a "no" option."""
    names = sorted({tag[1] for _, _, options in questions for _, tag in options})
    register(Skill(
        name=name, lesson=lesson, title=title, kind="choices", build=_build(questions, "choices"),
        solve=lambda d: _selected(d),
        mistakes={m: (lambda d, m=m: _selected(d, m) if any(t[1] == m for _, t in d["options"]) else None)
                  for m in names},
        kinds=tuple(label for label, _, _ in questions), kind_of_data=lambda d: d["question"],
        hints=hints,
    ))


def order_skill(name, lesson, title, questions, wrong_orders, hints, also_right=()):
    """Steps to put in order; each option's tag is its position in the right order. ``wrong_orders[m]`` is
    the order (positions) the misconception ``m`` produces; ``also_right``: other orders that compute the
    same thing."""
    def in_order(d, positions):
        where = {tag: LETTERS[i] for i, (_, tag) in enumerate(d["options"])}
        return [where[p] for p in positions]

    n = len(questions[0][2])
    register(Skill(
        name=name, lesson=lesson, title=title, kind="order", build=_build(questions, "order"),
        solve=lambda d: in_order(d, range(n)),
        also_right=lambda d: [in_order(d, o) for o in also_right],
        mistakes={m: (lambda d, o=o: in_order(d, o)) for m, o in wrong_orders.items()},
        kinds=tuple(label for label, _, _ in questions), kind_of_data=lambda d: d["question"],
        hints=hints,
    ))


# ============================================================================ 01 routing
choice_skill("concept_routing", "01", "Why attention routes information in one step", [
    ("path", "Why can one self-attention layer connect the first and the last token of a 1,000-token sequence, "
             "where an RNN needs 999 steps?", [
        ("Every query scores every key directly, so any two positions are one step apart.", None),
        ("Attention also walks through the tokens one by one, only with faster hardware.", "attention_sequential"),
        ("Attention is a convolution whose kernel is as wide as the sequence, applied in many layers.",
         "attention_is_convolution"),
        ("Attention carries a hidden state that accumulates the history, like an RNN.", "attention_has_state"),
        ("It cannot: one attention layer also needs 999 steps, one per token.", "attention_no_shortcut"),
    ]),
    ("output", "A soft lookup with one query gives the weights [0.7, 0.2, 0.1] over three keys. What is its output?", [
        ("0.7·v₁ + 0.2·v₂ + 0.1·v₃", None),
        ("v₁, the value of the best-matching key", "argmax_lookup"),
        ("(v₁ + v₂ + v₃) / 3", "lookup_ignores_weights"),
        ("0.7·k₁ + 0.2·k₂ + 0.1·k₃", "lookup_mixes_keys"),
    ]),
], hints=("Think about which pairs of positions one layer of each model connects.",
          "Attention: every query is compared with every key in one layer, and the output is the weighted sum of "
          "the values with the softmax weights."))

# ============================================================================ 02 scaled dot-product attention
choice_skill("concept_scale", "02", "Why scale the scores by 1/√d_k", [
    ("why", "Why are the scores Q Kᵀ divided by √d_k?", [
        ("A dot product of d_k unit-variance terms has variance d_k; dividing by √d_k keeps the scores at unit "
         "scale, so the softmax does not saturate.", None),
        ("So that the attention weights of each row sum to 1.", "scale_normalises"),
        ("To divide by √d_model, the width of the whole model.", "scale_by_d_model"),
        ("To divide by the variance d_k of the dot product.", "scale_by_dk"),
        ("Because the softmax only accepts scores between −1 and 1.", "softmax_needs_small_inputs"),
    ]),
    ("forget", "d_k grows from 64 to 1024 and the 1/√d_k scale is left out. What happens to the softmax of the scores?",
     [
         ("It saturates towards one-hot, and its gradient shrinks (about 5 times smaller at d_k = 1024 in lesson 02), so "
          "learning to move the attention slows down.", None),
         ("It becomes nearly uniform.", "big_scores_uniform"),
         ("Nothing: the softmax does not change when its inputs are scaled.", "softmax_scale_invariant"),
         ("Its rows no longer sum to 1.", "scale_normalises"),
     ]),
], hints=("Consider the spread of q · k when q and k have d_k independent unit-variance entries.",
          "Var(q · k) = d_k, so the scores' standard deviation is √d_k; large scores push the softmax towards "
          "one-hot. Dividing by √d_k brings them back to unit scale."))

# ============================================================================ 03 masks
order_skill("concept_mask_order", "03", "The order of the steps of masked attention", [
    ("steps", "Put the steps of masked (causal) scaled dot-product attention in order.", [
        ("compute the scores Q Kᵀ", 0),
        ("divide the scores by √d_k", 1),
        ("set the scores of blocked positions to −inf", 2),
        ("take the softmax of each row over the keys", 3),
        ("multiply the weights by V", 4),
    ]),
], wrong_orders={
    "mask_after_softmax": [0, 1, 3, 2, 4],
    "scale_after_softmax": [0, 2, 3, 1, 4],
    "values_before_softmax": [0, 1, 2, 4, 3],
}, also_right=[[0, 2, 1, 3, 4]],  # masking before scaling gives the same logits: −∞ / √d_k = −∞
    hints=("The mask must act on the logits, before they become probabilities.",
           "scores = Q Kᵀ → / √d_k → masked_fill(blocked, −inf) → softmax over keys → @ V (masking before "
           "the scaling gives the same logits, since −∞ / √d_k = −∞)."))

# ============================================================================ 04 positions
choice_skill("concept_positions", "04", "Why attention needs positions", [
    ("permute", "Unmasked self-attention **without positional encoding** is run on a sentence, then on the same "
                "tokens in another order. How do the outputs relate?", [
        ("They are the same vectors, permuted in the same way as the inputs (permutation equivariance).", None),
        ("They stay in the original order: attention is permutation-invariant.", "permutation_invariant"),
        ("They change in ways unrelated to the permutation, because attention reads the order.",
         "attention_order_aware"),
        ("Attention cannot run without positions.", "attention_needs_positions_to_run"),
        ("Every output becomes the same average of all the tokens.", "attention_averages_all"),
    ]),
    ("dog", "Without positional encoding and without a mask (unmasked, bidirectional self-attention), compare "
            "'dog bites man' with 'man bites dog'. What does self-attention output for the token 'dog'?", [
        ("Exactly the same vector in both sentences.", None),
        ("Different vectors, because 'dog' moved.", "attention_order_aware"),
        ("The output row at the same position, i.e. the vector of 'man'.", "permutation_invariant"),
        ("A zero vector, since attention needs positions to work.", "attention_needs_positions_to_run"),
    ]),
], hints=("Without positions, attention sees its input as a set of vectors.",
          "Attn(X[π]) = Attn(X)[π]: each token's output depends only on the set of tokens, not their order, and "
          "moves with its token."))

# ============================================================================ 05 heads
choice_skill("concept_heads", "05", "What multiple heads change", [
    ("params", "At fixed d_model, n_heads goes from 4 to 8. How does the parameter count of multi-head attention "
               "change?", [
        ("It does not change: the heads split d_model, so each head's d_k halves.", None),
        ("It doubles: every head has its own d_model × d_model projections.", "params_times_heads"),
        ("It halves, because each head is narrower.", "heads_halve_params"),
        ("It grows: every extra head brings its own biases for W_Q, W_K, W_V and W_O.", "heads_add_biases"),
        ("It doubles, because every head works on all d_model features.", "split_keeps_dmodel"),
    ]),
    ("dk", "MultiHeadAttention(d_model=512, n_heads=8): how wide are each head's queries and keys (d_k)?", [
        ("64 = d_model / n_heads", None),
        ("512 = d_model", "split_keeps_dmodel"),
        ("4096 = d_model · n_heads", "dk_times_heads"),
        ("8 = n_heads", "dk_is_heads"),
    ]),
], hints=("The heads share out the model width.", "d_k = d_model / n_heads; W_Q, W_K, W_V, W_O stay d_model × d_model."))

# ============================================================================ 06 the block
choice_skill("concept_pre_post_ln", "06", "Pre-LN and post-LN blocks", [
    ("where", "In a **pre-LN** Transformer block, where is LayerNorm applied?", [
        ("x + Sublayer(LN(x)): on the input of each sub-layer, inside the residual branch.", None),
        ("LN(x + Sublayer(x)): after the residual addition.", "post_ln_as_pre_ln"),
        ("Only once, at the very end of the model.", "ln_only_final"),
        ("Instead of the residual connection.", "ln_replaces_residual"),
        ("x + LN(Sublayer(x)): on the output of each sub-layer.", "ln_on_sublayer_output"),
    ]),
    ("why", "Why do deep GPT-style models prefer pre-LN to the original post-LN?", [
        ("The residual stream is an unnormalised identity path from input to output, so gradients flow through "
         "every layer and training is stable without a long learning-rate warm-up.", None),
        ("Pre-LN has fewer parameters.", "pre_ln_fewer_params"),
        ("Pre-LN makes the residual connections unnecessary.", "ln_replaces_residual"),
        ("Post-LN would normalise the output logits into probabilities.", "ln_as_softmax"),
    ]),
], hints=("Follow the residual path from the input to the output in both designs.",
          "Post-LN: x ← LN(x + F(x)), so every layer normalises the residual stream. Pre-LN: x ← x + F(LN(x)), the "
          "stream is a clean sum and a final LayerNorm comes at the end."))

# ============================================================================ 07 encoder-decoder
choice_skill("concept_family", "07", "Which Transformer family fits a task", [
    ("translate", "Translate an English sentence into German (the whole source is given, the target is "
                  "generated).", [
        ("Encoder-decoder: a bidirectional encoder reads the source, a causal decoder writes the target "
         "and cross-attends to it.", None),
        ("Encoder-only: one bidirectional stack reads the English sentence and writes out the German one.",
         "encoder_for_generation"),
        ("No attention at all: a bag of words is enough for translation.", "order_irrelevant"),
        ("Two encoders, one per language, with no causal mask anywhere.", "missing_causal_mask"),
    ]),
    ("classify", "Label each token of a given sentence with its part of speech (noun, verb, ...), using "
                 "the words on both sides.", [
        ("Encoder-only: bidirectional self-attention over the whole given input.", None),
        ("Decoder-only with a causal mask: each token only sees the words before it.", "needless_causal_mask"),
        ("Encoder-decoder that generates the labels one by one while hiding the future words.", "needless_causal_mask_decoder"),
        ("No attention at all: a bag of words is enough.", "order_irrelevant"),
    ]),
    ("continue", "Continue a story from a prompt, one token at a time.", [
        ("Decoder-only: causal self-attention, trained to predict the next token.", None),
        ("Encoder-only: bidirectional attention over the story so far, every token seeing every other.",
         "encoder_for_generation"),
        ("Decoder-only without a causal mask, so each token sees the whole story.", "missing_causal_mask"),
        ("No attention at all: a bag of words is enough.", "order_irrelevant"),
    ]),
], hints=("Ask: is there a separate input to read in full? Is an output generated left to right?",
          "Understanding a given input: encoder (bidirectional). Generating: decoder (causal). Generating from a "
          "separate input: encoder-decoder with cross-attention."))

_CAUSAL_OPTIONS = [
    ("encoder self-attention", ["no", "encoder_causal"]),
    ("decoder self-attention in training (teacher forcing, all positions at once)", ["yes", "missing_causal_mask"]),
    ("cross-attention from the decoder to the encoder output", ["no", "needless_causal_mask"]),
    ("GPT self-attention in training", ["yes", "missing_causal_mask_gpt"]),
]
choices_skill("concept_causal_where", "07", "Which attentions need the causal mask", [
    ("training, no cache", "Which of these attentions need the **causal** mask?", _CAUSAL_OPTIONS),
    ("with a KV cache", "Which of these attentions need the **causal** mask (padding aside)?", _CAUSAL_OPTIONS + [
        ("decoder self-attention when generating one token with a KV cache (the only query is the newest "
         "position)", ["no", "causal_with_one_query"]),
    ]),
], hints=("A causal mask stops a position from seeing later positions of the same sequence it is predicting.",
          "Only self-attention over the sequence being predicted (decoder, GPT) is causal, and only when several "
          "query positions are computed at once. Encoder and cross-attention see every real source token."))

# ============================================================================ 08 training and decoding
choice_skill("concept_exposure_bias", "08", "Teacher forcing and exposure bias", [
    ("bias", "What is **exposure bias** in a model trained with teacher forcing?", [
        ("In training it always conditions on the true previous tokens; when generating it conditions on its "
         "own, possibly wrong, outputs, which it never saw in training.", None),
        ("The model sees future tokens during training.", "exposure_is_future_leak"),
        ("The model over-weights the frequent tokens of the training set.", "exposure_is_class_imbalance"),
        ("Teacher forcing is slow because training must generate one token at a time.", "teacher_forcing_sequential"),
        ("The bias vectors of the output layer overfit the training data.", "exposure_is_bias_term"),
    ]),
    ("input", "In teacher-forced training of a decoder, what is its input at position t?", [
        ("The true token at position t; the target at t is the true token t + 1.", None),
        ("The model's own prediction from position t − 1.", "teacher_forcing_feeds_predictions"),
        ("The true token t + 1, which is also its target.", "target_no_shift"),
        ("Nothing: the decoder is fed a blank and predicts the whole sequence at once.", "teacher_forcing_blank_input"),
    ]),
], hints=("Compare what the model is fed in training with what it is fed when it generates.",
          "Teacher forcing feeds the ground truth prefix (inputs = targets shifted by one), all positions in "
          "parallel; at generation time the prefix is the model's own samples."))

# ============================================================================ 09 the capstone GPT
choice_skill("concept_gpt", "09", "Reading a GPT: tying and the first loss", [
    ("tying", "GPT ties its output layer to the token embedding. How many parameters does the output layer add?", [
        ("None: it reuses the (V, d_model) token-embedding matrix.", None),
        ("V · d_model: a second copy of the embedding.", "tied_head_counted_twice"),
        ("d_model · d_model: a projection back to the model width.", "tied_head_square"),
        ("V · d_model, halved because the weights are shared.", "tied_head_half"),
        ("V · d_model + V: the shared matrix counted again, plus a bias.", "tied_head_bias"),
    ]),
    ("loss", "Why is the training loss of a freshly initialised GPT close to ln V?", [
        ("Its logits are nearly equal, so every token gets probability ≈ 1/V, and −ln(1/V) = ln V.", None),
        ("The loss is log₂ of the vocabulary size by definition.", "log2_instead_of_ln"),
        ("It predicts each token with probability 1/V, and that probability is the loss.", "loss_is_probability"),
        ("An untrained model has loss 0; ln V appears only after training.", "untrained_loss_zero"),
    ]),
], hints=("Weight tying shares a matrix; a uniform prediction gives each of V tokens the same probability.",
          "Tied output: logits = h Eᵀ with the embedding E, no new parameters. Cross-entropy of a uniform "
          "prediction: −ln(1/V) = ln V."))

# ============================================================================ 10 costs
_KV_OPTIONS = [
    ("the keys of the earlier positions", ["yes", "kv_values_only"]),
    ("the values of the earlier positions", ["yes", "kv_keys_only"]),
    ("the attention weights computed at the previous step", ["no", "kv_reuses_weights"]),
    ("the query of the new token", ["no", "kv_caches_queries"]),
]
choices_skill("concept_kv_cache", "10", "What a KV cache can and cannot reuse", [
    ("four options", "A decoder generates token t + 1 with a KV cache. Which of these does it **reuse** from earlier "
              "steps instead of recomputing?", _KV_OPTIONS),
    ("five options", "Generating the next token with a KV cache: which of these come **from the cache**?", _KV_OPTIONS + [
        ("the key and value of the new token", ["no", "kv_new_token_cached"]),
    ]),
], hints=("Ask what changes when one more token arrives, and what stays the same for the earlier positions.",
          "Earlier positions' keys and values do not depend on later tokens (causal), so they are cached; the new "
          "token's query, key and value and its attention weights over all keys are computed fresh."))
