# breaks: test_perm_by_hand
# mistake: inverse_permutation
# %% cell: perm_by_hand
rows = {answer:inverse_permutation}
