# breaks: test_causal_by_hand
# mistake: inverted_mask
# %% cell: causal_by_hand
causal = {answer:inverted_mask}
