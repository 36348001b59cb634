# breaks: test_path_lengths
# mistake: dilated_float_log
# %% cell: path_lengths
def path_lengths(n, k):
    """Float log2 ratio."""
    return [n - 1, -(-(n - 1) // (k - 1)), math.ceil(math.log2(n) / math.log2(k)), 1]
