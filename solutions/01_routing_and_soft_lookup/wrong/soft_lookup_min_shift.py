# breaks: test_soft_lookup
# %% patch: soft_lookup
# -     scores = scores - scores.max(dim=-1, keepdim=True).values  # stable exp
# +     scores = scores - scores.min(dim=-1, keepdim=True).values  # shifted by the minimum: overflows
