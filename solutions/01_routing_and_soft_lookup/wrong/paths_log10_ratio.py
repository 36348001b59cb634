# breaks: test_path_lengths
# mistake: dilated_float_log
# %% cell: path_lengths
def path_lengths(n, k):
    """Float log10 ratio, numpy."""
    return [n - 1, math.ceil((n - 1) / (k - 1)), int(np.ceil(np.log10(n) / np.log10(k))), 1]
