# breaks: test_feed_forward
# mistake: activation_not_checked
# The given check in __init__ emptied: an unknown activation such as "tanh" builds a layer that silently uses GELU,
# where the docstring promises ValueError.
# %% patch: feed_forward
# - raise ValueError(f"activation must be 'relu' or 'gelu', got {activation!r}")
# + pass  # any activation accepted
