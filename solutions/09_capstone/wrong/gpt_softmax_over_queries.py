# breaks: test_causal_self_attention
# mistake: softmax_wrong_axis
# %% patch: causal_self_attention
# - weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
# + weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-2)
