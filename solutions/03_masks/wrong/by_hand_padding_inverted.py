# breaks: test_padding_by_hand
# mistake: inverted_mask
# %% cell: padding_by_hand
padding = {answer:inverted_mask}
