# breaks: test_path_lengths
# mistake: dilated_float_log
# floor(log_k(n - 1)) + 1: right in exact arithmetic, but log(1000, 10) = 2.9999999999999996.
# %% cell: path_lengths
def path_lengths(n, k):
    """floor + 1."""
    return [n - 1, math.ceil((n - 1) / (k - 1)), int(math.log(n - 1, k)) + 1 if n > 2 else 1, 1]
