"""The catalogue of named misconceptions.

Each entry names one concrete wrong way of computing something and says why it is
wrong. The wrong computation itself lives with the skill it applies to
(``Skill.mistakes[name](data)`` returns the answer that mistake produces for a
variant), so the checker can recompute every applicable mistake and recognise it.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Misconception:
    """A named mistake: ``title`` (what was done) and ``why`` (why it is wrong / what to do)."""

    name: str
    title: str
    why: str


_ENTRIES = [
    ("no_scale", "you left out the 1/√d_k scale",
     "Eq. 1 of Vaswani et al. divides QKᵀ by √d_k; without it the scores grow with d_k and the softmax saturates."),
    ("scale_by_d_model", "you scaled by √d_model instead of √d_k",
     "Each head compares d_k-dimensional queries and keys, so the variance of a score grows with d_k = d_model / n_heads, not d_model."),
    ("scale_by_dk", "you divided by d_k instead of √d_k",
     "A dot product of d_k unit-variance terms has variance d_k, so its standard deviation (what we divide by) is √d_k."),
    ("softmax_wrong_axis", "you took the softmax over the wrong axis",
     "Each query distributes its attention over the keys: normalise along the key axis so every row sums to 1."),
    ("normalize_without_exp", "you divided the scores by their sum without exponentiating",
     "Softmax is exp(s_j) / Σ exp(s_i); plain normalisation breaks with negative scores and is not what attention uses."),
    ("argmax_lookup", "you did a hard lookup (all weight on the best key)",
     "Soft lookup gives every key a weight softmax(score); the best match gets the most weight, not all of it."),
    ("mask_after_softmax", "you applied the mask after the softmax",
     "Zeroing weights after the softmax leaves rows that no longer sum to 1; set masked logits to −inf before the softmax."),
    ("inverted_mask", "your mask has the opposite polarity",
     "In attnlab (as in torch's scaled_dot_product_attention) True / 1 / 0-additive means 'may attend'."),
    ("causal_excludes_diagonal", "your causal mask excludes the diagonal",
     "A token may attend to itself: query i sees keys j <= i, diagonal included."),
    ("causal_kv_misaligned", "your causal mask is aligned to the start instead of the end",
     "With S > L (e.g. a KV cache) the queries are the last L positions: query i may see keys j <= i + (S − L)."),
    ("combine_with_or", "you combined the masks with OR",
     "A key may be attended only if every mask allows it: combine boolean masks with AND."),
    ("missing_causal_mask", "you left out the causal mask in decoder self-attention",
     "A decoder predicting token t must not see tokens after t, so its self-attention needs the causal mask (and padding)."),
    ("needless_causal_mask", "you added a causal mask where none belongs",
     "Encoder self-attention and cross-attention may look at every real (non-padding) source token; only decoder self-attention is causal."),
    ("qt_k", "you computed Qᵀ K instead of Q Kᵀ",
     "Scores compare each query row with each key row: Q (L, d_k) times Kᵀ (d_k, S) gives (L, S)."),
    ("av_transposed", "you multiplied Aᵀ V instead of A V",
     "Row i of the output mixes the values with query i's weights, i.e. row i of A: out = A V."),
    ("reshape_without_transpose", "you reshaped to heads without transposing",
     "Split d_model into (H, d_k) first, giving (B, L, H, d_k), then swap L and H; reshaping straight to (B, H, L, d_k) mixes tokens into heads."),
    ("heads_wrong_order", "you concatenated the heads in the wrong order",
     "merge_heads puts head 0's d_k columns first, then head 1's, and so on, the inverse of split_heads."),
    ("scores_without_head_axis", "you left out the head axis of the scores",
     "Every head computes its own score matrix: H of them, side by side, so the scores are (B, H, L, S), not (B, L, S)."),
    ("scores_keys_first", "you put the key axis before the query axis",
     "Scores are Q Kᵀ: one row per query, one column per key, so (B, H, L, S) with the key length S last."),
    ("scores_as_output", "you gave the shape of the heads' output, not of the scores",
     "Q Kᵀ compares queries with keys, giving an (L, S) table per head; only multiplying the weights by V brings back d_k."),
    ("keys_length_from_queries", "you used the query length for the keys",
     "In cross-attention the keys and values come from the other sequence: the key axis has its length S, not the query length L."),
    ("params_without_bias", "you counted the weights but not the biases",
     "Each nn.Linear(in, out) with bias has in·out + out parameters (and LayerNorm has a bias too)."),
    ("ffn_dff_equals_dmodel", "you used d_ff = d_model in the feed-forward network",
     "The FFN widens to d_ff (often 4·d_model) and back: d_model·d_ff + d_ff + d_ff·d_model + d_model."),
    ("forget_w_o", "you forgot the output projection W_O",
     "Multi-head attention has four projections: W_Q, W_K, W_V and W_O, which mixes the concatenated heads."),
    ("forget_layernorm_params", "you forgot the LayerNorm parameters",
     "Each LayerNorm(d_model) has a gain and a bias: 2·d_model parameters."),
    ("forget_position_embedding", "you forgot the learned position embedding",
     "GPT adds a learned (block_size, d_model) position table to the token embeddings."),
    ("forget_layers", "you counted a single layer",
     "Every one of the n_layers blocks has its own parameters / its own K and V: multiply by n_layers."),
    ("target_no_shift", "your targets are the inputs themselves",
     "The target at position t is the next token, ids[t + 1]: shift by one."),
    ("target_shift_two", "you shifted the targets by two",
     "The model predicts the very next token: the target at position t is ids[t + 1], not ids[t + 2]."),
    ("targets_block_plus_one", "you gave the targets one extra position",
     "Inputs and targets are both block_size long: y is x shifted by one within a window of block_size + 1 ids."),
    ("batch_shape_swapped", "you swapped the batch and time axes",
     "get_batch returns (batch_size, block_size): one row per sampled window."),
    ("top_k_plus_one", "you kept k + 1 tokens",
     "Top-k keeps exactly the k largest logits (everything below the k-th largest is removed)."),
    ("top_k_no_renorm", "you did not renormalise after top-k",
     "Removed tokens get logit −inf, so the softmax over the kept tokens sums to 1 again."),
    ("top_p_excludes_crossing", "you dropped the token that crosses p",
     "Top-p keeps the smallest set whose cumulative probability reaches p, so the token that crosses p is kept."),
    ("greedy_one_based", "you counted token ids from 1",
     "Token ids (and tensor indices) start at 0."),
    ("kv_forget_factor_two", "you forgot the factor 2 (K and V)",
     "A KV cache stores both keys and values for every layer, head and position."),
    ("scores_forget_heads", "you forgot the heads",
     "Every head has its own L × S score matrix: B · H · L · S entries."),
    ("flops_forget_factor_two", "you counted a multiply-add as one FLOP",
     "An (m×k)(k×n) matmul does m·n·k multiply-adds = 2·m·n·k floating-point operations."),
    ("log2_instead_of_ln", "you used log base 2",
     "Cross-entropy in PyTorch uses the natural log: a uniform model over V tokens has loss ln V."),
    ("pe_sin_cos_swapped", "you swapped sine and cosine",
     "PE(pos, 2i) = sin(pos / 10000^(2i/d_model)) and PE(pos, 2i+1) = cos(...): even columns use sine."),
    ("pe_pair_exponent", "you used the column index instead of the pair index in the exponent",
     "Columns 2i and 2i+1 share the frequency 1 / 10000^(2i/d_model); for an odd column c use c − 1 in the exponent."),
    ("inverse_permutation", "you gave the inverse permutation",
     "Permuted input row r is original row π[r], so permuted output row r equals original output row π[r]."),
    ("layernorm_unbiased_var", "you used the n − 1 (unbiased) variance",
     "LayerNorm divides by the population standard deviation √(mean((x − μ)²) + ε), i.e. by n, not n − 1."),
    ("layernorm_no_center", "you divided by the standard deviation without subtracting the mean",
     "LayerNorm computes (x − μ) / σ: centre first, then scale."),
    ("cross_shape_swapped", "you swapped the query and key lengths",
     "Cross-attention weights are (B, H, L, S): one row per decoder (query) position, one column per encoder (key) position."),
    ("path_counts_tokens", "you counted tokens instead of steps",
     "The path from token 1 to token n in an RNN takes n − 1 recurrent steps."),
    # --- autograder (specs) ---
    ("fixed_size_mask_buffer", "your mask is sliced from a fixed-size buffer",
     "Build the mask for the sizes you are given, e.g. torch.ones(L, S).tril(S - L); a 16 × 16 or 64 × 64 buffer breaks on longer sequences."),
    ("transpose_fixed_axes", "you transposed axes (1, 2) instead of the last two",
     "k.transpose(1, 2) is Kᵀ only for 3-D inputs; with a head axis (B, H, S, d_k) it swaps heads and keys. Use k.transpose(-2, -1)."),
    ("masks_combined_with_or", "you combined the masks with OR",
     "A key may be attended only if every mask allows it (no future token AND not padding): combine with &."),
    ("combine_drops_masks", "you combined only some of the masks",
     "Skip None entries but keep going: the result is the AND of every mask that is given."),
    ("mask_fill_not_neg_inf", "blocked positions got a finite value (0, or the mask added as a number)",
     "A blocked key must get weight exactly 0 after the softmax: set its logit to −inf (or a very negative number) before the softmax."),
    ("filter_fill_wrong_sign", "dropped logits were set to +inf or NaN instead of −inf",
     "A dropped token must get probability 0: −inf before the softmax. +inf would make it certain, NaN poisons the whole row."),
    ("top_k_drops_ties", "you kept exactly k tokens when several tie with the k-th",
     "Keep every logit >= the k-th largest value, ties included (as attnlab.nn.top_k_filter does); which of two equal logits to drop is arbitrary."),
    ("padding_left_side", "you treated the sequences as left-padded",
     "The course pads on the right: example b has real tokens at positions 0 .. lengths[b] − 1."),
    ("padding_width_from_lengths", "you took the padded length from the longest sequence instead of S",
     "The mask must be (B, S) for the S you are given, even when every sequence in the batch is shorter."),
    ("missing_broadcast_axes", "the axes of your tensors do not line up",
     "Add the axes explicitly (lengths[:, None], mask[:, None, None, :]) so that broadcasting pairs batch with batch and keys with keys."),
    ("softmax_global_sum", "you normalised by the sum of all entries instead of along dim",
     "Each slice along dim must sum to 1: e / e.sum(dim=dim, keepdim=True)."),
    ("assumes_batch_axis", "your code works only with a batch axis",
     "Use ... and negative axes (x.transpose(-2, -1), x[..., i]) so the same code handles (L, d) and (B, L, d)."),
]

MISCONCEPTIONS: dict[str, Misconception] = {name: Misconception(name, title, why) for name, title, why in _ENTRIES}


def get_misconception(name: str) -> Misconception:
    """Look up a misconception by name; KeyError lists the known names."""
    try:
        return MISCONCEPTIONS[name]
    except KeyError:
        raise KeyError(f"unknown misconception {name!r}; known: {', '.join(sorted(MISCONCEPTIONS))}") from None
