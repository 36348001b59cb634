# breaks: test_soft_lookup
# mistake: softmax_no_max_shift
# %% patch: soft_lookup
# -     scores = scores - scores.max(dim=-1, keepdim=True).values  # stable exp
# +     pass  # exp of the raw scores: overflows for scores above about 88
