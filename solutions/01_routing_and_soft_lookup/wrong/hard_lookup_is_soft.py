# breaks: test_hard_lookup
# %% cell: hard_lookup
def hard_lookup(query, keys, values):
    """Hard lookup."""
    return soft_lookup(query, keys, values)[0]
