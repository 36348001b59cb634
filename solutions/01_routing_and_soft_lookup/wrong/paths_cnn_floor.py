# breaks: test_path_lengths
# mistake: cnn_floor_division
# %% cell: path_lengths
def path_lengths(n: int, k: int) -> list[int]:
    """Path lengths."""
    dil = next(m for m in range(64) if k ** m >= n)
    return [n - 1, (n - 1) // (k - 1), dil, 1]
