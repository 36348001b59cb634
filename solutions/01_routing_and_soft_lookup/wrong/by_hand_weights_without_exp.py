# breaks: test_weights_by_hand
# mistake: normalize_without_exp
# %% cell: weights_by_hand
weights = {answer:normalize_without_exp}
