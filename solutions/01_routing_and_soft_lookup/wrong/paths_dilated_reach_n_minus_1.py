# breaks: test_path_lengths
# mistake: dilated_reach_off_by_one
# Stops when k^m reaches n - 1 (the distance) although k^m counts the tokens seen: one layer short at n = k^m + 1.
# %% cell: path_lengths
def path_lengths(n, k):
    """Reach n - 1."""
    m, reach = 0, 1
    while reach < n - 1:
        reach *= k
        m += 1
    return [n - 1, -(-(n - 1) // (k - 1)), m, 1]
