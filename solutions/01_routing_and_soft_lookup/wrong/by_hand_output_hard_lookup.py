# breaks: test_output_by_hand
# mistake: argmax_lookup
# %% cell: output_by_hand
output = {answer:argmax_lookup}
