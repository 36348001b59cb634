# breaks: test_path_lengths
# mistake: path_counts_tokens
# %% cell: path_lengths
def path_lengths(n: int, k: int) -> list[int]:
    """Path lengths."""
    dil = next(m for m in range(64) if k ** m >= n)
    return [n, -(-(n - 1) // (k - 1)), dil, 1]
