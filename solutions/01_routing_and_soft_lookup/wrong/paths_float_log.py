# breaks: test_path_lengths
# mistake: dilated_float_log
# %% cell: path_lengths
def path_lengths(n: int, k: int) -> list[int]:
    """Path lengths."""
    return [n - 1, math.ceil((n - 1) / (k - 1)), math.ceil(math.log(n, k)), 1]
