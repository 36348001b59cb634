# breaks: test_mha_forward
# mistake: heads_not_checked
# The given check in __init__ emptied: MultiHeadAttention(6, 4) builds a layer whose heads do not tile d_model,
# where the docstring promises ValueError.
# %% patch: mha_forward
# - raise ValueError(f"n_heads={n_heads} must divide d_model={d_model}")
# + pass  # any n_heads accepted
