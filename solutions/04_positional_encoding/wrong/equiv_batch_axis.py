# breaks: test_is_permutation_equivariant
# mistake: equivariance_check_always_equal
# %% cell: is_permutation_equivariant
def is_permutation_equivariant(layer, x, perm, atol=1e-5):
    """Equivariance test."""
    with torch.no_grad():
        return bool(torch.allclose(layer(x[perm]), layer(x)[perm], atol=atol))
