# path_lengths with a float logarithm made safe by an epsilon (correct for every n the course uses).
# %% cell: path_lengths
def path_lengths(n, k):
    """log with an epsilon."""
    return [n - 1, math.ceil((n - 1) / (k - 1)), max(0, math.ceil(math.log(n, k) - 1e-9)), 1]
