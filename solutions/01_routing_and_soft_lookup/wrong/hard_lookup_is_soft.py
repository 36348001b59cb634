# breaks: test_hard_lookup
# mistake: hard_lookup_is_soft
# %% cell: hard_lookup
def hard_lookup(query, keys, values):
    """Hard lookup."""
    return soft_lookup(query, keys, values)[0]
