# breaks: test_mask_by_hand
# mistake: inverted_mask
# %% cell: mask_by_hand
mask = {answer:inverted_mask}
