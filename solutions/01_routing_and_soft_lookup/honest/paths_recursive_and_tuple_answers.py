# path_lengths with a helper and integer powers; by-hand answers as a tuple and as torch.tensor.
# %% cell: path_lengths
def _layers(n, reach):
    m = 0
    while reach(m) < n:
        m += 1
    return m


def path_lengths(n: int, k: int) -> list[int]:
    """With a helper."""
    return [n - 1, _layers(n, lambda m: 1 + m * (k - 1)), _layers(n, lambda m: k ** m), 1]
# %% cell: paths_by_hand
paths = tuple({answer})
# %% cell: output_by_hand
output = torch.tensor({answer})
