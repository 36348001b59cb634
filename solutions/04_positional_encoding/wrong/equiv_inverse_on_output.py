# breaks: test_is_permutation_equivariant
# mistake: inverse_permutation
# %% cell: is_permutation_equivariant
def is_permutation_equivariant(layer, x, perm, atol=1e-5):
    """Equivariance test."""
    with torch.no_grad():
        return bool(torch.allclose(layer(x[:, perm]), layer(x)[:, [list(perm).index(i) for i in range(len(perm))]], atol=atol))
