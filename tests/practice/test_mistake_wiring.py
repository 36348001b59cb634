"""Every catalogue mistake is wired to every skill where it can occur, and named there.

``APPLIES`` is the table: per by-hand skill, the catalogue entries (``attnlab.practice.misconceptions``) whose
slip can happen in that skill's problems. The tests prove that the table and the skills agree, that every
entry is in the catalogue, that mistakes shared across skills are wired to all of them (a mistake named in one
mask skill is named in every mask skill where it can be made), and that on the first problems learners get,
the answer each mistake gives (computed by the independent oracles of ``learner_probes``, not by the skill)
typed as asked is named with that mistake.
"""
import pytest

from attnlab.practice import MISCONCEPTIONS, format_answer, get_skill

from learner_probes import ORACLES, _names, _same

APPLIES = {
    "warmup_softmax": {"argmax_lookup", "normalize_without_exp", "softmax_no_normalise"},
    "warmup_scores_shape": {"cross_shape_swapped", "k_qt", "qt_k", "scores_as_output"},
    "soft_lookup_weights": {"argmax_lookup", "normalize_without_exp", "scaled_lookup", "softmax_no_normalise",
                            "softmax_wrong_axis"},
    "soft_lookup_output": {"argmax_lookup", "lookup_ignores_weights", "lookup_mixes_keys", "normalize_without_exp",
                           "scaled_lookup", "softmax_no_normalise", "softmax_wrong_axis"},
    "path_lengths": {"attention_no_shortcut", "cnn_floor_division", "cnn_reach_k", "path_counts_tokens"},
    "sdpa_scores": {"k_qt", "no_scale", "qt_k", "scale_by_dk"},
    "sdpa_softmax_row": {"argmax_lookup", "normalize_without_exp", "softmax_global_sum", "softmax_no_normalise",
                         "softmax_wrong_axis"},
    "sdpa_output": {"av_transposed", "av_v_transposed", "lookup_ignores_weights", "va_instead_of_av"},
    "sdpa_full": {"argmax_lookup", "av_transposed", "av_v_transposed", "k_qt", "lookup_ignores_weights", "no_scale",
                  "normalize_without_exp", "scale_by_dk", "softmax_no_normalise", "softmax_wrong_axis",
                  "va_instead_of_av"},
    "sdpa_scale": {"no_scale", "scale_by_d_model", "scale_by_dk", "scale_by_sqrt_heads"},
    "causal_mask_build": {"causal_excludes_diagonal", "causal_kv_misaligned", "causal_upper_triangle",
                          "inverted_mask", "missing_padding_mask", "rect_mask_square"},
    "rect_causal_mask": {"causal_excludes_diagonal", "causal_kv_misaligned", "causal_upper_triangle", "inverted_mask",
                         "rect_mask_square"},
    "padding_mask_build": {"inverted_mask", "length_off_by_one", "padding_at_start", "padding_width_from_lengths"},
    "combine_masks_build": {"causal_excludes_diagonal", "causal_upper_triangle", "combine_with_or", "inverted_mask",
                            "mask_padded_queries", "missing_causal_mask", "missing_padding_mask"},
    "masked_softmax": {"argmax_lookup", "causal_excludes_diagonal", "causal_upper_triangle", "mask_after_softmax",
                       "mask_fill_zero", "missing_causal_mask", "normalize_without_exp", "softmax_global_sum",
                       "softmax_no_normalise", "softmax_wrong_axis"},
    "pe_value": {"angle_in_degrees", "pe_halves_not_interleaved", "pe_pair_exponent", "pe_sin_cos_swapped"},
    "permutation_effect": {"index_from_one", "inverse_permutation", "permutation_invariant"},
    "mha_shape_trace": {"reshape_without_transpose", "split_forgets_heads", "split_keeps_dmodel"},
    "mha_scores_shape": {"cross_shape_swapped", "keys_length_from_queries", "reshape_without_transpose",
                         "scores_as_output", "scores_keys_first", "scores_without_head_axis"},
    "split_heads_values": {"heads_interleaved", "index_from_one", "reshape_without_transpose"},
    "merge_heads_values": {"heads_wrong_order", "merge_stacks_rows", "reshape_without_transpose"},
    "mha_param_count": {"count_bias_when_disabled", "forget_w_o", "one_bias_forgotten", "params_one_head",
                        "params_times_heads", "params_weights_times_heads", "params_without_bias"},
    "ffn_param_count": {"ffn_count_one_layer", "ffn_dff_equals_dmodel", "one_bias_forgotten", "params_without_bias"},
    "block_param_count": {"ffn_count_one_layer", "ffn_dff_equals_dmodel", "forget_layernorm_params", "forget_w_o",
                          "layernorm_gain_only", "one_bias_forgotten", "params_one_head", "params_times_heads",
                          "params_weights_times_heads", "params_without_bias"},
    "layernorm_by_hand": {"layernorm_divide_by_variance", "layernorm_no_center", "layernorm_unbiased_var"},
    "choose_mask": {"causal_excludes_diagonal", "causal_upper_triangle", "combine_with_or", "inverted_mask",
                    "keys_length_from_queries", "mask_padded_queries", "missing_causal_mask", "missing_padding_mask",
                    "needless_causal_mask"},
    "cross_attention_shapes": {"cross_shape_swapped", "keys_length_from_queries", "scores_as_output",
                               "scores_without_head_axis"},
    "next_token_targets": {"target_no_shift", "target_shift_two", "targets_block_plus_one"},
    "top_k_probs": {"softmax_no_normalise", "top_k_as_greedy", "top_k_linear_renorm", "top_k_no_renorm",
                    "top_k_plus_one", "top_k_smallest"},
    "top_p_tokens": {"index_from_one", "ranks_not_ids", "top_p_excludes_crossing", "top_p_one_past", "top_p_unsorted"},
    "greedy_next_token": {"greedy_argmin", "greedy_one_based", "greedy_value_not_id"},
    "perplexity": {"loss_summed", "ppl_arithmetic_mean", "ppl_base2_of_nats", "ppl_is_loss", "ppl_log10_then_exp",
                   "ppl_log2_then_exp", "ppl_reciprocal"},
    "beam_search_steps": {"beam_as_greedy", "beam_greedy_first_step", "beam_not_best_first", "beam_rank_last_step",
                          "beam_sum_probs"},
    "gpt_param_count": {"ffn_count_one_layer", "ffn_dff_equals_dmodel", "final_layernorm_missing",
                        "forget_layernorm_params", "forget_layers", "forget_position_embedding", "forget_w_o",
                        "head_bias_added", "layernorm_gain_only", "one_bias_forgotten", "params_one_head",
                        "params_times_heads", "params_weights_times_heads", "params_without_bias", "tied_head_bias",
                        "tied_head_counted_twice"},
    "uniform_loss": {"log10_instead_of_ln", "log2_instead_of_ln", "loss_is_probability", "loss_missing_minus"},
    "batch_shapes": {"batch_flattened", "batch_shape_swapped", "targets_block_plus_one"},
    "kv_cache_bytes": {"bytes_as_numbers", "bytes_fixed_float32", "forget_batch", "forget_layers",
                       "kv_forget_factor_two", "kv_times_heads"},
    "attention_memory": {"bytes_as_numbers", "bytes_fixed_float32", "forget_batch", "scores_forget_heads",
                         "scores_linear_in_length"},
    "attention_flops": {"flops_forget_factor_two", "flops_one_matmul", "forget_batch", "scores_forget_heads",
                        "scores_linear_in_length"},
}

#: Mistakes that can be made in every skill of a family: each must be wired to all of them.
FAMILIES = {
    "causal masks": (("causal_mask_build", "rect_causal_mask", "combine_masks_build", "choose_mask", "masked_softmax"),
                     ("causal_excludes_diagonal", "causal_upper_triangle")),
    "combined masks": (("combine_masks_build", "choose_mask"),
                       ("combine_with_or", "missing_causal_mask", "missing_padding_mask", "mask_padded_queries",
                        "inverted_mask")),
    "parameter counts with a feed-forward network": (("ffn_param_count", "block_param_count", "gpt_param_count"),
                                                     ("ffn_count_one_layer", "ffn_dff_equals_dmodel",
                                                      "one_bias_forgotten", "params_without_bias")),
    "parameter counts with attention": (("mha_param_count", "block_param_count", "gpt_param_count"),
                                        ("params_one_head", "params_times_heads", "forget_w_o",
                                         "params_without_bias")),
    "token ids": (("top_p_tokens", "permutation_effect"), ("index_from_one",)),
}


def test_the_table_is_the_skills_wiring():
    """Each by-hand skill recognises exactly the mistakes the table lists, each a catalogue entry."""
    for name, entries in APPLIES.items():
        assert set(get_skill(name).mistakes) == entries, name
        assert entries <= set(MISCONCEPTIONS), sorted(entries - set(MISCONCEPTIONS))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_mistake_shared_by_a_family_is_wired_to_each_member(family):
    skills, mistakes = FAMILIES[family]
    missing = [(s, m) for s in skills for m in mistakes if m not in APPLIES[s]]
    assert not missing, missing


CASES = [(skill, mistake) for skill, entries in APPLIES.items() for mistake in sorted(entries)]


@pytest.mark.parametrize(("skill_name", "mistake"), CASES)
def test_each_wired_mistake_is_named_on_the_skills_problems(skill_name, mistake):
    """The oracle's answer for ``mistake`` (every way it can be made), typed as asked, is refused and named
    with ``mistake`` on every one of the first 40 problems where it gives an answer other than the right one;
    there is at least one such problem."""
    skill = get_skill(skill_name)
    named = 0
    for seed in range(40):
        v = skill.variant(seed)
        o = ORACLES[skill_name](v.data)
        for key, value in o.mistakes.items():
            if value is None or mistake not in _names(key) or _same(value, o.right, skill.kind, skill.decimals):
                continue
            typed = format_answer(value.tolist() if hasattr(value, "tolist") else value, skill.kind, skill.decimals)
            fb = skill.check(v, typed)
            if not fb.readable:  # a coarse answer asked again: a rounding that cannot be told apart
                continue
            assert not fb.correct and mistake in fb.misconceptions, (seed, key, typed, fb.message)
            named += 1
        if named >= 4:
            break
    assert named >= 1, f"{mistake} never applies to the first 40 problems of {skill_name}"
