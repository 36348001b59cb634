# breaks: test_path_lengths
# mistake: dilated_counted_as_plain
# %% cell: path_lengths
def path_lengths(n: int, k: int) -> list[int]:
    """Path lengths."""
    return [n - 1, math.ceil((n - 1) / (k - 1)), math.ceil((n - 1) / (k - 1)), 1]
