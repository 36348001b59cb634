# breaks: test_pe_by_hand
# mistake: pe_sin_cos_swapped
# %% cell: pe_by_hand
pe = {answer:pe_sin_cos_swapped}
